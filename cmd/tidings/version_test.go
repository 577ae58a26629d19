package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestVersionStamped: what scripts/image.sh stamps in (-X main.commit, main.buildDate)
// is what `tidings version` prints, in place of what Go recorded from the checkout.
func TestVersionStamped(t *testing.T) {
	testbackend.Once(t)
	defer func(c, d string) { commit, buildDate = c, d }(commit, buildDate)
	for _, tc := range []struct{ commit, date, want string }{
		{"0123456789abcdef0123456789abcdef01234567", "2026-11-28T08:00:00Z", " 0123456789ab 2026-11-28T08:00:00Z go1."},
		{"0123456789abcdef0123456789abcdef01234567-dirty", "2026-11-28T08:00:00Z", " 0123456789ab+dirty 2026-11-28T08:00:00Z go1."},
	} {
		commit, buildDate = tc.commit, tc.date
		var out, errs bytes.Buffer
		if code := run(context.Background(), []string{"version"}, nil, &out, &errs); code != 0 || !strings.HasPrefix(out.String(), "tidings ") || !strings.Contains(out.String(), tc.want) {
			t.Errorf("commit %q: exit %d, %q; want %q in it", tc.commit, code, out.String(), tc.want)
		}
	}
}

// TestRootsBuiltIn: the binary carries the Mozilla CA roots (roots.go), which it uses
// where the system has none, as in the FROM scratch image.
func TestRootsBuiltIn(t *testing.T) {
	testbackend.Once(t)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in this binary")
	}
	for _, dep := range info.Deps {
		if dep.Path == "golang.org/x/crypto/x509roots/fallback" {
			return
		}
	}
	t.Fatal("golang.org/x/crypto/x509roots/fallback is not linked in: the image would have no CA roots")
}
