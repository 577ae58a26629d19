package deliver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/pushtest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// pushEnv adds members with devices on a local push service that checks VAPID and
// decrypts what it is sent.
type pushEnv struct {
	*env
	svc   *pushtest.Service
	vapid *deliver.VAPID
}

func newPushEnv(t *testing.T) *pushEnv {
	e := newEnv(t)
	v, err := deliver.LoadVAPID(context.Background(), e.store, "", "mailto:ops@example.com")
	e.must(err)
	svc := pushtest.New(t)
	svc.VAPIDKey = v.Public
	return &pushEnv{env: e, svc: svc, vapid: v}
}

func (e *pushEnv) user(email string) *tidings.User {
	e.t.Helper()
	u := &tidings.User{AccountID: e.account.ID, Email: email, PasswordHash: "x", Role: tidings.UserMember}
	e.must(e.store.CreateUser(context.Background(), u))
	return u
}

func (e *pushEnv) device(u *tidings.User) (*pushtest.Device, *tidings.PushSubscription) {
	e.t.Helper()
	d := e.svc.Device()
	sub := &tidings.PushSubscription{AccountID: e.account.ID, UserID: u.ID, Endpoint: d.Endpoint, P256dh: d.P256dh, Auth: d.Auth}
	_, err := e.store.SavePushSubscription(context.Background(), sub)
	e.must(err)
	return d, sub
}

func (e *pushEnv) run() { e.env.run(deliver.Config{VAPID: e.vapid}) }

func message(t *testing.T, p pushtest.Push) deliver.Message {
	t.Helper()
	var m deliver.Message
	if err := json.Unmarshal(p.Plaintext, &m); err != nil {
		t.Fatalf("payload %q: %v", p.Plaintext, err)
	}
	return m
}

// TestPushToEveryDevice: a notify event reaches both devices of the account's members,
// encrypted, signed, under 3,000 bytes, with Urgency normal (its default priority), with the description as plain text; the event's
// records say "sent"; an event without notify pushes nothing.
func TestPushToEveryDevice(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ada, bob := e.user("ada@example.com"), e.user("bob@example.com")
	phone, phoneSub := e.device(ada)
	laptop, _ := e.device(bob)
	e.run()
	e.publish(tidings.NewEvent{Event: "quiet one"})
	ev := e.publish(tidings.NewEvent{Event: "New Subscription", Icon: "💰", Notify: true, Parser: tidings.ParserMarkdown,
		Description: "A **premium** plan: " + strings.Repeat("é", 400)})
	for _, d := range []*pushtest.Device{phone, laptop} {
		p := d.Next(t, 30*time.Second)
		m := message(t, p)
		if m.Title != "💰 New Subscription" || !strings.HasPrefix(m.Body, "A premium plan: ") || len([]rune(m.Body)) > 300 ||
			m.URL != "/p/my-saas/events/"+ev.ID || m.EventID != ev.ID || m.Project != "my-saas" || m.Channel != "payments" {
			t.Fatalf("message %+v", m)
		}
		if p.Size >= 3000 || p.Header.Get("Urgency") != "normal" || p.Header.Get("TTL") != "86400" {
			t.Fatalf("%d bytes, Urgency %q, TTL %q", p.Size, p.Header.Get("Urgency"), p.Header.Get("TTL"))
		}
		d.Quiet(t, 200*time.Millisecond)
	}
	waitFor(t, func() bool {
		recs, _ := e.store.EventPushes(context.Background(), e.account.ID, ev.ID)
		return len(recs) == 2 && recs[0].Status == tidings.PushSent && recs[1].Status == tidings.PushSent
	})
	// The device's last success is written after the event's record: wait for it too.
	waitFor(t, func() bool {
		got, err := e.store.FindPushSubscription(context.Background(), phoneSub.ID)
		return err == nil && !got.LastSuccessAt.IsZero()
	})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("condition not met within 30 s")
}

// TestGoneSubscriptionPruned: 410 from the push service deletes the subscription at once.
func TestGoneSubscriptionPruned(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	d, sub := e.device(e.user("ada@example.com"))
	d.Answer(nil, http.StatusGone)
	e.run()
	ev := e.publish(tidings.NewEvent{Event: "x", Notify: true})
	waitFor(t, func() bool {
		_, err := e.store.FindPushSubscription(context.Background(), sub.ID)
		return tidings.ErrorCode(err) == tidings.ENotFound
	})
	recs, _ := e.store.EventPushes(context.Background(), e.account.ID, ev.ID)
	if len(recs) != 1 || recs[0].Status != tidings.PushGone {
		t.Fatalf("records %+v", recs)
	}
}

