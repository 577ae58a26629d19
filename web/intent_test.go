package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// TestIntentCards: high and urgent events carry their mark in words; an urgent one
// has an Acknowledge button (a form: no script needed), which acknowledges it for
// the team, once; an event with a url opens it from its title, its page from its
// time; its buttons are links (url) and forms (id) whose presses the page lists.
func TestIntentCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	high := e.publish(acme, tidings.NewEvent{Event: "disk 85%", Priority: "high"})
	urgent := e.publish(acme, tidings.NewEvent{Event: "db down", Priority: "urgent", URL: "https://status.example.com/db",
		Actions: []tidings.Action{{Label: "Open runbook", URL: "https://runbook.example.com/db"}, {Label: "Restart", ID: "restart"}}})
	plain := e.publish(acme, tidings.NewEvent{Event: "signup"})

	feed := ada.get("/p/my-saas")
	feed.want(t, 200,
		`<span class="prio prio-high">High</span>`, `<span class="prio prio-urgent">Urgent</span>`,
		`<a class="ev-name" href="https://status.example.com/db" rel="noopener noreferrer">db down`,
		`(opens status.example.com)`,
		`<a class="ev-when" href="/p/my-saas/events/`+urgent.ID+`"`,
		`action="/p/my-saas/events/`+urgent.ID+`/ack"`, `>Acknowledge</button>`,
		`action="/p/my-saas/events/`+urgent.ID+`/actions/restart"`, `>Restart</button>`,
		`<a class="button small" href="https://runbook.example.com/db" rel="noopener noreferrer">Open runbook`,
		`<a class="ev-name" href="/p/my-saas/events/`+plain.ID+`">signup</a>`)
	if strings.Count(feed.body, ">Acknowledge</button>") != 1 {
		t.Fatal("an event that is not urgent offers Acknowledge")
	}
	if card := cardOf(feed.body, high.ID); strings.Contains(card, "Acknowledge") {
		t.Fatalf("high card: %s", card)
	}

	// Acknowledge from the feed: back to the feed, at the card, which says who and when.
	ack := ada.post("/p/my-saas/events/"+urgent.ID+"/ack", "back", "/p/my-saas")
	ack.redirects(t, "/p/my-saas#ev-"+urgent.ID)
	after := ada.get("/p/my-saas")
	after.want(t, 200, "Acknowledged “db down”", "Acknowledged by ada@example.com")
	if strings.Contains(after.body, ">Acknowledge</button>") {
		t.Fatal("an acknowledged event still offers Acknowledge")
	}
	// Again, by another member: the first stays.
	bob, _ := e.member(acme, "bob@example.com")
	bob.post("/p/my-saas/events/"+urgent.ID+"/ack", "back", "/p/my-saas").redirects(t, "/p/my-saas#ev-"+urgent.ID)
	bob.get("/p/my-saas").want(t, 200, "already acknowledged by ada@example.com", "Acknowledged by ada@example.com")
	got, err := e.store.FindEventByID(context.Background(), acme.ID, urgent.ID)
	if err != nil || got.Ack == nil || got.Ack.By != "ada@example.com" {
		t.Fatalf("stored ack: %+v %v", got, err)
	}
	// A back that names another site (or nothing) returns to the event's page.
	for _, back := range []string{"https://evil.example/", "//evil.example/p/my-saas", "/settings/api", "", `/p/my-saas\evil`} {
		ada.post("/p/my-saas/events/"+urgent.ID+"/ack", "back", back).redirects(t, "/p/my-saas/events/"+urgent.ID)
	}

	// Pressing an id action from the dashboard; the event page lists the press.
	bob.post("/p/my-saas/events/"+urgent.ID+"/actions/restart", "back", "/p/my-saas/events/"+urgent.ID).
		redirects(t, "/p/my-saas/events/"+urgent.ID)
	page := ada.get("/p/my-saas/events/" + urgent.ID)
	page.want(t, 200, "<strong>Restart</strong> by bob@example.com · via dashboard",
		`<dd class="priority">urgent`, `<a href="https://status.example.com/db" rel="noopener noreferrer">https://status.example.com/db</a>`,
		`<dd class="acked">by ada@example.com`)
	// Bad presses: no such action, a url action, another project's or account's event.
	ada.post("/p/my-saas/events/"+urgent.ID+"/actions/nope").want(t, 404, "has no button")
	ada.post("/p/my-saas/events/"+plain.ID+"/actions/restart").want(t, 404)
	ada.post("/p/other/events/"+urgent.ID+"/ack").want(t, 404)
	ada.post("/p/my-saas/events/nope/ack").want(t, 404)
	presses, err := e.store.ListPresses(context.Background(), acme.ID, urgent.ID)
	if err != nil || len(presses) != 1 || presses[0].By != "bob@example.com" || presses[0].Via != "dashboard" || presses[0].ActionID != "restart" {
		t.Fatalf("presses %+v %v", presses, err)
	}
	// Signed out: sign in first.
	if p := e.client().post("/p/my-saas/events/" + urgent.ID + "/ack"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("signed out: %d %s", p.status, p.location)
	}
}

