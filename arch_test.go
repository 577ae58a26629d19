package tidings_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tidings-dev/tidings"

// deps lists the packages of this module that pkg depends on (tests excluded).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+pkg).Output()
	if err != nil {
		t.Skipf("go list is not available: %v", err)
	}
	var ours []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) && p != module+pkg {
			ours = append(ours, strings.TrimPrefix(p, module))
		}
	}
	return ours
}

// TestLayers guards the shape of the house: the domain in the middle imports nothing of
// ours; the HTTP surfaces reach storage only through the domain's interfaces; backends
// know nothing of HTTP or of each other.
func TestLayers(t *testing.T) {
	if got := deps(t, ""); len(got) != 0 {
		t.Errorf("the domain package imports %v", got)
	}
	forbidden := map[string][]string{
		"/api":       {"/sqlite", "/postgres", "/storetest", "/cmd"},
		"/sqlite":    {"/api", "/web", "/postgres", "/inmem", "/cmd", "/deliver"},
		"/storetest": {"/sqlite", "/postgres", "/api"},
		"/inmem":     {"/sqlite", "/api"},
		"/deliver":   {"/sqlite", "/postgres", "/api", "/web", "/cmd"},
	}
	for pkg, bad := range forbidden {
		for _, d := range deps(t, pkg) {
			for _, b := range bad {
				if d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
		}
	}
}