// TestPushRetryAfter: 429 with Retry-After is retried, no sooner than it says.
func TestPushRetryAfter(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	d, _ := e.device(e.user("ada@example.com"))
	d.Answer(http.Header{"Retry-After": {"1"}}, http.StatusTooManyRequests)
	e.run()
	start := time.Now()
	e.publish(tidings.NewEvent{Event: "x", Notify: true})
	d.Next(t, 30*time.Second)
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Fatalf("retried after %v despite Retry-After: 1", took)
	}
}

// TestHangingPushServiceDoesNotDelayOthers: one device whose push service never answers
// does not hold up another's.
func TestHangingPushServiceDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ada := e.user("ada@example.com")
	stuck, _ := e.device(ada)
	release := make(chan struct{})
	stuck.Hang(release)
	t.Cleanup(func() { close(release) })
	fine, _ := e.device(ada)
	e.run()
	for i := 0; i < 3; i++ {
		e.publish(tidings.NewEvent{Event: "x", Notify: true})
		fine.Next(t, 30*time.Second)
	}
}

// TestMutedAndQuietSendNothing: a muted channel and quiet hours push nothing; at the
// end of the quiet hours one summary says how many arrived.
func TestMutedAndQuietSendNothing(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ctx := context.Background()
	muter, quiet := e.user("muter@example.com"), e.user("night@example.com")
	mutedDev, _ := e.device(muter)
	quietDev, _ := e.device(quiet)
	e.must(e.store.SetNotifyPrefs(ctx, muter.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas/payments"}}))
	now := time.Now().UTC()
	start := now.Hour()*60 + now.Minute()
	e.must(e.store.SetNotifyPrefs(ctx, quiet.ID, &tidings.NotifyPrefs{QuietStart: start, QuietEnd: (start + 2) % 1440, TimeZone: "UTC"}))
	e.run()
	var last *tidings.Event
	for i := 0; i < 3; i++ {
		last = e.publish(tidings.NewEvent{Event: "paid", Notify: true})
	}
	// The runner records why it sent nothing; then the devices must not have had a push.
	statuses := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); !(statuses[tidings.PushMuted] && statuses[tidings.PushQuiet]) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		recs, _ := e.store.EventPushes(ctx, e.account.ID, last.ID)
		for _, r := range recs {
			statuses[r.Status] = true
		}
	}
	if !statuses[tidings.PushMuted] || !statuses[tidings.PushQuiet] {
		t.Fatalf("records %v", statuses)
	}
	mutedDev.Quiet(t, 300*time.Millisecond)
	quietDev.Quiet(t, 10*time.Millisecond)
	// The summary is due at the end of the quiet hours (a minute or two from now):
	// bring it forward, as the clock would.
	jobs, err := e.store.ClaimDeliveries(ctx, now.Add(3*time.Minute), time.Millisecond, 100)
	e.must(err)
	var summary *tidings.Delivery
	for _, j := range jobs {
		if j.Kind == tidings.DeliverQuietSummary {
			if summary != nil {
				t.Fatal("two summaries for one quiet period")
			}
			summary = j
		}
	}
	if summary == nil {
		t.Fatalf("no summary job among %d", len(jobs))
	}
	e.must(e.store.RetryDelivery(ctx, summary.ID, 0, time.Now()))
	m := message(t, quietDev.Next(t, 30*time.Second))
	if m.Title != "3 events arrived during your quiet hours" {
		t.Fatalf("summary %+v", m)
	}
}

