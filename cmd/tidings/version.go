package main

import (
	"runtime/debug"
	"strings"
)

// commit and buildDate are stamped in by scripts/image.sh
// (-ldflags "-X main.commit=… -X main.buildDate=…"); empty in a plain go build, which
// falls back to what Go recorded from the checkout (vcs.revision, vcs.time).
var commit, buildDate string

// version is the module's version, the commit it was built from and when, when known,
// and the Go version: "(devel) 1a2b3c4d5e6f 2026-11-28T08:00:00Z go1.26.8".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{}
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, when, modified := commit, buildDate, ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if rev == "" {
				rev = s.Value
			}
		case "vcs.time":
			if when == "" {
				when = s.Value
			}
		case "vcs.modified":
			if s.Value == "true" && commit == "" {
				modified = "+dirty"
			}
		}
	}
	parts := []string{v}
	if hash, dirty := strings.CutSuffix(rev, "-dirty"); hash != "" { // image.sh marks a dirty tree so
		if dirty {
			modified = "+dirty"
		}
		parts = append(parts, hash[:min(12, len(hash))]+modified)
	}
	if when != "" {
		parts = append(parts, when)
	}
	if info.GoVersion != "" {
		parts = append(parts, info.GoVersion)
	}
	return strings.Join(parts, " ")
}
