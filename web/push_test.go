package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pushtest"
	"github.com/tidings-dev/tidings/web"
)

// sendJSON makes a request with a JSON body as the dashboard's script does.
func (c *client) sendJSON(method, path, body string, header ...string) (int, string) {
	c.e.t.Helper()
	p := c.request(method, path, "application/json", strings.NewReader(body), append([]string{"Sec-Fetch-Site", "same-origin"}, header...)...)
	return p.status, p.body
}

// TestPushSubscriptions: the contract's /push endpoints — the VAPID key for anyone; a
// signed-in user's own devices only; endpoints of known push services only.
func TestPushSubscriptions(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{VAPIDPublicKey: "BPUBLICKEY"})
	ada := e.owner()
	svc := pushtest.New(t)
	dev := svc.Device()
	fcm := "https://fcm.googleapis.com/fcm/send/" + dev.ID
	body := func(endpoint, name string) string {
		return fmt.Sprintf(`{"endpoint":%q,"expirationTime":null,"keys":{"p256dh":%q,"auth":%q},"name":%q}`, endpoint, dev.P256dh, dev.Auth, name)
	}

	if status, b := e.client().sendJSON("GET", "/push/vapid-key", ""); status != 200 || !strings.Contains(b, `"key":"BPUBLICKEY"`) {
		t.Fatalf("vapid key: %d %s", status, b)
	}
	for name, c := range map[string]struct{ body, want string }{
		"not JSON":        {`{"endpoint":`, "invalid_json"},
		"unknown field":   {`{"endpoint":"` + fcm + `","keys":{},"colour":1}`, "invalid_json"},
		"http endpoint":   {body("http://fcm.googleapis.com/fcm/send/x", ""), "https://"},
		"unknown service": {body("https://evil.example/push", ""), "not a known push service"},
		"loopback":        {body(dev.Endpoint, ""), "https://"},
		"bad keys":        {strings.Replace(body(fcm, ""), dev.P256dh, "AAAA", 1), "p256dh"},
		"control in name": {body(fcm, "a\u0007b"), "name"},
		"name 65 chars":   {body(fcm, strings.Repeat("n", 65)), "name"},
	} {
		status, b := ada.sendJSON("POST", "/push/subscriptions", c.body)
		if status != 400 || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d %s", name, status, b)
		}
		// Every problem carries its text in message too, as the API's do.
		var pr struct{ Detail, Message string }
		if err := json.Unmarshal([]byte(b), &pr); err != nil || pr.Message == "" || pr.Message != pr.Detail {
			t.Errorf("%s: message %q, detail %q (%v)", name, pr.Message, pr.Detail, err)
		}
	}
	android := "Mozilla/5.0 (Linux; Android 14) Chrome/130.0 Mobile Safari/537.36"
	status, b := ada.sendJSON("POST", "/push/subscriptions", body(fcm, "Pixel 8"), "User-Agent", android)
	var created struct{ ID string }
	json.Unmarshal([]byte(b), &created)
	if status != 201 || created.ID == "" {
		t.Fatalf("subscribe: %d %s", status, b)
	}
	if status, b := ada.sendJSON("POST", "/push/subscriptions", body(fcm, ""), "User-Agent", android); status != 200 || !strings.Contains(b, created.ID) {
		t.Fatalf("the same endpoint again: %d %s", status, b)
	}
	status, b = ada.sendJSON("GET", "/push/subscriptions", "")
	var list struct {
		Subscriptions []struct {
			ID, Name, Browser string
			EndpointHost      string  `json:"endpoint_host"`
			CreatedAt         string  `json:"created_at"`
			LastSuccessAt     *string `json:"last_success_at"`
		}
	}
	json.Unmarshal([]byte(b), &list)
	if status != 200 || len(list.Subscriptions) != 1 || list.Subscriptions[0].Name != "Pixel 8" || list.Subscriptions[0].EndpointHost != "fcm.googleapis.com" ||
		list.Subscriptions[0].Browser != "Chrome on Android" || list.Subscriptions[0].LastSuccessAt != nil || strings.Contains(b, dev.ID) {
		t.Fatalf("list: %d %s", status, b)
	}

	// Another member sees none of ada's devices and cannot touch them.
	bob, _ := e.member(e.account("acme"), "bob@example.com")
	if _, b := bob.sendJSON("GET", "/push/subscriptions", ""); strings.Contains(b, created.ID) {
		t.Fatalf("bob sees ada's device: %s", b)
	}
	if status, _ := bob.sendJSON("DELETE", "/push/subscriptions/"+created.ID, ""); status != 404 {
		t.Fatalf("bob deletes ada's device: %d", status)
	}
	if status, _ := bob.sendJSON("POST", "/push/subscriptions/"+created.ID+"/test", ""); status != 404 {
		t.Fatalf("bob tests ada's device: %d", status)
	}
	// Forms from other sites are refused here too.
	if status, _ := ada.sendJSON("DELETE", "/push/subscriptions/"+created.ID, "", "Sec-Fetch-Site", "cross-site"); status != 403 {
		t.Fatalf("cross-site delete: %d", status)
	}
	if status, _ := e.client().sendJSON("POST", "/push/subscriptions", body(fcm, "")); status != http.StatusSeeOther {
		t.Fatalf("signed out: %d", status)
	}

	if status, _ := ada.sendJSON("POST", "/push/subscriptions/"+created.ID+"/test", ""); status != 202 {
		t.Fatalf("test: %d", status)
	}
	if n, _, _ := e.store.PendingDeliveries(context.Background()); n != 1 {
		t.Fatalf("the test queued %d deliveries", n)
	}
	ada.get("/settings/devices").want(t, 200, "Pixel 8", "Chrome on Android", "via fcm.googleapis.com", "nothing delivered yet")
	ada.get("/settings/devices/"+created.ID).want(t, 200, "Pixel 8", "Push service", "fcm.googleapis.com", "Danger zone")
	ada.post("/settings/devices/"+created.ID+"/rename", "name", "Work phone").redirects(t, "/settings/devices/"+created.ID)
	ada.get("/settings/devices/"+created.ID).want(t, 200, "Device renamed to “Work phone”.", `value="Work phone"`)
	ada.get("/settings/devices").want(t, 200, "Work phone", `href="/settings/devices/`+created.ID+`"`)
	if status, _ := ada.sendJSON("DELETE", "/push/subscriptions/"+created.ID, ""); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if _, b := ada.sendJSON("GET", "/push/subscriptions", ""); strings.Contains(b, created.ID) {
		t.Fatalf("deleted device listed: %s", b)
	}

	// At most 20 devices per user.
	for i := 0; i < tidings.MaxDevicesPerUser; i++ {
		if status, b := ada.sendJSON("POST", "/push/subscriptions", body(fmt.Sprintf("https://fcm.googleapis.com/fcm/send/%d", i), "")); status != 201 {
			t.Fatalf("device %d: %d %s", i, status, b)
		}
	}
	if status, _ := ada.sendJSON("POST", "/push/subscriptions", body("https://fcm.googleapis.com/fcm/send/more", "")); status != 409 {
		t.Fatalf("21st device: %d", status)
	}
}