// TestBurstCollapsed: 40 notify events in a burst buzz a device at most 10 times a
// minute; the rest become a collapsed notification with a Topic, which the push service
// replaces while it is pending.
func TestBurstCollapsed(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	d, _ := e.device(e.user("ada@example.com"))
	e.run()
	start := time.Now()
	for i := 0; i < 40; i++ {
		e.publish(tidings.NewEvent{Event: "deploy loop", Notify: true})
	}
	normal, collapsed := 0, 0
	count := func(p pushtest.Push) {
		m := message(t, p)
		if p.Header.Get("Topic") != "" {
			collapsed++
			if !strings.HasSuffix(m.Title, "more events in #payments") || len(p.Header.Get("Topic")) > 32 {
				t.Fatalf("collapsed %+v topic %q", m, p.Header.Get("Topic"))
			}
			return
		}
		normal++
	}
	// The minute's pushes and a collapsed one arrive (each within a generous deadline),
	// then nothing but perhaps its replacement.
	for normal < tidings.PushesPerMinute || collapsed < 1 {
		count(d.Next(t, 30*time.Second))
		if normal > tidings.PushesPerMinute {
			break
		}
	}
	for _, p := range d.Drain(time.Second) {
		count(p)
	}
	// A collapsed one goes out at most every 10 s (deliver's collapseEvery): a loaded
	// machine that spreads the burst over longer may send a few more replacements.
	most := 1 + int(time.Since(start)/(10*time.Second))
	if normal != tidings.PushesPerMinute || collapsed < 1 || collapsed > most {
		t.Fatalf("%d notifications, %d collapsed (at most %d in %v), for 40 events", normal, collapsed, most, time.Since(start))
	}
}

// TestPushDeliveredAfterRestart: an acknowledged notify event whose process stopped
// before pushing is pushed by the next start.
func TestPushDeliveredAfterRestart(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	d, _ := e.device(e.user("ada@example.com"))
	ev := e.publish(tidings.NewEvent{Event: "acknowledged", Notify: true})
	e.must(e.store.Close())
	e.open()
	e.run()
	if m := message(t, d.Next(t, 30*time.Second)); m.EventID != ev.ID {
		t.Fatalf("pushed %+v", m)
	}
}

// TestPushEndpointRules: only https endpoints of known push services; keys must be real.
func TestPushEndpointRules(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for endpoint, ok := range map[string]bool{
		"https://fcm.googleapis.com/fcm/send/abc":                true,
		"https://updates.push.services.mozilla.com/wpush/v2/abc": true,
		"https://web.push.apple.com/QGuQyavXut":                  true,
		"https://wns2-par02p.notify.windows.com/w/?token=x":      true,
		"http://fcm.googleapis.com/fcm/send/abc":                 false,
		"https://evil.example/fcm.googleapis.com":                false,
		"https://fcm.googleapis.com.evil.example/x":              false,
		"https://127.0.0.1/push":                                 false,
		"https://fcm.googleapis.com:443/fcm/send/abc":            true,
		"https://fcm.googleapis.com:8443/fcm/send/abc":           false,
		"https://fcm.googleapis.com:22/fcm/send/abc":             false,
	} {
		if err := tidings.CheckPushEndpoint(endpoint, false); (err == nil) != ok {
			t.Errorf("%s: %v", endpoint, err)
		}
	}
	if err := tidings.CheckPushEndpoint("http://127.0.0.1:9/push", true); err != nil {
		t.Errorf("with --allow-private-targets: %v", err)
	}
	svc := pushtest.New(t)
	d := svc.Device()
	if err := tidings.CheckPushKeys(d.P256dh, d.Auth); err != nil {
		t.Fatal(err)
	}
	if tidings.CheckPushKeys("AAAA", d.Auth) == nil || tidings.CheckPushKeys(d.P256dh, "AAAA") == nil {
		t.Fatal("bad keys accepted")
	}
}

// TestLoadVAPID: the key pair is made once and kept (two starts agree), or read from a
// file; a subject must be a mailto: or https: contact.
func TestLoadVAPID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	first, err := deliver.LoadVAPID(ctx, e.store, "", "")
	e.must(err)
	second, err := deliver.LoadVAPID(ctx, e.store, "", "mailto:ops@example.com")
	e.must(err)
	if first.Public != second.Public || first.Subject != "mailto:admin@localhost" || len(first.Public) != 87 {
		t.Fatalf("keys %q %q, subject %q", first.Public, second.Public, first.Subject)
	}
	file := t.TempDir() + "/vapid.key"
	e.must(os.WriteFile(file, []byte(first.Private+"\n"), 0o600))
	fromFile, err := deliver.LoadVAPID(ctx, e.store, file, "https://tidings.example.com")
	e.must(err)
	if fromFile.Public != first.Public {
		t.Fatal("the key file gives another public key")
	}
	if _, err := deliver.LoadVAPID(ctx, e.store, "", "admin@example.com"); err == nil {
		t.Fatal("a subject without mailto: accepted")
	}
	e.must(os.WriteFile(file, []byte("not a key"), 0o600))
	if _, err := deliver.LoadVAPID(ctx, e.store, file, ""); err == nil {
		t.Fatal("a broken key file accepted")
	}
}
