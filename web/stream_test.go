package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/web"
)

// openStream opens a feed stream of my-saas as browser c; the messages arrive on the channel.
func (c *client) openStream(query string, header ...string) (<-chan map[string]string, *http.Response) {
	c.e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.e.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", c.e.srv.URL+"/p/my-saas/stream"+query, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.c.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		return nil, res
	}
	return sseMessages(bufio.NewReader(res.Body)), res
}

// waitEnd reads a stream until it ends and returns the data of its "end" message.
func waitEnd(t *testing.T, msgs <-chan map[string]string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return "(closed without a word)"
			}
			if m["event"] == "end" {
				return m["data"]
			}
		case <-deadline:
			t.Fatalf("the stream did not end within %v", within)
		}
	}
}

// member creates a member of the account and signs them in.
func (e *env) member(account *tidings.Account, email string) (*client, *tidings.User) {
	e.t.Helper()
	return e.user(account, email, tidings.UserMember)
}

// user creates a user of the account with a role and signs them in.
func (e *env) user(account *tidings.Account, email, role string) (*client, *tidings.User) {
	e.t.Helper()
	hash, err := cheapPasswords.Hash("member pass")
	if err != nil {
		e.t.Fatal(err)
	}
	u := &tidings.User{AccountID: account.ID, Email: email, PasswordHash: hash, Role: role}
	if err := e.store.CreateUser(context.Background(), u); err != nil {
		e.t.Fatal(err)
	}
	c := e.client()
	c.post("/login", "email", email, "password", "member pass").landsSignedIn(e.t)
	return c, u
}

// TestStreamLimits: a session's eleventh stream closes its oldest, which is told why
// (the page then stops reconnecting); an account's streams are capped.
func TestStreamLimits(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{MaxStreamsPerSession: 3, MaxStreamsPerAccount: 5})
	c := e.owner()
	acme := e.account("acme")
	var streams []<-chan map[string]string
	for i := 0; i < 3; i++ {
		s, _ := c.openStream("")
		streams = append(streams, s)
	}
	fourth, _ := c.openStream("")
	if why := waitEnd(t, streams[0], 30*time.Second); why != "too-many" {
		t.Fatalf("the oldest stream ended with %q", why)
	}
	e.publish(acme, tidings.NewEvent{Event: "after"})
	for i, s := range append(streams[1:], fourth) {
		if got := readSSE(t, s, 1, 30*time.Second); len(got) != 1 || !strings.Contains(got[0]["data"], "after") {
			t.Fatalf("stream %d got %v", i+1, got)
		}
	}

	// The account holds 5: a member's two fill it, a third is refused.
	m, _ := e.member(acme, "bob@example.com")
	m.openStream("")
	m.openStream("")
	if _, res := m.openStream(""); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("sixth stream of the account: %d", res.StatusCode)
	}
}