// TestAnotherAccountsEventIsNotThere: acknowledging or pressing another team's event
// is a 404, and changes nothing.
func TestAnotherAccountsEventIsNotThere(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	e.owner()
	acme := e.account("acme")
	ev := e.publish(acme, tidings.NewEvent{Event: "db down", Priority: "urgent", Actions: []tidings.Action{{Label: "Restart", ID: "restart"}}})
	eve := e.client()
	eve.post("/signup", "account", "evil", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	eve.post("/settings/projects", "name", "my-saas").redirects(t, "/settings/projects/my-saas")
	eve.post("/p/my-saas/events/"+ev.ID+"/ack").want(t, 404)
	eve.post("/p/my-saas/events/"+ev.ID+"/actions/restart").want(t, 404)
	got, _ := e.store.FindEventByID(context.Background(), acme.ID, ev.ID)
	if got.Ack != nil {
		t.Fatalf("acknowledged by another team: %+v", got.Ack)
	}
}

// TestKeyThreads: in a feed without a search, the versions of a key show once, as the
// latest with "updated N times" and the earlier ones folded under it; a search shows
// each version; the event page lists the other versions.
func TestKeyThreads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	ada.post("/settings/projects/my-saas/channels", "name", "ops").redirects(t, "/settings/projects/my-saas")
	v1 := e.publish(acme, tidings.NewEvent{Event: "deploy 1432 started", ThreadKey: "deploy-1432"})
	v2 := e.publish(acme, tidings.NewEvent{Event: "deploy 1432 failing", ThreadKey: "deploy-1432", Priority: "urgent"})
	other := e.publish(acme, tidings.NewEvent{Event: "deploy 1432 elsewhere", ThreadKey: "deploy-1432", Project: "my-saas", Channel: "ops"})
	v3 := e.publish(acme, tidings.NewEvent{Event: "deploy 1432 done", ThreadKey: "deploy-1432"})

	for _, path := range []string{"/p/my-saas", "/p/my-saas/c/payments"} {
		feed := ada.get(path)
		feed.want(t, 200, `id="ev-`+v3.ID+`"`, `Updated <span class="thread-n">2 times</span>`,
			`<li data-id="`+v2.ID+`"><a href="/p/my-saas/events/`+v2.ID+`">deploy 1432 failing</a> <span class="prio prio-urgent">Urgent</span>`,
			`<li data-id="`+v1.ID+`"><a href="/p/my-saas/events/`+v1.ID+`">deploy 1432 started</a>`)
		for _, old := range []string{v1.ID, v2.ID} {
			if strings.Contains(feed.body, `id="ev-`+old+`"`) {
				t.Fatalf("%s: an earlier version is a card of its own", path)
			}
		}
	}
	// Another channel's key is another thread.
	ada.get("/p/my-saas").want(t, 200, `id="ev-`+other.ID+`"`)
	// A search: every version, unfolded.
	search := ada.get("/p/my-saas?q=deploy")
	search.want(t, 200, `id="ev-`+v1.ID+`"`, `id="ev-`+v2.ID+`"`, `id="ev-`+v3.ID+`"`)
	if strings.Contains(search.body, "thread-n") || strings.Contains(search.body, "data-thread") {
		t.Fatal("a search folds versions")
	}
	// An older page whose versions' latest is on a newer page shows none of them.
	ada.get("/p/my-saas/events/"+v2.ID).want(t, 200, "<code>deploy-1432</code> · an earlier version: 3 in all",
		`<a href="/p/my-saas/events/`+v3.ID+`">deploy 1432 done</a>`)
	ada.get("/p/my-saas/events/"+v3.ID).want(t, 200, "the latest of 3 versions")
}

// TestKeyThreadsAreCapped: a thread of many versions lists the latest few under its card.
func TestKeyThreadsAreCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	for i := 0; i < 14; i++ {
		e.publish(acme, tidings.NewEvent{Event: "build", ThreadKey: "build-7"})
	}
	feed := ada.get("/p/my-saas")
	feed.want(t, 200, `Updated <span class="thread-n">13 times</span>`, "… and 3 older")
	if n := strings.Count(feed.body, `<li data-id=`); n != 10 {
		t.Fatalf("%d versions listed, want 10", n)
	}
}

