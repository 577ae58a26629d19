package hooks

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// now is the tests' clock.
var now = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func testdata(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deliver runs a source's Verify then Map as the API does, and checks every event as
// the API would.
func deliver(t *testing.T, h *tidings.Hook, header http.Header, body []byte) (*Delivery, error) {
	t.Helper()
	s := For(h.Source)
	if s == nil {
		t.Fatalf("no source %q", h.Source)
	}
	r := &Request{Header: header, Body: body, Now: now}
	if err := s.Verify(h, r); err != nil {
		return nil, err
	}
	d, err := s.Map(h, r)
	if err != nil {
		return nil, err
	}
	for i, e := range d.Events {
		var p tidings.Problems
		e.Check(&p, now)
		if err := p.Err(); err != nil {
			t.Fatalf("event %d (%q) fails NewEvent.Check: %v", i, e.Event, err)
		}
		if e.Project != h.Project || e.Channel != h.Channel {
			t.Fatalf("event %d is in %s/%s", i, e.Project, e.Channel)
		}
	}
	return d, nil
}

// refusal asserts err is a *Refusal with status.
func refusal(t *testing.T, err error, status int) {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) || r.Status != status {
		t.Fatalf("got %v, want a %d refusal", err, status)
	}
}

func tag(e *tidings.NewEvent, key string) string {
	tg, _ := e.Tags.Get(key)
	return tg.Value
}