// TestStreamsEndWithTheirSession: sign-out, a password change (for the other
// sessions), a member's removal, and a session deleted behind the server's back (by
// another instance) each end the open streams within a second.
func TestStreamsEndWithTheirSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	acme := e.account("acme")

	signedOut, _ := owner.openStream("")
	other := e.client()
	other.post("/login", "email", "ada@example.com", "password", "correct horse").redirects(t, "/")
	kept, _ := owner.openStream("")
	otherStream, _ := other.openStream("")

	// A password change ends the other session's stream, not this one's.
	owner.post("/settings/password", "current", "correct horse", "new", "new horse battery", "new2", "new horse battery").want(t, 200)
	if why := waitEnd(t, otherStream, 30*time.Second); why != "signed-out" {
		t.Fatalf("password change: the other session's stream ended with %q", why)
	}
	e.publish(acme, tidings.NewEvent{Event: "still here"})
	if got := readSSE(t, kept, 1, 30*time.Second); len(got) != 1 {
		t.Fatalf("the changing session's own stream ended: %v", got)
	}

	owner.post("/logout").redirects(t, "/login")
	for _, s := range []<-chan map[string]string{signedOut, kept} {
		if why := waitEnd(t, s, 30*time.Second); why != "signed-out" {
			t.Fatalf("sign-out: ended with %q", why)
		}
	}

	owner = e.client()
	owner.post("/login", "email", "ada@example.com", "password", "new horse battery").redirects(t, "/p/my-saas") // the project of the event "still here"
	m, bob := e.member(acme, "bob@example.com")
	removed, _ := m.openStream("")
	owner.post(fmt.Sprintf("/settings/members/%d/remove", bob.ID)).redirects(t, "/settings/members")
	if why := waitEnd(t, removed, 30*time.Second); why != "signed-out" {
		t.Fatalf("member removal: ended with %q", why)
	}

	// Another instance (or the CLI) ends a session: the periodic check notices.
	elsewhere, _ := owner.openStream("")
	for _, c := range owner.jar.Cookies(mustURL(e.srv.URL)) {
		if c.Name == "tidings_session" {
			if err := e.store.DeleteSession(context.Background(), tidings.HashSecret(c.Value)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if why := waitEnd(t, elsewhere, 30*time.Second); why != "signed-out" {
		t.Fatalf("session deleted in the store: ended with %q", why)
	}
}

// TestCatchUpReplaysEverything: a reconnect after 700 missed events gets all 700 (the
// audit found it stopped at 500); after more than 5,000 it is told to reload.
func TestCatchUpReplaysEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	seen := e.publish(acme, tidings.NewEvent{Event: "seen"})
	want := publishMany(t, e, acme, 700)
	msgs, _ := c.openStream("", "Last-Event-ID", seen.ID)
	got := map[string]int{}
	for _, m := range readSSE(t, msgs, 700, 30*time.Second) {
		got[m["id"]]++
	}
	for _, id := range want {
		if got[id] != 1 {
			t.Fatalf("event %s replayed %d times; %d of 700 arrived", id, got[id], len(got))
		}
	}

	publishMany(t, e, acme, 5001-700)
	msgs, _ = c.openStream("", "Last-Event-ID", seen.ID)
	first := readSSE(t, msgs, 1, 30*time.Second)
	if len(first) != 1 || first[0]["event"] != "reload" {
		t.Fatalf("after 5,001 missed events the stream sent %v", first)
	}
}

// publishMany publishes n events as concurrent API requests do: their batches commit
// together and reach the broker in no particular order.
func publishMany(t *testing.T, e *env, account *tidings.Account, n int) []string {
	t.Helper()
	evs := make([]tidings.NewEvent, n)
	for i := range evs {
		evs[i] = tidings.NewEvent{Event: fmt.Sprint("event ", i)}
	}
	f := &testbackend.Fixture{Store: e.store, Account: account, Published: func(ev *tidings.Event) {
		e.broker.Publish(tidings.Notice{AccountID: account.ID, Event: ev})
	}}
	var ids []string
	for _, ev := range f.Publish(t, evs...) {
		ids = append(ids, ev.ID)
	}
	return ids
}

// TestLiveStreamGetsEveryEventOnce: with many publishers at once, an open stream
// receives every event exactly once (the audit's stream skipped events whose ID was
// below the last one sent: 10–41% of them under concurrent load). Every open stream
// of the same feed shares one rendering of each card.
func TestLiveStreamGetsEveryEventOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	var streams []<-chan map[string]string
	for i := 0; i < 5; i++ {
		s, _ := c.openStream("")
		streams = append(streams, s)
	}
	time.Sleep(100 * time.Millisecond)
	before := web.CardRenders(e.dash)
	ids := publishMany(t, e, acme, 400)
	for i, s := range streams {
		got := map[string]int{}
		for _, m := range readSSE(t, s, 400, 30*time.Second) {
			got[m["id"]]++
		}
		for _, id := range ids {
			if got[id] != 1 {
				t.Fatalf("stream %d: event %s arrived %d times (%d of 400 arrived)", i, id, got[id], len(got))
			}
		}
	}
	if renders := web.CardRenders(e.dash) - before; renders != 400 {
		t.Fatalf("400 events on 5 streams of one feed took %d card renders, want 400", renders)
	}
}

