package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// streamEvent is one event read from a stream: its SSE id (NDJSON has none) and data.
type streamEvent struct {
	id    string
	event tidings.EventJSON
}

// liveStream is a client of GET /v1/events/stream.
type liveStream struct {
	t      *testing.T
	res    *http.Response
	cancel context.CancelFunc
	events chan streamEvent
	done   chan struct{} // closed when the stream ends
}

// openStream follows path with token; header pairs follow. It fails the test unless
// the answer is 200.
func (e *env) openStream(t *testing.T, path, token string, header ...string) *liveStream {
	t.Helper()
	res, cancel := e.streamRequest(t, path, token, header...)
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		cancel()
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	ls := &liveStream{t: t, res: res, cancel: cancel, events: make(chan streamEvent, 10000), done: make(chan struct{})}
	ndjson := strings.HasPrefix(res.Header.Get("Content-Type"), "application/x-ndjson")
	go func() {
		defer close(ls.done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var id string
		for sc.Scan() {
			line := sc.Text()
			var data string
			switch {
			case ndjson && line != "":
				data = line
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
				continue
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			default:
				continue
			}
			var ev tidings.EventJSON
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Errorf("a streamed event %q: %v", data, err)
				return
			}
			ls.events <- streamEvent{id: id, event: ev}
			id = ""
		}
	}()
	t.Cleanup(ls.close)
	return ls
}

func (e *env) streamRequest(t *testing.T, path, token string, header ...string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return res, cancel
}

func (ls *liveStream) close() {
	ls.cancel()
	ls.res.Body.Close()
	<-ls.done
}

// next waits for the stream's next event.
func (ls *liveStream) next() streamEvent {
	ls.t.Helper()
	select {
	case ev := <-ls.events:
		return ev
	case <-ls.done:
		select {
		case ev := <-ls.events:
			return ev
		default:
		}
		ls.t.Fatal("the stream ended")
	case <-time.After(30 * time.Second):
		ls.t.Fatal("no event on the stream")
	}
	return streamEvent{}
}

// none checks that no event is waiting.
func (ls *liveStream) none() {
	ls.t.Helper()
	select {
	case ev := <-ls.events:
		ls.t.Fatalf("unexpected event %+v", ev.event)
	default:
	}
}

// ended waits for the stream to end.
func (ls *liveStream) ended() {
	ls.t.Helper()
	select {
	case <-ls.done:
	case <-time.After(30 * time.Second):
		ls.t.Fatal("the stream did not end")
	}
}

// publishNamed logs an event named name with extra members and returns its ID.
func (e *env) publishNamed(t *testing.T, name string, extra map[string]any) string {
	t.Helper()
	m := map[string]any{"event": name}
	for k, v := range extra {
		m[k] = v
	}
	r := e.in(t).do("POST", "/v1/log", e.full, merge(goodLog, m))
	if r.status != http.StatusOK {
		t.Fatalf("publishing %s: %d %s", name, r.status, r.body)
	}
	return decode[tidings.EventJSON](t, r).ID
}

// TestStreamSSE: a stream sends new events as SSE (id: and the /v1/log answer as
// data:), filtered by channel, tag and q; the event's ID is the SSE id.
func TestStreamSSE(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	_, err := e.store.CreateChannel(ctx, e.acme.ID, "my-saas", "signups")
	e.must(err)

	all := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)
	if ct := all.res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	if got := all.res.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Fatalf("X-Accel-Buffering %q", got)
	}
	filtered := e.openStream(t, "/v1/events/stream?project=my-saas&channel=payments&tag=plan:pro&q=upgraded", e.full)

	e.publishNamed(t, "Signed up", map[string]any{"channel": "signups", "tags": map[string]any{"plan": "pro"}})
	e.publishNamed(t, "Upgraded", map[string]any{"tags": map[string]any{"plan": "free"}})
	e.publishNamed(t, "Downgraded", map[string]any{"tags": map[string]any{"plan": "pro"}})
	want := e.publishNamed(t, "Upgraded", map[string]any{"tags": map[string]any{"plan": "pro"}, "description": "to pro"})

	for _, name := range []string{"Signed up", "Upgraded", "Downgraded", "Upgraded"} {
		if got := all.next(); got.event.Event != name || got.id != got.event.ID || got.id == "" {
			t.Fatalf("got %+v, want %s", got, name)
		}
	}
	got := filtered.next()
	if got.id != want || got.event.Description != "to pro" || got.event.Channel != "payments" {
		t.Fatalf("filtered stream got %+v, want %s", got, want)
	}
	e.publishNamed(t, "Last", nil) // a marker: once the full stream has it, the filtered one had its chance
	all.next()
	filtered.none()
}

