package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pushtest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestPushInChromium: Settings → Devices subscribes this browser with the server's VAPID
// key and sends the subscription; the service worker shows a pushed message as a
// notification, and a click on it opens the event's page.
func TestPushInChromium(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	m := startServer(t, testbackend.Location(t), nil)
	b := newBrowser(t, m.URL())
	b.do(chromedp.Navigate(m.URL() + "/"))
	b.submit("#account", "acme", "#email", "ada@example.com", "#password", "correct horse", "#password2", "correct horse")
	b.do(chromedp.Navigate(m.URL() + "/settings/projects")) // from the getting-started checklist, where sign-up lands
	b.submit("#new-project", "my-saas")
	b.submit("#ch-my-saas", "payments")
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: m.URL()}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(m.URL() + "/settings/devices"))
	b.checkLabels("devices")

	// No real push service is reachable here: the browser's subscribe() answers with a
	// subscription the test made (the keys of a local device) and keeps the key the
	// page asked it to subscribe with.
	dev := pushtest.New(t).Device()
	endpoint := "https://fcm.googleapis.com/fcm/send/chromium-test"
	get(b, chromedp.Evaluate[bool](fmt.Sprintf(`PushManager.prototype.subscribe = function (opts) {
		sessionStorage.setItem("askedKey", btoa(String.fromCharCode.apply(null, new Uint8Array(opts.applicationServerKey))));
		return Promise.resolve({ toJSON: function () { return { endpoint: %q, expirationTime: null, keys: { p256dh: %q, auth: %q } }; } });
	}; true`, endpoint, dev.P256dh, dev.Auth)))
	b.do(chromedp.SetValue(chromedp.CSS("#device-name"), "Test phone"))
	b.click(`document.getElementById("enable-button").click()`)
	b.mustUntil(`document.querySelector(".devices") && document.querySelector(".devices").textContent.includes("Test phone")`)
	asked := get(b, chromedp.Evaluate[string](`sessionStorage.getItem("askedKey")`))
	r, err := http.Get(m.URL() + "/push/vapid-key")
	if err != nil {
		t.Fatal(err)
	}
	var vk struct{ Key string }
	json.NewDecoder(r.Body).Decode(&vk)
	r.Body.Close()
	raw, _ := base64.RawURLEncoding.DecodeString(vk.Key)
	if len(raw) != 65 || asked != base64.StdEncoding.EncodeToString(raw) {
		t.Fatalf("the page subscribed with key %q, the server's is %q", asked, vk.Key)
	}
	acme, _ := m.store.FindAccount(context.Background(), "acme")
	subs, _ := m.store.AccountPushSubscriptions(context.Background(), acme.ID)
	if len(subs) != 1 || subs[0].Endpoint != endpoint || subs[0].P256dh != dev.P256dh || subs[0].Name != "Test phone" {
		t.Fatalf("stored subscriptions %+v", subs)
	}
	b.screenshot("settings-devices")

	// A push message, delivered to the service worker as a push service would.
	ev, err := m.store.PublishEvent(context.Background(), acme.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments",
		Event: "New Subscription", Icon: "💰", Parser: "text"})
	if err != nil {
		t.Fatal(err)
	}
	// The listener is in place before Enable, which reports the registrations there
	// are: a listener started in a goroutine could miss that report (seen in CI).
	regs := make(chan serviceworker.RegistrationID, 64)
	listening, stopListening := context.WithCancel(b.ctx)
	defer stopListening()
	if err := chromedp.Listen(listening, func(e any) {
		if u, ok := e.(*serviceworker.EventWorkerRegistrationUpdated); ok {
			for _, r := range u.Registrations {
				if strings.HasPrefix(r.ScopeURL, m.URL()) && !r.IsDeleted {
					select {
					case regs <- r.RegistrationID:
					default:
					}
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	var reg serviceworker.RegistrationID
	select {
	case reg = <-regs:
	case <-time.After(30 * time.Second):
		t.Fatal("no service worker registration within 30 s")
	}
	msg, _ := json.Marshal(map[string]string{"title": "💰 New Subscription", "body": "A premium plan", "url": "/p/my-saas/events/" + ev.ID,
		"project": "my-saas", "channel": "payments", "event_id": ev.ID, "tag": ev.ID})
	// The worker must be active to take a push; one that arrives while it is still
	// starting is lost, so the push is sent again (its tag makes the copy replace the
	// first) until a notification shows.
	get(b, chromedp.Evaluate[bool](`navigator.serviceWorker.ready.then(() => true)`, chromedp.EvalAwaitPromise))
	var shown []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && len(shown) == 0; {
		if _, err := chromedp.Call(b.ctx, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
			Origin: m.URL(), RegistrationID: reg, Data: string(msg)}); err != nil {
			t.Fatal(err)
		}
		for again := time.Now().Add(5 * time.Second); time.Now().Before(again) && len(shown) == 0; time.Sleep(100 * time.Millisecond) {
			shown = get(b, chromedp.Evaluate[[]string](`navigator.serviceWorker.ready.then(r => r.getNotifications())
				.then(ns => ns.map(n => n.title + "|" + n.body + "|" + n.data.url))`, chromedp.EvalAwaitPromise))
		}
	}
	want := "💰 New Subscription|A premium plan|/p/my-saas/events/" + ev.ID
	if len(shown) != 1 || shown[0] != want {
		t.Fatalf("notifications shown: %q, want %q", shown, want)
	}

	// A click on it (dispatched in the service worker, as the system would) opens the event.
	targets, err := chromedp.Targets(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var worker target.ID
	for _, ti := range targets {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, m.URL()) {
			worker = ti.TargetID
		}
	}
	if worker == "" {
		t.Fatal("no service worker target")
	}
	swCtx, swCancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(worker))
	defer swCancel()
	clickCtx, clickCancel := context.WithTimeout(swCtx, 15*time.Second)
	defer clickCancel()
	if _, err := chromedp.Run(clickCtx, chromedp.Evaluate[string](`self.registration.getNotifications().then(ns => {
		self.dispatchEvent(new NotificationEvent("notificationclick", { notification: ns[0] }));
		return ns[0].data.url; })`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("clicking the notification: %v", err)
	}
	// The page navigates: poll its address, not a script in a context that goes away.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		if err == nil && strings.HasSuffix(loc, "/p/my-saas/events/"+ev.ID) {
			break
		}
		if time.Now().After(deadline) {
			b.screenshot("failure")
			t.Fatalf("the click did not open the event: at %q (%v)", loc, err)
		}
	}
	b.mustUntil(`document.querySelector(".ev-name") && document.querySelector(".ev-name").textContent === "New Subscription"`)

	// An urgent event with buttons: the notification shows Acknowledge and the event's
	// buttons as actions, stays on screen, and buzzes again for the same tag; pressing
	// a button records the press through /push/press in the background (no window
	// opens), as the device's owner from the device.
	urgent, err := m.store.PublishEvent(context.Background(), acme.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments",
		Event: "Database down", Parser: "text", Priority: "urgent", Notify: true,
		Actions: []tidings.Action{{Label: "Fail over", ID: "failover"}, {Label: "Charts", URL: m.URL() + "/p/my-saas/charts"}}})
	if err != nil {
		t.Fatal(err)
	}
	key, err := tidings.PressKey(context.Background(), m.store)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ = json.Marshal(map[string]any{"title": "🔥 Database down", "body": "", "url": "/p/my-saas/events/" + urgent.ID,
		"event_url": "/p/my-saas/events/" + urgent.ID, "project": "my-saas", "channel": "payments", "event_id": urgent.ID,
		"tag": urgent.ID, "priority": "urgent", "require_interaction": true, "renotify": true, "ack": true,
		"actions": []map[string]string{{"label": "Fail over", "id": "failover"}, {"label": "Charts", "url": m.URL() + "/p/my-saas/charts"}},
		"press":   map[string]string{"sub": subs[0].ID, "token": tidings.PressToken(key, subs[0].ID, urgent.ID)}})
	var shownUrgent string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && shownUrgent == ""; {
		if _, err := chromedp.Call(b.ctx, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
			Origin: m.URL(), RegistrationID: reg, Data: string(msg)}); err != nil {
			t.Fatal(err)
		}
		for again := time.Now().Add(5 * time.Second); time.Now().Before(again) && shownUrgent == ""; time.Sleep(100 * time.Millisecond) {
			shownUrgent = get(b, chromedp.Evaluate[string](`navigator.serviceWorker.ready.then(r => r.getNotifications({tag: "`+urgent.ID+`"}))
				.then(ns => ns.length ? JSON.stringify({title: ns[0].title, actions: ns[0].actions.map(a => a.action + "=" + a.title),
					requireInteraction: ns[0].requireInteraction, renotify: ns[0].renotify, silent: ns[0].silent}) : "")`, chromedp.EvalAwaitPromise))
		}
	}
	var got struct {
		Title              string
		Actions            []string
		RequireInteraction bool
		Renotify, Silent   bool
	}
	if err := json.Unmarshal([]byte(shownUrgent), &got); err != nil {
		t.Fatalf("the urgent notification: %q (%v)", shownUrgent, err)
	}
	// Chromium shows two actions: Acknowledge first, then the first of the event's.
	if got.Title != "🔥 Database down" || !got.RequireInteraction || !got.Renotify || got.Silent ||
		len(got.Actions) < 2 || got.Actions[0] != "ack=Acknowledge" || got.Actions[1] != "id:failover=Fail over" {
		t.Fatalf("the urgent notification: %+v", got)
	}
	pages := func() int {
		n := 0
		ts, _ := chromedp.Targets(b.ctx)
		for _, ti := range ts {
			if ti.Type == "page" {
				n++
			}
		}
		return n
	}
	before := pages()
	pressIn := func(action string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(swCtx, 15*time.Second)
		defer cancel()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`self.registration.getNotifications({tag: "`+urgent.ID+`"}).then(ns => {
			self.dispatchEvent(new NotificationEvent("notificationclick", { notification: ns[0], action: "`+action+`" }));
			return true; })`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("pressing %s: %v", action, err)
		}
	}
	// showAgain delivers the urgent push again (a press closes its notification).
	// The press closed the notification; the close is carried out by the browser
	// apart from the page, so the test waits for it to be gone before the push comes
	// again (a late close would take the new one with it), and delivers the push again
	// now and then until it shows.
	urgentShown := func() int {
		return get(b, chromedp.Evaluate[int](`navigator.serviceWorker.ready
			.then(r => r.getNotifications({tag: "`+urgent.ID+`"})).then(ns => ns.length)`, chromedp.EvalAwaitPromise))
	}
	showAgain := func() {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); urgentShown() != 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		}
		deliver := func() {
			if _, err := chromedp.Call(b.ctx, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
				Origin: m.URL(), RegistrationID: reg, Data: string(msg)}); err != nil {
				t.Fatal(err)
			}
		}
		deliver()
		last := time.Now()
		for deadline := time.Now().Add(60 * time.Second); urgentShown() != 1; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the urgent notification did not show again")
			}
			if time.Since(last) > 5*time.Second {
				deliver()
				last = time.Now()
			}
		}
	}
	pressIn("id:failover")
	var presses []*tidings.ActionPress
	for deadline := time.Now().Add(30 * time.Second); len(presses) == 0; time.Sleep(100 * time.Millisecond) {
		if presses, err = m.store.ListPresses(context.Background(), acme.ID, urgent.ID); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the notification's button press was not recorded within 30 s")
		}
	}
	if p := presses[0]; len(presses) != 1 || p.ActionID != "failover" || p.By != "ada@example.com" || p.Via != "Test phone" {
		t.Fatalf("presses %+v", presses[0])
	}
	// Acknowledge, from the notification.
	showAgain()
	pressIn("ack")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ev, err := m.store.FindEventByID(context.Background(), acme.ID, urgent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Ack != nil {
			if ev.Ack.By != "ada@example.com" {
				t.Fatalf("acknowledged by %q", ev.Ack.By)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the notification's Acknowledge was not recorded within 30 s")
		}
	}
	if n := pages(); n != before {
		t.Fatalf("a press opened a window: %d pages, %d before", n, before)
	}
	// A URL action opens its URL (here one of the dashboard's, in its tab).
	showAgain()
	pressIn("url:1")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		if err == nil && strings.HasSuffix(loc, "/p/my-saas/charts") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the URL action did not open its URL: at %q (%v)", loc, err)
		}
	}
}