// TestSlowStreamDropped: a browser that stops reading is dropped; publishing never
// waits for it.
func TestSlowStreamDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/p/my-saas/stream", nil)
	res, err := c.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close() // not read until the end
	// Small cards: the socket's buffers fill, then the stream's queue, before its byte
	// budget runs out.
	evs := make([]tidings.NewEvent, 1500)
	for i := range evs {
		evs[i] = tidings.NewEvent{Event: fmt.Sprint("small ", i), Description: "a description of a line or two"}
	}
	stored := (&testbackend.Fixture{Store: e.store, Account: acme}).Publish(t, evs...)
	// The broker hands every notice over without waiting for the stream that does not
	// read: were it to wait, this would not finish.
	published := make(chan struct{})
	go func() {
		defer close(published)
		for _, ev := range stored {
			e.broker.Publish(tidings.Notice{AccountID: acme.ID, Event: ev})
		}
	}()
	select {
	case <-published:
	case <-time.After(time.Minute):
		t.Fatal("publishing is held up by a stream that does not read")
	}
	// The server ended the stream: what it had written reads to its end.
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, res.Body)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("the dropped stream ended with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stream that did not read was not dropped")
	}
	// A fresh one is accepted and works.
	fresh, _ := c.openStream("")
	e.publish(acme, tidings.NewEvent{Event: "after"})
	if got := readSSE(t, fresh, 1, 30*time.Second); len(got) != 1 {
		t.Fatalf("fresh stream got %v", got)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestStreamBudget: a burst of large events is more than a person can read and more
// than the server may spend on one tab: past its byte budget the stream is told it fell
// behind and ends (the page offers the newest events), while publishing goes on.
func TestStreamBudget(t *testing.T) {
	t.Parallel()
	// The clock stands still: the budget does not refill, however slowly a loaded
	// machine publishes.
	now := time.Now()
	e := newEnvWith(t, web.Config{Now: func() time.Time { return now }})
	c := e.owner()
	acme := e.account("acme")
	msgs, _ := c.openStream("")
	big := strings.Repeat("a description of some size\n", 400) // ~11 KB a card
	evs := make([]tidings.NewEvent, 200)                       // ~2 MB: over the 1 MiB burst
	for i := range evs {
		evs[i] = tidings.NewEvent{Event: fmt.Sprint("big ", i), Description: big}
	}
	(&testbackend.Fixture{Store: e.store, Account: acme, Published: func(ev *tidings.Event) {
		e.broker.Publish(tidings.Notice{AccountID: acme.ID, Event: ev})
	}}).Publish(t, evs...)
	if why := waitEnd(t, msgs, 30*time.Second); why != "behind" {
		t.Fatalf("ended with %q", why)
	}
}

// TestGroupStream: a group's live journey gets its members' new events only.
func TestGroupStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	for _, u := range []string{"ada", "bob"} {
		if _, err := e.store.Group(t.Context(), acme.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "acme-inc", UserID: u}); err != nil {
			t.Fatal(err)
		}
	}
	s, res := c.openStream("?group=acme-inc")
	if s == nil {
		t.Fatalf("the group's stream: %s", res.Status)
	}
	time.Sleep(100 * time.Millisecond)
	want := map[string]bool{}
	for _, u := range []string{"ada", "eve", "bob", ""} {
		ev := e.publish(acme, tidings.NewEvent{Event: "Step of " + u, UserID: u})
		if u == "ada" || u == "bob" {
			want[ev.ID] = true
		}
	}
	e.publish(acme, tidings.NewEvent{Event: "Last", UserID: "ada"})
	msgs := readSSE(t, s, 3, 30*time.Second)
	for _, m := range msgs[:2] {
		if !want[m["id"]] {
			t.Fatalf("the group's stream sent %s, not a member's event", m["data"])
		}
	}
	if strings.Contains(msgs[2]["data"], "Step of") {
		t.Fatalf("the group's stream sent %s", msgs[2]["data"])
	}
}