// TestNotificationSettings: mutes and quiet hours are saved per user.
func TestNotificationSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	ada.get("/settings/notifications").want(t, 200, "Mute #payments", "Quiet hours")
	ada.post("/settings/notifications", "mute", "my-saas/payments", "quiet", "1", "quiet_start", "22:30", "quiet_end", "07:00",
		"time_zone", "Europe/Berlin").redirects(t, "/settings/notifications?saved=1")
	u, _ := e.store.FindUserByEmail(context.Background(), "ada@example.com")
	p, _ := e.store.NotifyPrefs(context.Background(), u.ID)
	if !p.Mutes("my-saas", "payments") || p.QuietStart != 22*60+30 || p.QuietEnd != 7*60 || p.TimeZone != "Europe/Berlin" {
		t.Fatalf("saved %+v", p)
	}
	page := ada.get("/settings/notifications?saved=1")
	page.want(t, 200, "Saved.", `value="22:30"`, `value="my-saas/payments" checked`)
	ada.post("/settings/notifications", "time_zone", "Mars/Olympus").want(t, 400, "time zone")
	ada.post("/settings/notifications", "quiet", "1", "quiet_start", "25:00", "quiet_end", "07:00").want(t, 400, "Quiet hours")
	ada.post("/settings/notifications", "mute", "Not A Project").want(t, 400, "Unknown project")
}

// TestEventPageSaysWhatWasPushed: the event page says how many devices got it, or why none.
func TestEventPageSaysWhatWasPushed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	ev := e.publish(acme, tidings.NewEvent{Event: "paid", Notify: true})
	ada.get("/p/my-saas/events/"+ev.ID).want(t, 200, "Not pushed: nobody in the team has enabled notifications on a device yet",
		`<h1 class="sr">paid</h1>`)
	old := e.publish(acme, tidings.NewEvent{Event: "backfill", Notify: true, Timestamp: time.Now().Add(-3 * time.Hour)})
	ada.get("/p/my-saas/events/"+old.ID).want(t, 200, "a backfill wakes nobody")
	u, _ := e.store.FindUserByEmail(context.Background(), "ada@example.com")
	sub := &tidings.PushSubscription{AccountID: acme.ID, UserID: u.ID, Endpoint: "https://fcm.googleapis.com/fcm/send/x", P256dh: "k", Auth: "a"}
	e.store.SavePushSubscription(context.Background(), sub)
	ada.get("/p/my-saas/events/"+ev.ID).want(t, 200, "Not pushed yet: it is waiting to be delivered.") // a device now, no record yet
	e.store.RecordPushes(context.Background(), []*tidings.PushRecord{{EventID: ev.ID, SubscriptionID: sub.ID, Status: tidings.PushSent, At: time.Now()}})
	ada.get("/p/my-saas/events/"+ev.ID).want(t, 200, "Pushed to 1 device.")
	plain := e.publish(acme, tidings.NewEvent{Event: "no notify"})
	if strings.Contains(ada.get("/p/my-saas/events/"+plain.ID).body, "Pushed") {
		t.Fatal("an event without notify talks of pushes")
	}
}
