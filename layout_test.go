package tidings_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLayoutDocumented: the layout table of docs/development.md names every package of
// the module, and nothing that is not one.
func TestLayoutDocumented(t *testing.T) {
	b, err := os.ReadFile("docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "<!-- layout -->")
	table, _, ok := strings.Cut(table, "<!-- /layout -->")
	if !ok {
		t.Fatal("docs/development.md has no <!-- layout --> table")
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)`").FindAllStringSubmatch(table, -1) {
		p := "/" + strings.TrimPrefix(m[1], "/")
		documented = append(documented, p)
	}
	for path := range packages(t) {
		if !slices.Contains(documented, path) {
			t.Errorf("package %s is missing from the layout in docs/development.md", path)
		}
	}
	all := packages(t)
	for _, p := range documented {
		if _, ok := all[p]; !ok {
			t.Errorf("docs/development.md lists %s, which is not a package", p)
		}
	}
}