// stuckStore is a store whose insight history reads block until released, ignoring
// their deadline: the worst a slow database can do to the live views.
type stuckStore struct {
	tidings.Store
	stuck   chan struct{} // closed when the first read blocks
	once    sync.Once
	release chan struct{}
}

func (s *stuckStore) InsightHistory(ctx context.Context, accountID int64, project, title string, n int) ([]tidings.InsightPoint, error) {
	s.once.Do(func() { close(s.stuck) })
	<-s.release
	// It then answers, as a slow read does, however long it took.
	return s.Store.InsightHistory(context.WithoutCancel(ctx), accountID, project, title, n)
}

// TestStuckStoreNeverDelaysTheFeed: while the store read behind an insight card hangs,
// the same account's feed streams get every event at once, none is dropped, and sign-out
// still ends a stream; the card arrives when the read returns.
func TestStuckStoreNeverDelaysTheFeed(t *testing.T) {
	t.Parallel()
	store := &stuckStore{Store: testbackend.New(t), stuck: make(chan struct{}), release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(store.release)
		}
	}
	defer release()
	e := newEnvOn(t, web.Config{}, store)
	c := e.owner()
	acme := e.account("acme")
	board, _ := c.openStream("?insights=1")
	feed, _ := c.openStream("")
	other := e.client()
	other.post("/login", "email", "ada@example.com", "password", "correct horse").redirects(t, "/")
	otherFeed, _ := other.openStream("")

	in, err := e.store.ApplyInsight(t.Context(), acme.ID, &tidings.InsightChange{Project: "my-saas", Title: "Signups",
		Value: "7", ValueKind: tidings.KindNumber})
	if err != nil {
		t.Fatal(err)
	}
	e.broker.Publish(tidings.Notice{AccountID: acme.ID, Insight: in})
	select {
	case <-store.stuck:
	case <-time.After(30 * time.Second):
		t.Fatal("the insight card was never rendered")
	}

	// More notices than the account's subscription holds (256) while the read hangs.
	const n = 300
	go func() {
		for i := 0; i < n; i++ {
			e.publish(acme, tidings.NewEvent{Event: fmt.Sprintf("event %d", i)})
		}
	}()
	for _, s := range []<-chan map[string]string{feed, otherFeed} {
		got := readSSE(t, s, n, 3*time.Minute) // generous: 300 publishes on a loaded machine
		if len(got) != n {
			t.Fatalf("with the store stuck, a feed got %d of %d events", len(got), n)
		}
		for i, m := range got {
			if m["event"] != "event" || !strings.Contains(m["data"], fmt.Sprintf("event %d<", i)) {
				t.Fatalf("message %d: %v", i, m)
			}
		}
	}
	other.post("/logout").redirects(t, "/login")
	if why := waitEnd(t, otherFeed, 30*time.Second); why != "signed-out" {
		t.Fatalf("sign-out with the store stuck: ended with %q", why)
	}
	select {
	case <-store.release:
		t.Fatal("the read was released before the events arrived")
	default:
	}

	release()
	cards := readSSE(t, board, 1, 30*time.Second)
	if len(cards) != 1 || cards[0]["event"] != "insight" || !strings.Contains(cards[0]["data"], ">Signups<") {
		t.Fatalf("the board after the read returned: %v", cards)
	}
}

// TestSignedOutStreamStops: a live view whose session is gone is answered 204, which
// tells EventSource to stop, not a sign-in page it cannot read.
func TestSignedOutStreamStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	p := e.client().request("GET", "/p/my-saas/stream", "", nil, "Accept", "text/event-stream")
	if p.status != http.StatusNoContent || p.body != "" {
		t.Fatalf("a stream without a session: %d %q", p.status, p.body)
	}
	e.client().get("/p/my-saas").redirects(t, "/login?next=%2Fp%2Fmy-saas") // a page still goes to sign-in
}
