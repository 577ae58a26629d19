package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// TestEventWhoWasNotified: the event page says, one line per member, who was notified
// by which route and why anyone was not: from the records of their devices and mail,
// and, where nothing was recorded, from their routes and devices.
func TestEventWhoWasNotified(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	ctx := context.Background()
	adaUser, err := e.store.FindUserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]*tidings.User{"ada": adaUser}
	for _, name := range []string{"bob", "carol", "dan", "eve", "fay", "gus", "hal"} {
		_, users[name] = e.member(acme, name+"@example.com")
	}
	ev := e.publish(acme, tidings.NewEvent{Event: "paid", Notify: true})
	device := func(name, id string) *tidings.PushSubscription {
		t.Helper()
		sub := &tidings.PushSubscription{AccountID: acme.ID, UserID: users[name].ID, Endpoint: "https://fcm.googleapis.com/fcm/send/" + name + id, P256dh: "k", Auth: "a"}
		if _, err := e.store.SavePushSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	var records []*tidings.PushRecord
	record := func(sub *tidings.PushSubscription, status string) {
		records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: sub.UserID, Status: status, At: time.Now()})
	}
	record(device("ada", "1"), tidings.PushSent)
	record(device("ada", "2"), tidings.PushSent)
	record(device("bob", "1"), tidings.PushNotRecipient)
	record(device("carol", "1"), tidings.PushMuted)
	record(device("dan", "1"), tidings.PushQuiet)
	record(device("gus", "1"), tidings.PushSent)
	record(device("gus", "2"), tidings.PushFailed)
	// Ada's mail was sent, fay's is on its way after the mail server's temporary
	// refusal, whose reply the page shows (a member's mail is recorded under
	// tidings.MailTarget).
	records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: tidings.MailTarget(users["ada"].ID), UserID: users["ada"].ID, Status: tidings.PushSent, At: time.Now()},
		&tidings.PushRecord{EventID: ev.ID, SubscriptionID: tidings.MailTarget(users["fay"].ID), UserID: users["fay"].ID, Status: tidings.PushPending, At: time.Now(),
			Detail: "451 4.3.0 <greylisted> try again later"})
	if err := e.store.RecordPushes(ctx, records); err != nil {
		t.Fatal(err)
	}
	none := tidings.Routes{}
	if err := e.store.SetRoutes(ctx, acme.ID, users["eve"].ID, "my-saas", "", &none); err != nil {
		t.Fatal(err)
	}
	page := ada.get("/p/my-saas/events/" + ev.ID)
	for _, line := range []string{
		"ada@example.com — <span class=\"why\">push to 2 devices, email sent</span>",
		"bob@example.com — <span class=\"why\">not a recipient</span>",
		"carol@example.com — <span class=\"why\">muted</span>",
		"dan@example.com — <span class=\"why\">quiet hours (in the summary)</span>",
		"eve@example.com — <span class=\"why\">chose no notifications for this project</span>",
		"fay@example.com — <span class=\"why\">email being sent, retrying after: 451 4.3.0 &lt;greylisted&gt; try again later</span>",
		"hal@example.com — <span class=\"why\">no device with notifications on</span>",
		"Pushed to 3 devices; 1 muted; 1 in quiet hours; 1 failed; 1 not a recipient; mailed to 1 member.",
		"gus@example.com — <span class=\"why\">push to 1 device, push to 1 device failed</span>",
	} {
		if !strings.Contains(page.body, line) {
			t.Errorf("the page lacks %q", line)
		}
	}
	if t.Failed() {
		t.Fatal(excerpt(page.body[strings.Index(page.body, "<dl class=\"meta\">"):]))
	}
	// An event that notifies nobody has no such lines.
	quiet := e.publish(acme, tidings.NewEvent{Event: "noted"})
	if p := ada.get("/p/my-saas/events/" + quiet.ID); strings.Contains(p.body, `class="notified"`) {
		t.Fatal("a non-notify event lists who was notified")
	}
}
