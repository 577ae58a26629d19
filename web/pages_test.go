package web_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/web"
)

func TestOtherAccountsAreNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	acme := e.owner()
	ev := e.publish(e.account("acme"), tidings.NewEvent{Event: "acme secret"})

	g := e.client()
	g.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	for _, path := range []string{"/p/my-saas", "/p/my-saas/c/payments", "/p/my-saas/insights", "/p/my-saas/charts",
		"/p/my-saas/stream", "/p/my-saas/events/" + ev.ID, "/settings/projects/my-saas/delete", "/p/my-saas/pages", "/p/my-saas/users",
		"/p/my-saas/groups"} {
		g.get(path).want(t, 404)
	}
	g.post("/settings/projects/my-saas/delete").want(t, 404)
	// Globex makes its own my-saas: acme's event is still not there.
	g.post("/settings/projects", "name", "my-saas").redirects(t, "/settings/projects/my-saas")
	g.get("/p/my-saas/events/"+ev.ID).want(t, 404)
	if p := g.get("/p/my-saas"); strings.Contains(p.body, "acme secret") {
		t.Fatal("globex sees acme's event")
	}
	acme.get("/p/my-saas/events/"+ev.ID).want(t, 200, "acme secret")
}

func TestProjectSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	c.get("/settings/projects").want(t, 200, `<a class="row" href="/settings/projects/my-saas">`, "1 channel", "Notify: everyone")
	c.get("/settings/projects/my-saas").want(t, 200, "#payments", `id="auto-my-saas" name="on" value="true" aria-describedby="auto-my-saas-hint">`)
	c.post("/settings/projects", "name", "My SaaS").want(t, 400, "Project name: "+tidings.NameRuleMessage)
	c.post("/settings/projects", "name", "my-saas").want(t, 409, "already exists") // the API's status for a conflict
	c.post("/settings/projects/my-saas/channels", "name", "Pay Ments").want(t, 400, "Channel name: "+tidings.NameRuleMessage)
	c.post("/settings/projects/nope/channels", "name", "x").want(t, 404)

	c.post("/settings/projects/my-saas/auto-create", "on", "true").redirects(t, "/settings/projects/my-saas")
	if p, _ := e.store.FindProject(t.Context(), e.account("acme").ID, "my-saas"); !p.AutoCreateChannels {
		t.Fatal("auto-create not switched on")
	}
	c.get("/settings/projects/my-saas").want(t, 200, "Saved: create channels on first event is on.",
		`id="auto-my-saas" name="on" value="true" aria-describedby="auto-my-saas-hint" checked>`)
	c.post("/settings/projects/my-saas/auto-create", "on", "false").redirects(t, "/settings/projects/my-saas")
	if p, _ := e.store.FindProject(t.Context(), e.account("acme").ID, "my-saas"); p.AutoCreateChannels {
		t.Fatal("auto-create not switched off")
	}
	// The switch's form sends its hidden "off" after the checkbox: checked, "true" comes first.
	c.post("/settings/projects/my-saas/auto-create", "on", "true", "on", "false").redirects(t, "/settings/projects/my-saas")
	if p, _ := e.store.FindProject(t.Context(), e.account("acme").ID, "my-saas"); !p.AutoCreateChannels {
		t.Fatal("a checked switch did not switch auto-create on")
	}

	// Off, the page says why the LogSnag SDKs need it; on, it no longer does.
	c.get("/settings/projects/my-saas").want(t, 200, `<p class="hint sdk-hint" data-off-hint>The LogSnag SDKs’`)
	c.post("/settings/projects/my-saas/insight-change-default", "change", "update").redirects(t, "/settings/projects/my-saas")
	if p, _ := e.store.FindProject(t.Context(), e.account("acme").ID, "my-saas"); p.InsightChangeDefault != tidings.ChangeUpdate {
		t.Fatal(`"missing change means update" not switched on`)
	}
	c.get("/settings/projects/my-saas").want(t, 200, `<p class="hint sdk-hint" data-off-hint hidden>`, `value="update" aria-describedby="change-my-saas-hint" checked>`)
	c.post("/settings/projects/my-saas/insight-change-default", "change", "increment").want(t, 400, "insight_change_default: must be")
	c.post("/settings/projects/nope/insight-change-default", "change", "update").want(t, 404)

	acme := e.account("acme")
	for i := 0; i < 3; i++ {
		e.publish(acme, tidings.NewEvent{Event: "e"})
	}
	c.get("/settings/projects/my-saas/channels/payments/delete").want(t, 200, "Delete channel #payments?", "<strong>3 events</strong>", `pattern="payments"`)
	c.get("/settings/projects/my-saas/delete").want(t, 200, "Delete project my-saas?", "<strong>1 channel and 3 events</strong>", `pattern="my-saas"`)
	// Without the name typed, nothing is deleted.
	c.post("/settings/projects/my-saas/channels/payments/delete").want(t, 400, "Type the channel’s name, payments, to confirm")
	c.post("/settings/projects/my-saas/channels/payments/delete", "confirm", "my-saas").want(t, 400, "nothing was deleted")
	if n, _ := e.store.CountEvents(t.Context(), acme.ID, "my-saas", ""); n != 3 {
		t.Fatalf("%d events left after a deletion not confirmed", n)
	}
	c.post("/settings/projects/my-saas/channels/payments/delete", "confirm", "payments").redirects(t, "/settings/projects/my-saas")
	if n, _ := e.store.CountEvents(t.Context(), acme.ID, "my-saas", ""); n != 0 {
		t.Fatalf("%d events left after deleting their channel", n)
	}
	c.post("/settings/projects/my-saas/delete", "confirm", "my-saa").want(t, 400, "Type the project’s name, my-saas, to confirm")
	c.post("/settings/projects/my-saas/delete", "confirm", "my-saas").redirects(t, "/settings/projects")
	if _, err := e.store.FindProject(t.Context(), acme.ID, "my-saas"); err == nil {
		t.Fatal("project not deleted")
	}
}