// TestUrgentOnlySettings: "urgent only" per project and channel, beside mute.
func TestUrgentOnlySettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	ada.get("/settings/notifications").want(t, 200, `name="urgent_only" value="my-saas/payments"`, "Urgent only")
	ada.post("/settings/notifications", "urgent_only", "my-saas/payments", "urgent_only", "my-saas/ops", "mute", "my-saas/noise").
		redirects(t, "/settings/notifications?saved=1")
	u, _ := e.store.FindUserByEmail(context.Background(), "ada@example.com")
	p, _ := e.store.NotifyPrefs(context.Background(), u.ID)
	if len(p.UrgentOnly) != 2 || !p.Holds(&tidings.Event{Project: "my-saas", Channel: "payments", Priority: tidings.PriorityHigh}) ||
		p.Holds(&tidings.Event{Project: "my-saas", Channel: "payments", Priority: tidings.PriorityUrgent}) {
		t.Fatalf("saved %+v", p)
	}
	// A channel not among the listed ones keeps its choice when the form is saved again.
	page := ada.get("/settings/notifications")
	page.want(t, 200, `value="my-saas/payments" checked aria-label="Urgent only from #payments"`, `value="my-saas/ops" checked`)
	ada.post("/settings/notifications", "urgent_only", "Not A Project").want(t, 400, "urgent only")
	ada.post("/settings/notifications", "urgent_only", "my-saas/Bad Channel").want(t, 400, "urgent only")
}

// TestEscalationSetting: owners set how urgent events are pushed again; bad values
// say what is accepted, like the page's other forms; members only read it.
func TestEscalationSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	ada.get("/settings/projects/my-saas").want(t, 200, `name="every"`, `value="5"`, `name="times"`, `value="12"`)
	ada.post("/settings/projects/my-saas/escalation", "every", "10", "times", "3").redirects(t, "/settings/projects/my-saas")
	ada.get("/settings/projects/my-saas").want(t, 200, "Urgent events are pushed again every 10 minutes, at most 3 times, until acknowledged for my-saas.",
		`id="every-my-saas" name="every" type="number" inputmode="numeric" min="1" max="1440" value="10"`)
	p, _ := e.store.FindProject(context.Background(), e.account("acme").ID, "my-saas")
	if p.RepeatUrgentEvery != 10*time.Minute || p.RepeatUrgentTimes != 3 {
		t.Fatalf("stored %v × %d", p.RepeatUrgentEvery, p.RepeatUrgentTimes)
	}
	for _, bad := range [][2]string{{"0", "3"}, {"1441", "3"}, {"ten", "3"}, {"5", "-1"}, {"5", "101"}, {"5", ""}} {
		page := ada.post("/settings/projects/my-saas/escalation", "every", bad[0], "times", bad[1])
		page.want(t, 400, `class="error" role="alert"`, "Repeat ")
		if strings.Contains(page.body, "repeat_urgent") {
			t.Fatalf("the error names the API's field: %s", excerpt(page.body))
		}
	}
	ada.post("/settings/projects/nope/escalation", "every", "5", "times", "1").want(t, 404)
	bob, _ := e.member(e.account("acme"), "bob@example.com")
	bob.post("/settings/projects/my-saas/escalation", "every", "1", "times", "1").want(t, 403)
	bob.get("/settings/projects/my-saas").want(t, 200, "Urgent events are pushed again every 10 minutes, at most 3 times, until acknowledged.")
}

