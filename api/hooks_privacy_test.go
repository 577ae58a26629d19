package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

// logBuffer is a log the server's goroutines and the test share.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestHookRefusalQuotesNoBody: a json hook whose template fails on a body holding a
// card number refuses it (400, naming the field and the template's place) with the
// number in neither the answer, the hook's delivery log nor the server's log.
func TestHookRefusalQuotesNoBody(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newRealHookEnv(t, noLimits, func(c *api.Config) { c.Logger = log })
	p, hash := tidings.NewHookPath()
	h := &tidings.Hook{PathHash: hash, AccountID: e.acme.ID, Project: "my-saas", Channel: "payments", Source: tidings.HookJSON,
		Name: "cards", CreatedAt: time.Now(), Template: &tidings.HookTemplate{Event: "Payment",
			Description: `{{if gt (num .card.number) 1.0}}big{{end}}`, Tags: `{"last4": {{json .card.last4}}}`}}
	if err := e.hooks.CreateHook(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	const card = "4242-4242-4242-4242"
	for _, body := range []string{
		`{"card":{"number":"` + card + `","last4":"4242"}}`,   // num of a string
		`{"card":"` + card + `"}`,                             // .card.number of a string
		`{"card":{"number":12,"last4":{"x":"` + card + `"}}}`, // a tag that is an object
	} {
		r := e.deliver(t, "/hooks/"+p, strings.NewReader(body), "Idempotency-Key", "pay-1")
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "template.") {
			t.Fatalf("%s: %d %s", body, r.status, r.body)
		}
		if strings.Contains(r.body, card) {
			t.Errorf("the answer quotes the body: %s", r.body)
		}
	}
	attempts := e.attempts(t, h)
	if len(attempts) != 3 {
		t.Fatalf("%d attempts logged", len(attempts))
	}
	for _, a := range attempts {
		if a.Status != 400 || a.Error == "" || strings.Contains(a.Error, card) {
			t.Errorf("attempt %+v", a)
		}
	}
	if !strings.Contains(logs.String(), "a hook's delivery refused") {
		t.Fatalf("the refusals are not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), card) || strings.Contains(logs.String(), p) {
		t.Errorf("the server's log quotes the body or the hook's path:\n%s", logs.String())
	}
}

// TestHookWrongMethodQuotesNoPath: another method on a hook's path is a 405 whose
// detail names the route, not the path, which is the hook's secret.
func TestHookWrongMethodQuotesNoPath(t *testing.T) {
	t.Parallel()
	e := newRealHookEnv(t, noLimits)
	path, _ := e.hook(t, tidings.HookGitHub, "gh-secret")
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		r := e.do(method, path, "", "")
		e.want(r, http.StatusMethodNotAllowed, tidings.EMethodNotAllowed)
		if strings.Contains(r.body, strings.TrimPrefix(path, "/hooks/")) || !strings.Contains(r.problem.Detail, "/hooks/{id}") ||
			r.header.Get("Allow") != "POST" {
			t.Errorf("%s %s: Allow %q, %s", method, path, r.header.Get("Allow"), r.body)
		}
	}
}