func TestTokenSettings(t *testing.T) {
	t.Parallel()
	var e *env
	var used time.Time
	var usedID string
	// The API's batched last-used times, flushed before a revoke.
	e = newEnvWith(t, web.Config{FlushTokenUse: func(ctx context.Context) error {
		if usedID == "" {
			return nil
		}
		return e.store.TouchTokens(ctx, map[string]time.Time{usedID: used})
	}})
	c := e.owner()
	c.get("/settings/api").want(t, 200, "Create a token", "No tokens yet")
	c.post("/settings/api", "name", "x", "access", "full", "channel", "payments", "role_log", "1").
		want(t, 400, "needs a project limit")
	c.post("/settings/api", "name", "x", "access", "full").want(t, 400, "at least one role")
	// Post, redirect, get: the page after the form shows the secret once; a reload
	// neither shows it again nor makes another token.
	c.post("/settings/api", "name", "website", "access", "public", "project", "my-saas", "channel", "payments", "role_log", "1", "role_insight", "1").
		redirects(t, "/settings/api#token-created")
	p := c.get("/settings/api")
	p.want(t, 200, "Your new token", "shown only this once", "curl -X POST", "/v1/log", `id="token-created"`,
		"Use a full token from server code and a public token in browsers")
	i := strings.Index(p.body, `id="new-token" class="secret">`)
	secret := p.body[i+len(`id="new-token" class="secret">`):]
	secret = secret[:strings.Index(secret, "<")]
	id, hash, ok := tidings.ParseTokenSecret(secret)
	if !ok {
		t.Fatalf("shown token %q", secret)
	}
	tok, err := e.store.FindToken(t.Context(), id)
	if err != nil || !tok.HashMatches(hash) || tok.Access != "public" || tok.Channel != "payments" || tok.Name != "website" {
		t.Fatalf("stored token %+v %v", tok, err)
	}
	// One name for the variable everywhere: the card sets it, the curl reads it.
	if !strings.Contains(p.body, "export TIDINGS_TOKEN="+secret) || !strings.Contains(p.body, "Bearer $TIDINGS_TOKEN") {
		t.Fatal("the curl example does not use the new token through TIDINGS_TOKEN")
	}
	list := c.get("/settings/api")
	list.want(t, 200, "website", "my-saas #payments", "used never", `href="/settings/api/`+id+`"`)
	// The token's own page: its limits, and its revocation in a danger zone.
	c.get("/settings/api/"+id).want(t, 200, "Limited to", "my-saas #payments", "Danger zone", `action="/settings/api/`+id+`/revoke"`, "Revoke “website”")
	if strings.Contains(list.body, secret) {
		t.Fatal("the token is shown again after creation")
	}
	if ts, _ := e.store.ListTokens(t.Context(), e.account("acme").ID); len(ts) != 1 {
		t.Fatalf("%d tokens after one create and reloads", len(ts))
	}
	used = time.Now().Add(-time.Second).Truncate(time.Millisecond)
	usedID = id
	c.post("/settings/api/"+id+"/revoke").redirects(t, "/settings/api")
	tok, _ = e.store.FindToken(t.Context(), id)
	if !tok.Revoked() || !tok.LastUsedAt.Equal(used) {
		t.Fatalf("revoked %t, last used %v (pending use %v)", tok.Revoked(), tok.LastUsedAt, used)
	}
	list = c.get("/settings/api")
	list.want(t, 200, "No active tokens", "Show revoked (1)", `<details class="revoked-tokens">`, "Token "+id+" revoked")
	c.get("/settings/api/"+id).want(t, 200, "Revoked")
	if strings.Contains(c.get("/settings/api/"+id).body, "Danger zone") {
		t.Fatal("a revoked token's page still offers to revoke it")
	}
	c.get("/settings/api/unknown").want(t, 404)
	c.post("/settings/api/unknown/revoke").want(t, 404)
}

func TestFeedPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	c.get("/p/my-saas").want(t, 200, "No events yet", `data-stream="/p/my-saas/stream?last=`)
	e.publish(acme, tidings.NewEvent{Event: "Paid", Parser: tidings.ParserMarkdown, Icon: "💰",
		Description: "**bold** <script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3)) [ok](https://example.com)",
		Tags:        tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})
	e.publish(acme, tidings.NewEvent{Event: "Text", Description: "line one\nline <two>",
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "basic"}}})
	p := c.get("/p/my-saas")
	p.want(t, 200, "<strong>bold</strong>", "line one<br>line &lt;two&gt;", `href="/p/my-saas?tag=plan%3Apremium"`,
		`rel="nofollow noopener"`, `href="https://example.com"`)
	for _, bad := range []string{"<script>alert", "onerror", "javascript:"} {
		if strings.Contains(p.body, bad) {
			t.Fatalf("feed contains %q", bad)
		}
	}
	c.get("/p/my-saas?q=plan:premium").want(t, 200, "Paid", "Clear filter")
	if p := c.get("/p/my-saas?tag=plan:basic"); strings.Contains(p.body, `class="ev-name" href`) && strings.Contains(p.body, ">Paid<") {
		t.Fatal("tag filter did not narrow the feed")
	}
	if p := c.get("/p/my-saas?q=line+one"); !strings.Contains(p.body, ">Text<") || strings.Contains(p.body, ">Paid<") {
		t.Fatal("text search did not narrow the feed")
	}
	c.get("/p/my-saas/c/payments").want(t, 200, "#payments")
	c.get("/p/my-saas/c/nope").want(t, 404)
	c.get("/p/nope").want(t, 404)

	// 60 events: a first page of 50 with a link to the older ones.
	for i := 0; i < 58; i++ {
		e.publish(acme, tidings.NewEvent{Event: fmt.Sprintf("bulk %d", i)})
	}
	first := c.get("/p/my-saas")
	if n := strings.Count(first.body, `class="event"`); n != 50 {
		t.Fatalf("first page has %d events", n)
	}
	i := strings.Index(first.body, `href="/p/my-saas?before=`)
	older := first.body[i+6:]
	older = strings.ReplaceAll(older[:strings.Index(older, `"`)], "&amp;", "&")
	second := c.get(older)
	if n := strings.Count(second.body, `class="event"`); n != 10 || strings.Contains(second.body, "data-stream") {
		t.Fatalf("second page: %d events", n)
	}
	c.get("/p/my-saas?before=stale").redirects(t, "/p/my-saas")

	ev := e.publish(acme, tidings.NewEvent{Event: "Single", UserID: "user-7"})
	c.get("/p/my-saas/events/"+ev.ID).want(t, 200, "Single", "user-7", ev.ID)
	c.get("/p/my-saas/events/nope").want(t, 404)
}

func TestInsightsAndChartsPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	c.get("/p/my-saas/insights").want(t, 200, "No insights yet")
	for _, v := range []string{"10", "12.5", "11"} {
		ch := &tidings.InsightChange{Project: "my-saas", Title: "Revenue", Value: v, ValueKind: tidings.KindNumber, Change: "update"}
		if _, err := e.store.ApplyInsight(t.Context(), acme.ID, ch); err != nil {
			t.Fatal(err)
		}
	}
	icon := "🟢"
	e.store.ApplyInsight(t.Context(), acme.ID, &tidings.InsightChange{Project: "my-saas", Title: "Status", Value: "Up", ValueKind: tidings.KindString, Change: "update", Icon: &icon})
	p := c.get("/p/my-saas/insights")
	p.want(t, 200, "Revenue", ">11<", "<polyline points=", "Status", "🟢")
	if strings.Count(p.body, "<polyline") != 1 {
		t.Fatal("a text insight got a sparkline")
	}
	e.publish(acme, tidings.NewEvent{Event: "now"})
	charts := c.get("/p/my-saas/charts")
	charts.want(t, 200, "Your board is empty", "Events per day", "<svg", `class="bar s0"`, ": 1 event</title>")
	if n := strings.Count(charts.body, `<rect class="bar`); n != 1 {
		t.Fatalf("%d bars, want the one day with an event", n)
	}
}

func TestSecurityHeadersAndAssets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.client()
	p := c.get("/signup")
	csp := p.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP = %q", csp)
	}
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, " style=") || strings.Contains(p.body, " onclick=") {
		t.Fatal("inline script or style in a page")
	}
	js := regexp.MustCompile(`/static/app\.[0-9a-f]{8}\.js`).FindString(p.body)
	a := c.get(js)
	if a.status != 200 || !strings.Contains(a.header.Get("Cache-Control"), "immutable") || !strings.Contains(a.header.Get("Content-Type"), "javascript") {
		t.Fatalf("%s: %d %v", js, a.status, a.header)
	}
	c.get("/static/app.00000000.js").want(t, 404)
	m := c.get("/manifest.webmanifest")
	m.want(t, 200, `"display": "standalone"`, "icon-192.", "icon-512.")
	if m.header.Get("Content-Type") != "application/manifest+json" {
		t.Fatalf("manifest type %q", m.header.Get("Content-Type"))
	}
	i := strings.Index(m.body, "/static/icon-512.")
	icon := c.get(m.body[i : i+strings.Index(m.body[i:], `"`)])
	if icon.status != 200 || !strings.HasPrefix(icon.body, "\x89PNG") {
		t.Fatalf("icon: %d", icon.status)
	}
	c.get("/sw.js").want(t, 200, "service worker")
	c.get("/no/such/page").want(t, 404, "There is nothing here")
}

// sseMessages reads a stream in one goroutine and delivers its messages.
func sseMessages(body *bufio.Reader) <-chan map[string]string {
	out := make(chan map[string]string, 100)
	go func() {
		defer close(out)
		msg := map[string]string{}
		for {
			line, err := body.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			if line == "" {
				if msg["event"] != "" {
					out <- msg
				}
				msg = map[string]string{}
				continue
			}
			k, v, _ := strings.Cut(line, ": ")
			if k == "data" && msg["data"] != "" {
				v = msg["data"] + "\n" + v
			}
			msg[k] = v
		}
	}()
	return out
}

