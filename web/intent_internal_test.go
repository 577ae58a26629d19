package web

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

func TestBackTo(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	ev := &tidings.Event{ID: "E1", Project: "my-saas"}
	for in, want := range map[string]string{
		"/p/my-saas":                  "/p/my-saas#ev-E1",
		"/p/my-saas/c/payments":       "/p/my-saas/c/payments#ev-E1",
		"/p/my-saas?q=deploy#x":       "/p/my-saas?q=deploy#ev-E1",
		"/p/my-saas/events/E1":        "/p/my-saas/events/E1",
		"/p/my-saas-evil":             "/p/my-saas/events/E1",
		"/p/other":                    "/p/my-saas/events/E1",
		"/settings/api":               "/p/my-saas/events/E1",
		"":                            "/p/my-saas/events/E1",
		"//evil.example/p/my-saas":    "/p/my-saas/events/E1",
		"/\\evil.example/p/my-saas":   "/p/my-saas/events/E1",
		"https://evil.example/p/x":    "/p/my-saas/events/E1",
		"/p/my-saas\\..\\..\\evil":    "/p/my-saas/events/E1",
		"/p/my-saas/\n/evil.example":  "/p/my-saas/events/E1",
		"javascript:alert(1)/p/my-sa": "/p/my-saas/events/E1",
	} {
		if got := backTo(in, ev); got != want {
			t.Errorf("backTo(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzBackTo: whatever back= holds, a card's form returns to a page of the event's
// project on this server.
func FuzzBackTo(f *testing.F) {
	for _, s := range []string{"/p/my-saas", "//evil", "/\\evil", "/p/my-saas/../../evil", "/p/my-saas\\evil", "/p/my-saas/%2f%2fevil", "/p/my-saas?x=//evil"} {
		f.Add(s)
	}
	ev := &tidings.Event{ID: "E1", Project: "my-saas"}
	f.Fuzz(func(t *testing.T, back string) {
		got := backTo(back, ev)
		u, err := browserResolve(got)
		if err != nil {
			t.Fatalf("backTo(%q) = %q does not parse", back, got)
		}
		if u.Host != "tidings.example" || u.Scheme != "https" || u.Path != "/p/my-saas" && !strings.HasPrefix(u.Path, "/p/my-saas/") {
			t.Fatalf("backTo(%q) = %q sends the browser to %s", back, got, u)
		}
	})
}
