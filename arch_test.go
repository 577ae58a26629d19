package tidings_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tidings-dev/tidings"

// pkg is one package of this module as `go list` sees it.
type pkg struct {
	name string   // "main" for a command
	deps []string // the packages of this module it depends on, directly or not (tests excluded)
}

// packages lists every package of the module with its dependencies.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}} {{join .Deps \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v (the layering cannot be checked without it)", err)
	}
	all := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := pkg{name: f[1]}
		for _, d := range f[2:] {
			if strings.HasPrefix(d, module+"/") || d == module {
				p.deps = append(p.deps, rel(d))
			}
		}
		all[rel(f[0])] = p
	}
	return all
}

func rel(path string) string {
	if r := strings.TrimPrefix(path, module); r != "" {
		return r
	}
	return "/"
}

// stores are the implementations of the domain's Store; only commands (main packages)
// and the tests' backend picker choose one.
var stores = []string{"/sqlite", "/postgres"}

// rules says, for every package of the module, which of ours it must not depend on
// ("*": none but the domain). A new package needs its line: the test fails for a
// package the table does not know.
var rules = map[string][]string{
	"/":                     {"*"}, // the domain imports nothing of ours
	"/api":                  {"/sqlite", "/postgres", "/inmem", "/deliver", "/web", "/cmd", "/storetest", "/internal/testbackend"},
	"/web":                  {"/sqlite", "/postgres", "/inmem", "/deliver", "/api", "/cmd", "/storetest", "/internal/testbackend"},
	"/deliver":              {"/sqlite", "/postgres", "/inmem", "/api", "/web", "/cmd", "/storetest"},
	"/sqlite":               {"/postgres", "/api", "/web", "/deliver", "/inmem", "/cmd", "/storetest"},
	"/postgres":             {"/sqlite", "/api", "/web", "/deliver", "/inmem", "/cmd", "/storetest"},
	"/storetest":            {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/cmd"},
	"/inmem":                {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/cmd"},
	"/export":               {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/cmd"},
	"/charts":               {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/inmem", "/cmd", "/storetest"},
	"/hooks":                {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/inmem", "/cmd", "/storetest"},
	"/mail":                 {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/inmem", "/cmd", "/storetest"},
	"/internal/markdown":    {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/inmem", "/cmd", "/storetest"},
	"/internal/smtptest":    {"*"},
	"/browser":              {"*"}, // embedded scripts and their handler: nothing of ours
	"/client":               {"*"}, // the Go client stands alone but for the domain: users import it
	"/docs":                 {"*"},
	"/cmd/tidings":          {"/storetest", "/internal/testbackend"},
	"/bench/seed":           {"/storetest", "/internal/testbackend"},
	"/bench/load":           {"/sqlite", "/postgres", "/storetest"},
	"/internal/testbackend": {"/api", "/web", "/deliver", "/cmd"},
	"/internal/attack":      {"*"},
	"/internal/changemark":  {"*"},
	"/internal/clientip":    {"*"},
	"/internal/connlimit":   {"*"},
	"/internal/dirlock":     {"*"},
	"/internal/groupcommit": {"*"},
	"/internal/logbuf":      {"*"},
	"/internal/metrics":     {"*"},
	"/internal/netguard":    {"*"},
	"/internal/password":    {"*"},
	"/internal/pgtest":      {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/cmd"},
	"/internal/pushtest":    {"*"},
	"/internal/ratelimit":   {"*"},
	"/internal/testenv":     {"*"},
	"/internal/testsummary": {"*"},
	"/internal/tokencache":  {"/sqlite", "/postgres", "/api", "/web", "/deliver", "/cmd"},
}

// TestLayers guards the shape of the house: the domain in the middle imports nothing of
// ours; the HTTP surfaces reach storage and delivery only through the domain's
// interfaces; the stores know nothing of HTTP or of each other; only commands pick a
// store. Every package has its rule.
func TestLayers(t *testing.T) {
	all := packages(t)
	for path, p := range all {
		bad, ok := rules[path]
		if !ok {
			t.Errorf("%s has no rule in arch_test.go: say what it may not depend on", path)
			continue
		}
		for _, d := range p.deps {
			if d == "/" {
				continue // the domain is for everyone
			}
			for _, b := range bad {
				if b == "*" || d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s depends on %s", path, d)
				}
			}
		}
		if p.name != "main" && path != "/internal/testbackend" {
			for _, s := range stores {
				if slices.Contains(p.deps, s) {
					t.Errorf("%s picks the store %s: only commands do", path, s)
				}
			}
		}
	}
	for path := range rules {
		if _, ok := all[path]; !ok {
			t.Errorf("arch_test.go has a rule for %s, which no longer exists", path)
		}
	}
}