// readSSE collects up to n messages of a stream, or what came until the time is up.
func readSSE(t *testing.T, in <-chan map[string]string, n int, timeout time.Duration) []map[string]string {
	t.Helper()
	var msgs []map[string]string
	deadline := time.After(timeout)
	for len(msgs) < n {
		select {
		case m, ok := <-in:
			if !ok {
				return msgs
			}
			msgs = append(msgs, m)
		case <-deadline:
			return msgs
		}
	}
	return msgs
}

func TestStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	missed := e.publish(acme, tidings.NewEvent{Event: "before"})
	caught := e.publish(acme, tidings.NewEvent{Event: "missed while away", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})

	open := func(query string, header ...string) <-chan map[string]string {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/p/my-saas/stream"+query, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		return sseMessages(bufio.NewReader(res.Body))
	}
	// Reconnecting with Last-Event-ID gets what it missed, then live events.
	all := open("", "Last-Event-ID", missed.ID)
	premium := open("?tag=plan:premium&last=" + missed.ID)
	board := open("?insights=1")
	time.Sleep(100 * time.Millisecond) // all subscribed
	live := e.publish(acme, tidings.NewEvent{Event: "live one"})
	e.publish(acme, tidings.NewEvent{Event: "live premium", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})
	// 50 quick increments reach the board as a few redraws showing the latest value.
	// The store writes come first and the notices then arrive as one burst, as
	// a busy server's do: a loaded machine's slow writes must not spread them out.
	icon := "📈"
	var states []*tidings.Insight
	for i := 0; i < 50; i++ {
		in, _ := e.store.ApplyInsight(t.Context(), acme.ID, &tidings.InsightChange{Project: "my-saas", Title: "Signups", Value: "1",
			ValueKind: tidings.KindNumber, Change: "increment", Icon: &icon})
		states = append(states, in)
	}
	for _, in := range states {
		e.broker.Publish(tidings.Notice{AccountID: acme.ID, Insight: in})
	}

	// A reconnect replays from a second before the event it names (see catchUpMargin):
	// what the browser had already it recognises by element id; drop those here too.
	seenBefore := func(msgs []map[string]string) []map[string]string {
		var out []map[string]string
		for _, m := range msgs {
			if m["event"] != "event" || m["id"] > missed.ID {
				out = append(out, m)
			}
		}
		return out
	}
	msgs := seenBefore(readSSE(t, all, 3, 30*time.Second))
	if len(msgs) != 3 || msgs[0]["id"] != caught.ID || msgs[1]["id"] != live.ID || msgs[2]["event"] != "event" {
		t.Fatalf("feed stream messages (events only): %v", msgs)
	}
	if !strings.Contains(msgs[0]["data"], "missed while away") {
		t.Fatalf("payloads: %v", msgs)
	}
	if extra := readSSE(t, all, 1, 600*time.Millisecond); len(extra) != 0 {
		t.Fatalf("the feed stream was sent %v", extra)
	}
	var cards []map[string]string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		more := readSSE(t, board, 1, time.Until(deadline))
		cards = append(cards, more...)
		if len(more) == 0 || strings.Contains(more[0]["data"], ">50<") {
			break
		}
	}
	if len(cards) == 0 || !strings.Contains(cards[len(cards)-1]["data"], ">50<") {
		t.Fatalf("the insight board never showed 50: %v", cards)
	}
	if len(cards) > 25 {
		t.Fatalf("insight board got %d redraws for 50 increments: not coalesced", len(cards))
	}
	for _, c := range cards {
		if c["event"] != "insight" {
			t.Fatalf("the insight board was sent a %s", c["event"])
		}
	}
	got := seenBefore(readSSE(t, premium, 2, 30*time.Second))
	var events []string
	for _, m := range got {
		if m["event"] == "event" {
			events = append(events, m["data"])
		}
	}
	if len(events) != 2 || !strings.Contains(events[0], "missed while away") || !strings.Contains(events[1], "live premium") {
		t.Fatalf("filtered stream sent %d events: %v", len(events), events)
	}
}

var (
	update = flag.Bool("update", false, "rewrite golden files")
	timeRE = regexp.MustCompile(`<time [^>]*>[^<]*`)
)

// TestEventCardGolden pins the HTML of an event card, which the feed and the stream share.
func TestEventCardGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	ev := e.publish(acme, tidings.NewEvent{Event: "New Subscription", Icon: "💰", Notify: true, Parser: tidings.ParserMarkdown,
		Description: "A **premium** plan\n\n- seats: 3",
		Tags:        tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}, {Key: "seats", Kind: tidings.KindNumber, Value: "3"}}})
	body := c.get("/p/my-saas").body
	start := strings.Index(body, `<article class="event"`)
	card := body[start : start+strings.Index(body[start:], "</article>")+len("</article>")]
	card = strings.ReplaceAll(card, ev.ID, "EVENT-ID")
	card = timeRE.ReplaceAllString(card, `<time TIME>`)
	path := filepath.Join("testdata", "event-card.golden.html")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, []byte(card+"\n"), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(card) {
		t.Fatalf("event card changed:\n%s\nwant:\n%s", card, want)
	}
}

