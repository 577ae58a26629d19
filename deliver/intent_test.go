package deliver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/pushtest"
)

// payload is a push's JSON as the service worker reads it, by its field names.
func payload(t *testing.T, p pushtest.Push) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(p.Plaintext, &m); err != nil {
		t.Fatalf("payload %q: %v", p.Plaintext, err)
	}
	return m
}

// TestPushIntentPayload: an urgent event with a url, actions and a key reaches the
// device with Urgency high, its key as Topic, and the fields the service worker needs
// (priority, url, event_url, actions, key, tag, require_interaction, ack, press with a
// token only this server makes); a new version of the key has the same tag and Topic
// and buzzes again; min, low and default map to their Urgency; a long key is hashed.
func TestPushIntentPayload(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ctx := context.Background()
	d, sub := e.device(e.user("ada@example.com"))
	e.run()
	actions := []tidings.Action{{Label: "Open PR", URL: "https://github.com/acme/api/pull/1"}, {Label: "Approve", ID: "approve"}}
	ev := e.publish(tidings.NewEvent{Event: "Deploy waiting", Icon: "🚀", Notify: true, Priority: "urgent",
		URL: "https://ci.example.com/run/1", Actions: actions, ThreadKey: "deploy-1432"})
	p := d.Next(t, 30*time.Second)
	if p.Header.Get("Urgency") != "high" || p.Header.Get("Topic") != "deploy-1432" || p.Size >= 3000 {
		t.Fatalf("Urgency %q, Topic %q, %d bytes", p.Header.Get("Urgency"), p.Header.Get("Topic"), p.Size)
	}
	raw := payload(t, p)
	for field, want := range map[string]any{"priority": "urgent", "url": "https://ci.example.com/run/1",
		"event_url": "/p/my-saas/events/" + ev.ID, "key": "deploy-1432", "require_interaction": true, "ack": true,
		"title": "🚀 Deploy waiting", "event_id": ev.ID} {
		if raw[field] != want {
			t.Errorf("%s: %v, want %v", field, raw[field], want)
		}
	}
	// renotify is set on every keyed event: on the first version it changes nothing
	// (no notification with its tag is shown yet).
	for _, absent := range []string{"silent"} {
		if _, ok := raw[absent]; ok {
			t.Errorf("%s set on the first urgent push: %s", absent, p.Plaintext)
		}
	}
	m := message(t, p)
	if len(m.Actions) != 2 || m.Actions[0] != actions[0] || m.Actions[1] != actions[1] {
		t.Fatalf("actions %+v", m.Actions)
	}
	if !strings.HasPrefix(m.Tag, "k-") || len(m.Tag) != 26 {
		t.Fatalf("tag %q", m.Tag)
	}
	key, err := tidings.PressKey(ctx, e.store)
	e.must(err)
	press, _ := raw["press"].(map[string]any)
	if m.Press == nil || press["sub"] != sub.ID || !tidings.CheckPressToken(key, sub.ID, ev.ID, m.Press.Token) {
		t.Fatalf("press %v (sub %s)", raw["press"], sub.ID)
	}

	// A new version: same tag and Topic, buzzes again; low arrives silently.
	v2 := e.publish(tidings.NewEvent{Event: "Deploy done", Notify: true, Priority: "low", ThreadKey: "deploy-1432"})
	p2 := d.Next(t, 30*time.Second)
	m2 := message(t, p2)
	if p2.Header.Get("Urgency") != "low" || p2.Header.Get("Topic") != "deploy-1432" || m2.Tag != m.Tag || m2.EventID != v2.ID ||
		!m2.Renotify || !m2.Silent || m2.Ack || m2.RequireInteraction || m2.Press != nil || m2.Priority != "low" ||
		m2.URL != "/p/my-saas/events/"+v2.ID || m2.EventURL != m2.URL {
		t.Fatalf("new version: Urgency %q Topic %q %s", p2.Header.Get("Urgency"), p2.Header.Get("Topic"), p2.Plaintext)
	}

	for _, c := range []struct{ priority, urgency string }{{"min", "very-low"}, {"default", "normal"}, {"high", "high"}} {
		ev := e.publish(tidings.NewEvent{Event: "plain " + c.priority, Notify: true, Priority: c.priority})
		p := d.Next(t, 30*time.Second)
		m := message(t, p)
		if p.Header.Get("Urgency") != c.urgency || p.Header.Get("Topic") != "" || m.Tag != ev.ID || m.Priority != c.priority ||
			m.Silent != (c.priority == "min") || m.Renotify || m.Press != nil {
			t.Fatalf("%s: Urgency %q Topic %q %s", c.priority, p.Header.Get("Urgency"), p.Header.Get("Topic"), p.Plaintext)
		}
	}

	// A key that is not a Topic is hashed to 32 URL-safe characters; an id action asks
	// for a press token without an acknowledgement.
	e.publish(tidings.NewEvent{Event: "Order", Notify: true, ThreadKey: "order 981 / Zürich",
		Actions: []tidings.Action{{Label: "Refund", ID: "refund"}}})
	p3 := d.Next(t, 30*time.Second)
	m3 := message(t, p3)
	topic := p3.Header.Get("Topic")
	if len(topic) != 32 || topic[0] != 'k' || strings.Trim(topic, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" ||
		m3.Key != "order 981 / Zürich" || m3.Tag == m.Tag || m3.Press == nil || m3.Ack {
		t.Fatalf("hashed Topic %q, %s", topic, p3.Plaintext)
	}
}

// worst is the character of the most JSON bytes that the field accepts.
func worst(t *testing.T, field string, check func(s string) bool) string {
	t.Helper()
	for _, c := range []string{"\u2028", "\u00ad", "𝔸", "\"", "é"} {
		if check(c) {
			return c
		}
	}
	t.Fatalf("%s accepts none of the candidates", field)
	return ""
}

// TestPushPayloadFitsAtMaximum: with every field at its maximum (the longest project,
// channel, name, key, url, labels and action URLs, in the characters that cost the most
// bytes), the encrypted message stays under 3,000 bytes: the body, then the action
// URLs, then the url are dropped, and the rest arrives.
func TestPushPayloadFitsAtMaximum(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ctx := context.Background()
	name := ""
	for n := 200; n > 0 && name == ""; n-- {
		if s := strings.Repeat("p", n); tidings.ValidName(s) {
			name = s
		}
	}
	_, err := e.store.CreateProject(ctx, e.account.ID, name)
	e.must(err)
	_, err = e.store.CreateChannel(ctx, e.account.ID, name, name)
	e.must(err)
	d, _ := e.device(e.user("ada@example.com"))
	e.run()

	valid := func(mod func(*tidings.NewEvent)) bool {
		ev := tidings.NewEvent{Project: name, Channel: name, Event: "x"}
		mod(&ev)
		var p tidings.Problems
		ev.Check(&p, time.Now())
		return p.Err() == nil
	}
	ec := worst(t, "event", func(c string) bool { return valid(func(ev *tidings.NewEvent) { ev.Event = c + c }) })
	kc := worst(t, "key", func(c string) bool { return valid(func(ev *tidings.NewEvent) { ev.ThreadKey = c + c }) })
	lc := worst(t, "label", func(c string) bool {
		return valid(func(ev *tidings.NewEvent) { ev.Actions = []tidings.Action{{Label: c + c, ID: "a"}} })
	})
	link := "https://example.com/" + strings.Repeat("%22", (tidings.MaxURLLen-20)/3)
	link += strings.Repeat("a", tidings.MaxURLLen-len(link))
	id := ""
	for n := 200; n > 0 && id == ""; n-- {
		if s := strings.Repeat("i", n); tidings.ValidName(s) {
			id = s
		}
	}
	label := strings.Repeat(lc, tidings.MaxActionLabelLen)
	ne := tidings.NewEvent{Project: name, Channel: name, Event: strings.Repeat(ec, tidings.MaxEventNameLen), Icon: "👩‍👩‍👧‍👦",
		Description: strings.Repeat("𝔸", tidings.MaxDescriptionLen), Notify: true, Priority: "urgent", URL: link,
		ThreadKey: strings.Repeat(kc, tidings.MaxKeyLen), Parser: tidings.ParserText,
		Actions: []tidings.Action{{Label: label, URL: link}, {Label: label, URL: link}, {Label: label, ID: id}}}
	var p tidings.Problems
	ne.Check(&p, time.Now())
	if err := p.Err(); err != nil {
		t.Fatalf("the largest event is not valid: %v", err)
	}
	ev, err := e.store.PublishEvent(ctx, e.account.ID, &ne)
	e.must(err)
	push := d.Next(t, 30*time.Second)
	if push.Size >= 3000 {
		t.Fatalf("%d encrypted bytes", push.Size)
	}
	m := message(t, push)
	if m.EventID != ev.ID || m.Title != ev.Icon+" "+ev.Event || m.Key != ev.ThreadKey || m.Body != "" || len(m.Actions) != 3 ||
		m.Actions[2].ID != id || m.Actions[0].Label != label || m.Press == nil || !m.RequireInteraction || m.Tag != deliver.Tag(ev) {
		t.Fatalf("%d plaintext bytes (%d runes of title): %.300s", len(push.Plaintext), utf8.RuneCountInString(m.Title), push.Plaintext)
	}
	t.Logf("largest message: %d bytes of JSON, %d encrypted; url kept: %v, action URLs kept: %v",
		len(push.Plaintext), push.Size, m.URL == link, m.Actions[0].URL != "")
}

// TestUrgentPassesQuietHoursAndFlood: quiet hours hold a high event and let an urgent
// one through; so does flood control after a device's 10 pushes of the minute.
func TestUrgentPassesQuietHoursAndFlood(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ctx := context.Background()
	night, busy := e.user("night@example.com"), e.user("busy@example.com")
	quietDev, _ := e.device(night)
	busyDev, _ := e.device(busy)
	now := time.Now().UTC()
	start := now.Hour()*60 + now.Minute()
	e.must(e.store.SetNotifyPrefs(ctx, night.ID, &tidings.NotifyPrefs{QuietStart: start, QuietEnd: (start + 2) % 1440, TimeZone: "UTC"}))
	e.run()
	for i := 0; i < tidings.PushesPerMinute; i++ {
		e.publish(tidings.NewEvent{Event: "fill", Notify: true})
	}
	for i := 0; i < tidings.PushesPerMinute; i++ {
		busyDev.Next(t, 30*time.Second)
	}
	high := e.publish(tidings.NewEvent{Event: "high", Notify: true, Priority: "high"})
	urgent := e.publish(tidings.NewEvent{Event: "urgent", Notify: true, Priority: "urgent"})
	// The quiet device gets the urgent event alone.
	if m := message(t, quietDev.Next(t, 30*time.Second)); m.EventID != urgent.ID {
		t.Fatalf("during quiet hours: %+v", m)
	}
	quietDev.Quiet(t, 300*time.Millisecond)
	// The flooded device gets the urgent event as itself, the high one at most counted
	// in a collapsed notification.
	gotUrgent := false
	for _, p := range append([]pushtest.Push{busyDev.Next(t, 30*time.Second)}, busyDev.Drain(500*time.Millisecond)...) {
		m := message(t, p)
		switch {
		case m.EventID == urgent.ID && p.Header.Get("Urgency") == "high":
			gotUrgent = true
		case m.EventID == high.ID:
			t.Fatalf("the high event passed flood control: %s", p.Plaintext)
		}
	}
	if !gotUrgent {
		t.Fatal("the urgent event was held by flood control")
	}
	waitFor(t, func() bool {
		recs, _ := e.store.EventPushes(ctx, e.account.ID, high.ID)
		for _, r := range recs {
			if r.UserID == night.ID && r.Status == tidings.PushQuiet {
				return true
			}
		}
		return false
	})
}

// TestUrgentOnlyAndMutes: "urgent only" holds a high event (recorded as muted) and lets
// an urgent one through; a mute holds even an urgent one.
func TestUrgentOnlyAndMutes(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ctx := context.Background()
	ada, bob := e.user("ada@example.com"), e.user("bob@example.com")
	adaDev, _ := e.device(ada)
	bobDev, _ := e.device(bob)
	e.must(e.store.SetNotifyPrefs(ctx, ada.ID, &tidings.NotifyPrefs{UrgentOnly: []string{"my-saas/payments"}}))
	e.must(e.store.SetNotifyPrefs(ctx, bob.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas"}}))
	e.run()
	high := e.publish(tidings.NewEvent{Event: "high", Notify: true, Priority: "high"})
	urgent := e.publish(tidings.NewEvent{Event: "urgent", Notify: true, Priority: "urgent"})
	if m := message(t, adaDev.Next(t, 30*time.Second)); m.EventID != urgent.ID {
		t.Fatalf("urgent only: %+v", m)
	}
	waitFor(t, func() bool {
		hr, _ := e.store.EventPushes(ctx, e.account.ID, high.ID)
		ur, _ := e.store.EventPushes(ctx, e.account.ID, urgent.ID)
		status := map[string]string{}
		for _, r := range hr {
			status["high/"+r.SubscriptionID] = r.Status
		}
		for _, r := range ur {
			status["urgent/"+r.SubscriptionID] = r.Status
		}
		muted := 0
		for k, s := range status {
			if s == tidings.PushMuted && (strings.HasPrefix(k, "high/") || k == "urgent/"+bobSub(t, e, bob)) {
				muted++
			}
		}
		return muted == 3
	})
	adaDev.Quiet(t, 300*time.Millisecond)
	bobDev.Quiet(t, 10*time.Millisecond)
}

func bobSub(t *testing.T, e *pushEnv, u *tidings.User) string {
	subs, err := e.store.ListPushSubscriptions(context.Background(), u.ID)
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions of %s: %v %v", u.Email, subs, err)
	}
	return subs[0].ID
}