// TestStreamNDJSON: Accept: application/x-ndjson gives one JSON line per event.
func TestStreamNDJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ls := e.openStream(t, "/v1/events/stream?project=my-saas", e.full, "Accept", "application/x-ndjson")
	if ct := ls.res.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("Content-Type %q", ct)
	}
	id := e.publishNamed(t, "Paid", map[string]any{"tags": map[string]any{"amount": "12.50"}})
	got := ls.next()
	if got.event.ID != id || got.event.Event != "Paid" {
		t.Fatalf("got %+v", got.event)
	}
}

// TestStreamTokenLimits: a full token is needed, and its project and channel limits
// apply; an unknown project is a 404.
func TestStreamTokenLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	_, err := e.store.CreateProject(context.Background(), e.acme.ID, "other")
	e.must(err)
	other := e.token(e.acme, tidings.AccessFull, "other", "")
	payments := e.token(e.acme, tidings.AccessFull, "my-saas", "payments")
	for _, c := range []struct {
		path, token string
		status      int
	}{
		{"/v1/events/stream?project=my-saas", "", http.StatusUnauthorized},
		{"/v1/events/stream?project=my-saas", public, http.StatusForbidden},
		{"/v1/events/stream?project=my-saas", other, http.StatusForbidden},
		{"/v1/events/stream?project=my-saas", payments, http.StatusForbidden},
		{"/v1/events/stream?project=my-saas&channel=signups", payments, http.StatusForbidden},
		{"/v1/events/stream?project=nope", e.full, http.StatusNotFound},
		{"/v1/events/stream", e.full, http.StatusBadRequest},
		{"/v1/events/stream?project=my-saas&tag=nocolon", e.full, http.StatusBadRequest},
	} {
		res, cancel := e.streamRequest(t, c.path, c.token)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if res.StatusCode != c.status {
			t.Errorf("GET %s: %d %s, want %d", c.path, res.StatusCode, b, c.status)
		}
	}
	ls := e.openStream(t, "/v1/events/stream?project=my-saas&channel=payments", payments)
	id := e.publishNamed(t, "Paid", nil)
	if got := ls.next(); got.id != id {
		t.Fatalf("got %+v", got)
	}
}

// TestStreamResume: Last-Event-ID (header or last_event_id) resumes after that event:
// what was missed, then what is new, with no gap and nothing twice.
func TestStreamResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	first := e.openStream(t, "/v1/events/stream?project=my-saas&tag=keep:yes", e.full)
	e.publishNamed(t, "One", map[string]any{"tags": map[string]any{"keep": "yes"}})
	one := first.next()
	first.close()

	var missed []string
	for i := range 150 { // more than one page of the store
		keep := "yes"
		if i%3 == 2 {
			keep = "no"
		}
		id := e.publishNamed(t, fmt.Sprintf("Missed %d", i), map[string]any{"tags": map[string]any{"keep": keep}})
		if keep == "yes" {
			missed = append(missed, id)
		}
	}
	for _, how := range []string{"header", "query"} {
		t.Run(how, func(t *testing.T) {
			var ls *liveStream
			if how == "header" {
				ls = e.openStream(t, "/v1/events/stream?project=my-saas&tag=keep:yes", e.full, "Last-Event-ID", one.id)
			} else {
				ls = e.openStream(t, "/v1/events/stream?project=my-saas&tag=keep:yes&last_event_id="+one.id, e.full,
					"Accept", "application/x-ndjson")
			}
			for i, want := range missed {
				if got := ls.next(); got.event.ID != want {
					t.Fatalf("missed event %d: got %s, want %s", i, got.event.ID, want)
				}
			}
			live := e.in(t).publishNamed(t, "Live "+how, map[string]any{"tags": map[string]any{"keep": "yes"}})
			if got := ls.next(); got.event.ID != live {
				t.Fatalf("after catching up: got %s (%s), want %s", got.event.ID, got.event.Event, live)
			}
			ls.none()
			missed = append(missed, live) // the next resume catches it up too
		})
	}
}