// An owner deletes one event from its page and one insight from the insights page; a
// member sees neither control and is refused; another account's cannot be reached.
func TestDeleteOneInDashboard(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	ev := e.publish(acme, tidings.NewEvent{Event: "Oops, a test"})
	keep := e.publish(acme, tidings.NewEvent{Event: "Real one"})
	e.store.ApplyInsight(t.Context(), acme.ID, &tidings.InsightChange{Project: "my-saas", Title: "Signups", Value: "3",
		ValueKind: tidings.KindNumber, Change: "update"})

	member, _ := e.member(acme, "bob@example.com")
	if p := member.get("/p/my-saas/events/" + ev.ID); strings.Contains(p.body, "Delete event") {
		t.Fatal("a member is offered to delete an event")
	}
	if p := member.get("/p/my-saas/insights"); strings.Contains(p.body, "Delete an insight") {
		t.Fatal("a member is offered to delete an insight")
	}
	member.post("/p/my-saas/events/"+ev.ID+"/delete").want(t, 403)
	member.post("/p/my-saas/insights/delete", "title", "Signups").want(t, 403)

	c.get("/p/my-saas/events/"+ev.ID).want(t, 200, "Delete event", `data-confirm="Delete this event?`)
	c.post("/p/my-saas/events/"+ev.ID+"/delete").redirects(t, "/p/my-saas/c/payments")
	c.get("/p/my-saas/events/"+ev.ID).want(t, 404)
	c.get("/p/my-saas").want(t, 200, "Real one")
	if strings.Contains(c.get("/p/my-saas").body, "Oops, a test") {
		t.Fatal("the deleted event is still in the feed")
	}
	c.post("/p/my-saas/events/"+ev.ID+"/delete").want(t, 404)

	c.get("/p/my-saas/insights").want(t, 200, "Delete an insight", "<option>Signups</option>")
	c.post("/p/my-saas/insights/delete", "title", "Signups").redirects(t, "/p/my-saas/insights")
	c.get("/p/my-saas/insights").want(t, 200, "No insights yet")
	c.post("/p/my-saas/insights/delete", "title", "Signups").want(t, 404)

	// Another account's owner cannot reach acme's event by its ID.
	globex, err := e.store.CreateAccount(t.Context(), "globex")
	if err != nil {
		t.Fatal(err)
	}
	e.store.CreateProject(t.Context(), globex.ID, "my-saas")
	other, _ := e.user(globex, "eve@example.com", tidings.UserOwner)
	other.post("/p/my-saas/events/"+keep.ID+"/delete").want(t, 404)
	c.get("/p/my-saas/events/"+keep.ID).want(t, 200, "Real one")
}

// The feed offers its events, as filtered, for download; the download streams them all.
func TestExportInDashboard(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	for i := range 120 {
		e.publish(acme, tidings.NewEvent{Event: fmt.Sprintf("Paid %d", i), Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: []string{"free", "pro"}[i%2]}}})
	}
	feed := c.get("/p/my-saas?q=plan:pro")
	feed.want(t, 200, "Download these events", `href="/p/my-saas/export?format=csv&amp;q=plan%3Apro"`)
	p := c.get("/p/my-saas/export?format=csv&q=plan%3Apro")
	if p.status != 200 || !strings.HasPrefix(p.body, "id,timestamp,") || strings.Count(p.body, "\n") != 61 {
		t.Fatalf("csv: %d, %d lines", p.status, strings.Count(p.body, "\n"))
	}
	if p := c.get("/p/my-saas/c/payments/export"); p.status != 200 || strings.Count(p.body, "\n") != 120 {
		t.Fatalf("ndjson of a channel: %d, %d lines", p.status, strings.Count(p.body, "\n"))
	}
	c.get("/p/my-saas/export?format=xlsx").want(t, 400)
	c.get("/p/nope/export").want(t, 404)
}

// An owner chooses how long a project keeps its events; a member sees the choice.
func TestRetentionSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	c.get("/settings/projects/my-saas").want(t, 200, `<label for="keep-my-saas">Keep events</label>`, `<option value="0" selected>forever</option>`)
	c.post("/settings/projects/my-saas/retention", "days", "30").redirects(t, "/settings/projects/my-saas")
	c.get("/settings/projects/my-saas").want(t, 200, `<option value="30" selected>30 days</option>`, "Saved: keep events 30 days.")
	if p, _ := e.store.FindProject(t.Context(), acme.ID, "my-saas"); p.RetentionDays != 30 {
		t.Fatalf("retention %d", p.RetentionDays)
	}
	c.post("/settings/projects/my-saas/retention", "days", "8").want(t, 400, "must be one of")
	c.post("/settings/projects/my-saas/retention", "days", "x").want(t, 400)
	member, _ := e.member(acme, "bob@example.com")
	member.get("/settings/projects/my-saas").want(t, 200, "<dt>Keep events</dt><dd>30 days</dd>")
	member.post("/settings/projects/my-saas/retention", "days", "0").want(t, 403)
}

