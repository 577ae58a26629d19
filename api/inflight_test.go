package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/inmem"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestInFlightIsCapped: a flood of distinct keys never grows the in-flight set past its
// cap; a key it holds is refused until released.
func TestInFlightIsCapped(t *testing.T) {
	t.Parallel()
	f := inFlight{max: 100}
	var releases []func()
	for i := range 100 {
		release, ok := f.hold(flightKey{1, fmt.Sprint(i)})
		if !ok {
			t.Fatal("refused a free key")
		}
		releases = append(releases, release)
	}
	for i := range 100000 {
		release, ok := f.hold(flightKey{int64(i), "flood"})
		if !ok {
			t.Fatal("a key past the cap is refused instead of run untracked")
		}
		release()
	}
	if n := f.len(); n != 100 {
		t.Fatalf("%d keys held, cap 100", n)
	}
	if _, ok := f.hold(flightKey{1, "7"}); ok {
		t.Fatal("a held key was given twice")
	}
	releases[7]()
	if _, ok := f.hold(flightKey{1, "7"}); !ok {
		t.Fatal("a released key is still held")
	}
}

// TestUntrackedKeysApplyOnce: with no room to track keys in memory (as on another
// instance), requests racing with one key still store one event: the store's claim
// refuses the others, which answer with the winner's answer.
func TestUntrackedKeysApplyOnce(t *testing.T) {
	t.Parallel()
	store := testbackend.New(t)
	s := New(Config{Store: store, Broker: inmem.NewBroker(0), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.inFlight.max = 0
	mux := http.NewServeMux()
	s.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	fx := testbackend.Seed(t, store, "acme")
	token := fx.Token(t, tidings.AccessFull, "", "")
	const racers = 12
	var wg sync.WaitGroup
	bodies := make([]string, racers)
	replays := make([]bool, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", srv.URL+"/v1/log", strings.NewReader(`{"project":"my-saas","channel":"payments","event":"race"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "race")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 {
				t.Errorf("%d %s", res.StatusCode, b)
			}
			bodies[i], replays[i] = string(b), res.Header.Get("Idempotent-Replayed") == "true"
		}()
	}
	wg.Wait()
	first := 0
	for i := range racers {
		if !replays[i] {
			first++
		}
		if bodies[i] != bodies[0] {
			t.Fatalf("answers differ:\n%s\n%s", bodies[i], bodies[0])
		}
	}
	n, err := store.CountEvents(context.Background(), fx.Account.ID, "my-saas", "")
	if err != nil || n != 1 || first != 1 {
		t.Fatalf("%d events, %d first answers (%v); want 1 and 1", n, first, err)
	}
}

// TestSplitArray: a batch's events are sliced as encoding/json reads them, whatever
// their spacing and content (strings with brackets, commas and escapes, nested values).
func TestSplitArray(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`[]`, nil},
		{` [ ] `, nil},
		{`[{"a":1}]`, []string{`{"a":1}`}},
		{"[ {\"a\":\"],[}\\\"\"} ,\n\t{\"b\":[1,{\"c\":[]}]}, 3, \"x\", null ]", []string{`{"a":"],[}\""}`, `{"b":[1,{"c":[]}]}`, `3`, `"x"`, `null`}},
	} {
		var got []string
		for _, e := range splitArray([]byte(strings.TrimSpace(c.in))) {
			got = append(got, string(e))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}