// TestStreamResumeDuringPublishing: a stream that resumes while events keep coming
// gets each of them exactly once, in the store's catch-up then the live notices.
func TestStreamResumeDuringPublishing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	seen := map[string]int{}
	first := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)
	e.publishNamed(t, "Start", nil)
	last := first.next().id
	seen[last]++
	first.close()

	const n = 60
	published := make(chan string, n)
	go func() {
		defer close(published)
		for i := range n {
			r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": fmt.Sprintf("E%d", i)}))
			if r.status != http.StatusOK {
				t.Errorf("publish: %d %s", r.status, r.body)
				return
			}
			published <- decode[tidings.EventJSON](t, r).ID
			if i == n/3 {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
	<-published // some before the reconnect, the rest during and after it
	<-published
	ls := e.openStream(t, "/v1/events/stream?project=my-saas", e.full, "Last-Event-ID", last)
	for i := 0; i < n; i++ {
		seen[ls.next().id]++
	}
	for range published { // wait for the publisher
	}
	e.publishNamed(t, "End", nil)
	seen[ls.next().id]++
	if len(seen) != n+2 {
		t.Fatalf("saw %d distinct events, want %d", len(seen), n+2)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("event %s seen %d times", id, k)
		}
	}
}

// TestStreamsPerToken: the 11th stream of a token closes its oldest; another token's
// are not touched.
func TestStreamsPerToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	other := e.token(e.acme, tidings.AccessFull, "", "")
	theirs := e.openStream(t, "/v1/events/stream?project=my-saas", other)
	var mine []*liveStream
	for range 10 {
		mine = append(mine, e.openStream(t, "/v1/events/stream?project=my-saas", e.full))
	}
	id := e.publishNamed(t, "Ten", nil)
	for _, ls := range mine {
		if got := ls.next(); got.id != id {
			t.Fatalf("got %+v", got)
		}
	}
	eleventh := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)
	mine[0].ended()
	id = e.publishNamed(t, "Eleven", nil)
	for _, ls := range append(mine[1:], eleventh, theirs) {
		if got := ls.next(); got.event.Event != "Eleven" && got.event.Event != "Ten" {
			t.Fatalf("got %+v", got)
		} else if got.event.Event == "Ten" { // theirs had not read it yet
			if got = ls.next(); got.id != id {
				t.Fatalf("got %+v", got)
			}
		}
	}
}