// Users: the list with property filters, a user's page with its properties, groups
// and journey by day, and the event card linking to it; another account's users stay
// out of reach.
func TestUsersPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	ctx := t.Context()
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	c.get("/p/my-saas/users").want(t, 200, "No users yet", "POST /v1/identify")
	for _, u := range []struct{ id, plan string }{{"ada/1", "pro"}, {"bob", "free"}} {
		if _, err := e.store.Identify(ctx, acme.ID, &tidings.Identify{Project: "my-saas", UserID: u.id,
			Properties: tidings.Tags{str("plan", u.plan)}}); err != nil {
			t.Fatal(err)
		}
	}
	e.store.Group(ctx, acme.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "acme-inc", UserID: "ada/1"})
	ev := e.publish(acme, tidings.NewEvent{Event: "Upgraded to pro", UserID: "ada/1"})
	e.publish(acme, tidings.NewEvent{Event: "Bob did something", UserID: "bob"})
	e.publish(acme, tidings.NewEvent{Event: "Anonymous visit", UserID: "visitor-9"}) // never identified

	c.get("/p/my-saas/users").want(t, 200, `href="/p/my-saas/users/ada%2F1"`, "plan: pro", ">bob<")
	p := c.get("/p/my-saas/users?q=plan:pro")
	p.want(t, 200, "ada/1", "Clear filter")
	if strings.Contains(p.body, ">bob<") {
		t.Fatal("the plan:pro filter shows bob")
	}
	c.get("/p/my-saas/users?q=two+words").want(t, 200, "one user ID at a time")
	p = c.get("/p/my-saas/users?q=AD") // the start of an ID, any case
	p.want(t, 200, "ada/1", "Clear filter")
	if strings.Contains(p.body, ">bob<") {
		t.Fatal("the search AD shows bob")
	}
	if p := c.get("/p/my-saas/users?q=ad_"); strings.Contains(p.body, "ada/1") {
		t.Fatal("_ in a search is a wildcard")
	}
	c.get("/p/my-saas/users/ada%2F1").want(t, 200, "Journey", "Upgraded to pro", "plan: pro", "acme-inc", `class="events" data-days`)
	if strings.Contains(c.get("/p/my-saas/users/ada%2F1").body, "Bob did something") {
		t.Fatal("bob's event in ada's journey")
	}
	c.get("/p/my-saas/users/ada%2F1").want(t, 200, `data-stream="/p/my-saas/stream?last=`, `user=ada%2F1`)
	c.get("/p/my-saas/users/visitor-9").want(t, 200, "Anonymous visit", "identify this user")
	e.publish(acme, tidings.NewEvent{Event: "Order placed", Tags: tidings.Tags{str("order-id", "o-77")}})
	e.publish(acme, tidings.NewEvent{Event: "Order shipped", Tags: tidings.Tags{str("order-id", "o-77")}})
	e.publish(acme, tidings.NewEvent{Event: "Other order", Tags: tidings.Tags{str("order-id", "o-78")}})
	c.get("/p/my-saas?tag=order-id:o-77").want(t, 200, "See order-id: o-77 as a journey", `href="/p/my-saas/journey?tag=order-id%3Ao-77"`)
	c.get("/p/my-saas").want(t, 200, `class="chip-journey" href="/p/my-saas/journey?tag=order-id%3Ao-78"`) // every chip offers its journey
	jp := c.get("/p/my-saas/journey?tag=order-id%3Ao-77")
	jp.want(t, 200, "Order placed", "Order shipped", `data-days`, "data-stream=")
	if strings.Contains(jp.body, "Other order") {
		t.Fatal("another order in o-77's journey")
	}
	c.get("/p/my-saas/journey?tag=nocolon").want(t, 400)
	c.get("/p/my-saas/groups").want(t, 200, `href="/p/my-saas/groups/acme-inc"`, "<td>1</td>")
	gp := c.get("/p/my-saas/groups/acme-inc")
	gp.want(t, 200, "Members (1)", `<a href="/p/my-saas/users/ada%2F1">ada/1</a>`, "Journey", "Upgraded to pro", `group=acme-inc`)
	if strings.Contains(gp.body, "Bob did something") {
		t.Fatal("a non-member's event in the group's journey")
	}
	e.store.Group(ctx, acme.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "empty-co"})
	c.get("/p/my-saas/groups/empty-co").want(t, 200, "No members yet")
	c.get("/p/my-saas/stream?group=empty-co").want(t, 404)
	c.get("/p/my-saas/groups/nope").want(t, 404)
	c.get("/p/my-saas/users/ada%2F1").want(t, 200, `<a href="/p/my-saas/groups/acme-inc">acme-inc</a>`)
	c.get("/p/my-saas/users/nobody").want(t, 404)
	c.get("/p/my-saas/events/"+ev.ID).want(t, 200, `<a href="/p/my-saas/users/ada%2F1">ada/1</a>`)
	c.get("/p/my-saas").want(t, 200, `class="ev-user" href="/p/my-saas/users/ada%2F1"`)

	globex, err := e.store.CreateAccount(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	e.store.CreateProject(ctx, globex.ID, "my-saas")
	other, _ := e.user(globex, "eve@example.com", tidings.UserOwner)
	if p := other.get("/p/my-saas/users"); strings.Contains(p.body, "ada/1") {
		t.Fatal("another account lists acme's users")
	}
	other.get("/p/my-saas/users/ada%2F1").want(t, 404)
	other.get("/p/my-saas/groups/acme-inc").want(t, 404)
}