// TestPushPress: a notification's button presses through POST /push/press with the
// press token of its device and event: by the device's owner, via the device's name.
func TestPushPress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	ctx := context.Background()
	ev := e.publish(acme, tidings.NewEvent{Event: "db down", Priority: "urgent", Actions: []tidings.Action{{Label: "Restart", ID: "restart"}}})
	plain := e.publish(acme, tidings.NewEvent{Event: "signup"})
	u, _ := e.store.FindUserByEmail(ctx, "ada@example.com")
	sub := &tidings.PushSubscription{AccountID: acme.ID, UserID: u.ID, Endpoint: "https://fcm.googleapis.com/fcm/send/x", P256dh: "k", Auth: "a", Name: "Pixel 8", Browser: "Chrome on Android"}
	if _, err := e.store.SavePushSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	key, err := tidings.PressKey(ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	c := e.client() // no session: the token is the authority
	press := func(body any) (int, string) {
		t.Helper()
		b, _ := json.Marshal(body)
		p := c.request("POST", "/push/press", "application/json", bytes.NewReader(b))
		return p.status, p.body
	}
	token := tidings.PressToken(key, sub.ID, ev.ID)
	if st, body := press(map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": token, "action": "restart"}); st != 200 || strings.TrimSpace(body) != `{"ok":true}` {
		t.Fatalf("press: %d %s", st, body)
	}
	presses, _ := e.store.ListPresses(ctx, acme.ID, ev.ID)
	if len(presses) != 1 || presses[0].By != "ada@example.com" || presses[0].Via != "Pixel 8" || presses[0].Label != "Restart" {
		t.Fatalf("presses %+v", presses)
	}
	if st, body := press(map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": token, "ack": true}); st != 200 {
		t.Fatalf("ack: %d %s", st, body)
	}
	if got, _ := e.store.FindEventByID(ctx, acme.ID, ev.ID); got.Ack == nil || got.Ack.By != "ada@example.com" {
		t.Fatalf("ack %+v", got.Ack)
	}
	ada.get("/p/my-saas/events/"+ev.ID).want(t, 200, "<strong>Restart</strong> by ada@example.com · via Pixel 8")

	for name, tc := range map[string]struct {
		body   any
		status int
	}{
		"bad token":              {map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": "x" + token[1:], "action": "restart"}, 403},
		"another event's token":  {map[string]any{"sub": sub.ID, "event_id": plain.ID, "token": token, "action": "restart"}, 403},
		"another device's token": {map[string]any{"sub": "push_other", "event_id": ev.ID, "token": token, "ack": true}, 403},
		"no token":               {map[string]any{"sub": sub.ID, "event_id": ev.ID, "action": "restart"}, 403},
		"no such action":         {map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": token, "action": "nope"}, 404},
		"event without buttons":  {map[string]any{"sub": sub.ID, "event_id": plain.ID, "token": tidings.PressToken(key, sub.ID, plain.ID), "action": "restart"}, 404},
		"no such event":          {map[string]any{"sub": sub.ID, "event_id": "nope", "token": tidings.PressToken(key, sub.ID, "nope"), "ack": true}, 404},
		"nothing pressed":        {map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": token}, 400},
		"not JSON":               {"restart", 400},
		"too large":              {map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": token, "action": strings.Repeat("a", 5000)}, 400},
	} {
		if st, body := press(tc.body); st != tc.status {
			t.Errorf("%s: %d, want %d: %s", name, st, tc.status, body)
		}
	}
	// A removed device has lost its power.
	if err := e.store.DeletePushSubscription(ctx, u.ID, sub.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := press(map[string]any{"sub": sub.ID, "event_id": ev.ID, "token": token, "action": "restart"}); st != 403 {
		t.Fatalf("removed device: %d", st)
	}
	if presses, _ := e.store.ListPresses(ctx, acme.ID, ev.ID); len(presses) != 1 {
		t.Fatalf("bad presses were recorded: %+v", presses)
	}
}

// cardOf is the HTML of one event's card in a page.
func cardOf(body, id string) string {
	i := strings.Index(body, `id="ev-`+id+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], "</article>")
	return body[i : i+j]
}

// TestLiveIntentCards: the card a stream sends carries the marks and buttons, and its
// thread (for the page to fold) only in a feed without a search.
func TestLiveIntentCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	plain, _ := c.openStream("")
	search, _ := c.openStream("?q=deploy")
	// Both are registered: a stream answers its headers after joining the hub.
	ev := e.publish(acme, tidings.NewEvent{Event: "deploy failed", ThreadKey: "deploy-7", Priority: "urgent",
		Actions: []tidings.Action{{Label: "Roll back", ID: "rollback"}}})
	next := func(msgs <-chan map[string]string) string {
		t.Helper()
		for {
			select {
			case m := <-msgs:
				if m["event"] == "event" {
					return m["data"]
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no event on the stream")
			}
		}
	}
	card := next(plain)
	for _, want := range []string{`data-thread="t`, `data-versions="1"`, `<span class="prio prio-urgent">Urgent</span>`,
		`action="/p/my-saas/events/` + ev.ID + `/ack"`, `<input type="hidden" name="back" value="/p/my-saas">`, `>Roll back</button>`} {
		if !strings.Contains(card, want) {
			t.Fatalf("live card lacks %q: %s", want, card)
		}
	}
	if card := next(search); strings.Contains(card, "data-thread") || !strings.Contains(card, `value="/p/my-saas?q=deploy"`) {
		t.Fatalf("a search's live card: %s", card)
	}
}