// TestStreamUnknownTarget: a stream of a project or channel that does not exist is
// refused before it starts, as GET /v1/events refuses it (404), never a 200 that
// follows nothing.
func TestStreamUnknownTarget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for q, code := range map[string]string{
		"project=my-saas&channel=typo":   tidings.EChannelNotFound,
		"project=my-saas&q=channel:typo": tidings.EChannelNotFound,
		"project=typo":                   tidings.EProjectNotFound,
		"project=typo&channel=payments":  tidings.EProjectNotFound,
	} {
		res, cancel := e.streamRequest(t, "/v1/events/stream?"+q, e.full)
		var b []byte
		if res.StatusCode != http.StatusOK { // a stream would not end: its body is not read
			b, _ = io.ReadAll(io.LimitReader(res.Body, 64<<10))
		}
		res.Body.Close()
		cancel()
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"code":"`+code+`"`) {
			t.Errorf("%s: %d %q %.300s, want 404 %s", q, res.StatusCode, res.Header.Get("Content-Type"), b, code)
		}
	}
	// The channel exists: the stream opens.
	e.openStream(t, "/v1/events/stream?project=my-saas&channel=payments", e.full).close()
}

// TestStreamRevokedToken: a revoked token's streams end (within a second: the wait is
// generous, not asserted).
func TestStreamRevokedToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	tok := e.token(e.acme, tidings.AccessFull, "", "")
	a := e.openStream(t, "/v1/events/stream?project=my-saas", tok)
	b := e.openStream(t, "/v1/events/stream?project=my-saas", tok, "Accept", "application/x-ndjson")
	kept := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)
	id, _, _ := tidings.ParseTokenSecret(tok)
	e.must(e.store.RevokeToken(context.Background(), e.acme.ID, id, time.Now()))
	a.ended()
	b.ended()
	e.publishNamed(t, "Still here", nil)
	if got := kept.next(); got.event.Event != "Still here" {
		t.Fatalf("got %+v", got)
	}
}

// staleTokens is the real store but for FindToken, which keeps answering each token
// as it first read it: another instance's token cache does so for up to
// tokencache.TTL, and longer while its notice of a revocation is lost. A stream's
// revocation check must not depend on it.
type staleTokens struct {
	tidings.Store
	mu   sync.Mutex
	seen map[string]tidings.Token
}

func (s *staleTokens) FindToken(ctx context.Context, id string) (*tidings.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.seen[id]; ok {
		return &t, nil
	}
	t, err := s.Store.FindToken(ctx, id)
	if err == nil {
		s.seen[id] = *t
	}
	return t, err
}

// TestStreamRevokedTokenStaleCache: a revoked token's streams end although the token
// lookups still see it active: the streams read their tokens from the database itself
// (ActiveTokens), so the contract's second holds whatever a cache keeps.
func TestStreamRevokedTokenStaleCache(t *testing.T) {
	t.Parallel()
	stale := &staleTokens{seen: map[string]tidings.Token{}}
	e := newEnvWith(t, noLimits, nil, func(s tidings.Store) tidings.Store { stale.Store = s; return stale })
	tok := e.token(e.acme, tidings.AccessFull, "", "")
	revoked := e.openStream(t, "/v1/events/stream?project=my-saas", tok)
	kept := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)
	id, _, _ := tidings.ParseTokenSecret(tok)
	e.must(e.store.RevokeToken(context.Background(), e.acme.ID, id, time.Now()))
	if got, err := stale.FindToken(context.Background(), id); err != nil || got.Revoked() {
		t.Fatalf("the stale lookup sees the revocation (%v): this test would prove nothing", err)
	}
	revoked.ended()
	e.publishNamed(t, "Still here", nil)
	if got := kept.next(); got.event.Event != "Still here" {
		t.Fatalf("got %+v", got)
	}
}

// TestStreamSlowReader: a client that stops reading is dropped, never waited for:
// publishing goes on, and the stream ends.
func TestStreamSlowReader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	res, cancel := e.streamRequest(t, "/v1/events/stream?project=my-saas", e.full)
	defer cancel()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%d", res.StatusCode)
	}
	fast := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)
	// Far more than the socket buffers and the broker's queue hold, unread.
	big := strings.Repeat("x", 9000)
	const batches, per = 40, 100
	for b := range batches {
		var events []string
		for i := range per {
			events = append(events, merge(goodLog, map[string]any{"event": fmt.Sprintf("E%d-%d", b, i), "description": big}))
		}
		r := e.do("POST", "/v1/log/batch", e.full, `{"events":[`+strings.Join(events, ",")+`]}`)
		if r.status != http.StatusOK {
			t.Fatalf("batch: %d %.200s", r.status, r.body)
		}
		for range per {
			fast.next()
		}
	}
	// The slow stream ended: reading it now reaches its end, short of everything.
	got := 0
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "id: ") {
			got++
		}
	}
	if got >= batches*per {
		t.Fatalf("the slow reader got all %d events", got)
	}
}