// TestNoticesAfterForms: each create and delete says what it did on the page it leads
// to, once.
func TestNoticesAfterForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	c.post("/settings/projects", "name", "shop").redirects(t, "/settings/projects/shop")
	c.get("/settings/projects/shop").want(t, 200, "Project shop created.")
	if strings.Contains(c.get("/settings/projects/shop").body, "Project shop created.") {
		t.Fatal("the notice shows again on reload")
	}
	c.post("/settings/projects/shop/channels", "name", "orders").redirects(t, "/settings/projects/shop")
	c.get("/settings/projects/shop").want(t, 200, "Channel #orders created in shop.")
	c.post("/settings/projects/shop/channels/orders/delete", "confirm", "orders").redirects(t, "/settings/projects/shop")
	c.get("/settings/projects/shop").want(t, 200, "Channel #orders deleted, with its events.")
	c.post("/settings/projects/shop/delete", "confirm", "shop").redirects(t, "/settings/projects")
	c.get("/settings/projects").want(t, 200, "Project shop deleted")
}

// TestErrorPages: errors show inside the app shell and say what is missing and what to
// do; a member on an owner page is told who may use it.
func TestErrorPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	p := c.get("/p/nope")
	p.want(t, 404, "There is no project “nope” in your team.", `href="/settings/projects">Create it in Settings → Projects`, `id="sidebar"`, "Sign out")
	c.get("/p/my-saas/c/nope").want(t, 404, "There is no channel “#nope” in the project “my-saas”")
	c.get("/no/such/page").want(t, 404, "There is nothing here.", `id="sidebar"`, "Back to the dashboard")
	m, _ := e.member(e.account("acme"), "bob@example.com")
	m.get("/settings/api").want(t, 403, "Only owners can manage API tokens", `id="sidebar"`)
	m.get("/settings/webhooks").want(t, 403, "Only owners can manage webhooks")
	if p := m.get("/p/nope"); strings.Contains(p.body, "Create it in Settings") {
		t.Fatal("a member is told to create a project")
	}
	e.client().get("/invite/not-a-real-secret").want(t, 404, "ask for a new one")
}

// TestSignInPagesFocusTheFieldToFix: an error shows inside the card and the cursor goes
// to the field it is about; the explanation of a fresh install stays.
func TestSignInPagesFocusTheFieldToFix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.client()
	p := c.post("/signup", "account", "Acme Inc", "email", "ada@example.com", "password", "correct horse", "password2", "correct horse")
	p.want(t, 400, "Team name:", "This is a fresh Tidings", `class="auth-card"`)
	if !regexp.MustCompile(`id="account"[^>]*autofocus`).MatchString(p.body) {
		t.Fatal("the team name is not focused after its error")
	}
	p = c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "correct horse", "password2", "other horse")
	if !regexp.MustCompile(`id="password"[^>]*autofocus`).MatchString(p.body) || regexp.MustCompile(`id="account"[^>]*autofocus`).MatchString(p.body) {
		t.Fatal("the password is not the focused field after the passwords differ")
	}
	e.owner()
	p = e.client().post("/login", "email", "ada@example.com", "password", "wrong horse")
	p.want(t, 401, "Wrong email or password.", `class="auth-card"`)
	if !regexp.MustCompile(`id="password"[^>]*autofocus`).MatchString(p.body) {
		t.Fatal("the password is not focused after a wrong one")
	}
}

// TestChartsInTheViewersZone: days are the viewer's (the tz cookie app.js keeps), and
// the y-axis has round gridlines.
func TestChartsInTheViewersZone(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	e := newEnvWith(t, web.Config{Now: func() time.Time { return now }})
	c := e.owner()
	acme := e.account("acme")
	for _, at := range []string{"2026-11-22T23:30:00Z", "2026-11-22T10:00:00Z"} {
		ts, _ := time.Parse(time.RFC3339, at)
		e.publish(acme, tidings.NewEvent{Event: "x", Timestamp: ts})
	}
	c.get("/p/my-saas/charts").want(t, 200, "<title>Sun 22 Nov: 2 events</title>", "Times in UTC.", `class="grid"`, `text-anchor="end"`)
	u, _ := url.Parse(e.srv.URL)
	c.jar.SetCookies(u, []*http.Cookie{{Name: "tz", Value: "Pacific/Auckland"}})
	c.get("/p/my-saas/charts").want(t, 200, "<title>Mon 23 Nov: 1 event</title>", "<title>Sun 22 Nov: 1 event</title>", "Times in Pacific/Auckland.")
	c.get("/p/my-saas/charts?range=24h").want(t, 200, "<title>Mon 23 Nov: 1 event</title>")
	c.jar.SetCookies(u, []*http.Cookie{{Name: "tz", Value: "Not/AZone"}})
	c.get("/p/my-saas/charts").want(t, 200, "Times in UTC.")
}

func TestNiceStep(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for max, want := range map[int]int{0: 1, 3: 1, 4: 1, 5: 2, 9: 5, 17: 5, 40: 10, 41: 20, 99: 50, 1234: 500} {
		if got := web.NiceStep(max); got != want {
			t.Errorf("niceStep(%d) = %d, want %d", max, got, want)
		}
	}
}

// TestTagValuesWithSpaces: a chip of a value with spaces filters by it, writes
// key:"the value" in the search box, and that search finds the same events.
func TestTagValuesWithSpaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	e.publish(acme, tidings.NewEvent{Event: "Upgraded", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "Premium Plan"}}})
	e.publish(acme, tidings.NewEvent{Event: "Other", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "Premium"}}})
	feed := c.get("/p/my-saas")
	feed.want(t, 200, `href="/p/my-saas?tag=plan%3APremium&#43;Plan"`)
	p := c.get("/p/my-saas?tag=plan%3APremium+Plan")
	p.want(t, 200, "Upgraded", `value="plan:&#34;Premium Plan&#34;"`)
	if strings.Contains(p.body, ">Other<") {
		t.Fatal("the chip's filter matched another value")
	}
	q := c.get("/p/my-saas?q=" + url.QueryEscape(`plan:"Premium Plan"`))
	q.want(t, 200, "Upgraded")
	if strings.Contains(q.body, ">Other<") {
		t.Fatal(`plan:"Premium Plan" matched another value`)
	}
}

// TestSearchCutByItsBudget: a search page that the store's work budget ended before it
// was full says so and links on (the embedded store reads at most 2,000 events a page).
func TestSearchCutByItsBudget(t *testing.T) {
	t.Parallel()
	if testbackend.Postgres() {
		t.Skip("the search budget is the embedded store's: PostgreSQL picks its candidates by estimate")
	}
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	e.publish(acme, tidings.NewEvent{Event: "Paid and signed"})
	evs := make([]tidings.NewEvent, 4800) // common words that never meet again: 2,400 of each
	for i := range evs {
		evs[i] = tidings.NewEvent{Event: fmt.Sprintf("%s %d", []string{"Paid", "Signed"}[i%2], i)}
	}
	(&testbackend.Fixture{Store: e.store, Account: acme}).Publish(t, evs...)
	p := c.get("/p/my-saas?q=" + url.QueryEscape("paid signed"))
	p.want(t, 200, "No match among the events searched so far", "search older events")
	if !strings.Contains(p.body, `rel="next"`) {
		t.Fatal("a page cut by the budget has no link to go on")
	}
}

// failingStore fails the insight board's read as a broken database would.
type failingStore struct{ tidings.Store }

func (failingStore) PageInsights(context.Context, int64, tidings.InsightQuery) (*tidings.InsightPage, error) {
	return nil, errors.New("disk on fire")
}

// TestDashboardErrorStatuses: the dashboard answers each error code with the API's
// status (a name taken is 409 on both), and a 500 is logged with the request id, which
// the page shows, and never with the cause on the page.
func TestDashboardErrorStatuses(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	var mu sync.Mutex
	e := newEnvOn(t, web.Config{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))}, failingStore{testbackend.New(t)})
	c := e.owner()
	c.post("/settings/projects", "name", "my-saas").want(t, tidings.HTTPStatus(tidings.EConflict), "already exists")

	mux := http.NewServeMux()
	e.dash.Register(mux)
	withID := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "0123abcd") // as api.Middleware does
		mux.ServeHTTP(w, r)
	}))
	defer withID.Close()
	req, _ := http.NewRequest("GET", withID.URL+"/p/my-saas/insights", nil)
	for _, ck := range c.jar.Cookies(mustURL(e.srv.URL)) {
		req.AddCookie(ck)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 || !strings.Contains(string(body), "0123abcd") || strings.Contains(string(body), "disk on fire") {
		t.Fatalf("a broken store: %d %s", res.StatusCode, excerpt(string(body)))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "request_id=0123abcd") || !strings.Contains(logged.String(), "disk on fire") {
		t.Fatalf("the log: %s", logged.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestFinishedLooks: what a new user saw unfinished — the empty sidebar after sign-up,
// an event without an icon, a plain-text stack trace, a Markdown description that
// sanitising emptied, the sign-in page's reset hint.
func TestFinishedLooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.client()
	c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "correct horse", "password2", "correct horse")
	c.get("/settings/members").want(t, 200, `<p class="sidebar-empty">No projects yet. <a href="/settings/projects">Create the first one</a></p>`)
	c.post("/settings/projects", "name", "my-saas")
	c.post("/settings/projects/my-saas/channels", "name", "payments")
	acme := e.account("acme")
	// An empty feed says what to do next: a curl that publishes to it, and where tokens are.
	c.get("/p/my-saas").want(t, 200, "No events yet", `/v1/log \`, `{&#34;project&#34;:&#34;my-saas&#34;,&#34;channel&#34;:&#34;payments&#34;`,
		`href="/settings/api"`)
	c.get("/p/my-saas/insights").want(t, 200, "No insights yet", "logsnag.insight.track")
	e.publish(acme, tidings.NewEvent{Event: "deploy failed", Description: "panic: boom\n    at main.go:12\n    at run.go:3"})
	e.publish(acme, tidings.NewEvent{Event: "sneaky", Parser: tidings.ParserMarkdown, Description: "<script>alert(1)</script>"})
	p := c.get("/p/my-saas")
	p.want(t, 200, `<span class="ev-initial">D</span>`, "<pre class=\"code\"><code>panic: boom\n    at main.go:12\n    at run.go:3</code></pre>", "&lt;script&gt;alert(1)&lt;/script&gt;")
	if strings.Contains(p.body, "<script>alert") {
		t.Fatal("the sanitised description's source was shown unescaped")
	}
	// One user: the sign-in page may name the CLI; with two, only "ask an owner".
	e.client().get("/login").want(t, 200, "Ask an owner of your team for a reset link.", "tidings user reset-password")
	e.member(acme, "bob@example.com")
	if strings.Contains(e.client().get("/login").body, "reset-password") {
		t.Fatal("the sign-in page tells every visitor about the server's CLI")
	}
	// Signed out, an error page is a centred card with one button.
	e.client().get("/signup").want(t, 403, `class="auth-card error-card"`, `<a class="button-link" href="/login">Sign in</a>`)
}
