package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func testPush(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	ada := &tidings.User{AccountID: f.account.ID, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	bob := &tidings.User{AccountID: f.account.ID, Email: "bob@example.com", PasswordHash: "x", Role: tidings.UserMember}
	must(t, f.s.CreateUser(ctx, ada))
	must(t, f.s.CreateUser(ctx, bob))
	phone := &tidings.PushSubscription{AccountID: f.account.ID, UserID: ada.ID, Endpoint: "https://fcm.googleapis.com/fcm/send/a",
		P256dh: "key1", Auth: "auth1", Name: "Pixel", Browser: "Chrome"}
	created, err := f.s.SavePushSubscription(ctx, phone)
	must(t, err)
	if !created || phone.ID == "" {
		t.Fatalf("created=%v id=%q", created, phone.ID)
	}
	// The same endpoint again updates it (new keys), keeping its ID.
	again := &tidings.PushSubscription{AccountID: f.account.ID, UserID: ada.ID, Endpoint: phone.Endpoint, P256dh: "key2", Auth: "auth2"}
	created, err = f.s.SavePushSubscription(ctx, again)
	must(t, err)
	got, err := f.s.FindPushSubscription(ctx, phone.ID)
	must(t, err)
	if created || again.ID != phone.ID || got.P256dh != "key2" || got.Name != "Pixel" || got.EndpointHost() != "fcm.googleapis.com" {
		t.Fatalf("update: created=%v %+v", created, got)
	}
	// Another user's post of the endpoint, of this account or another, is refused: it
	// stays ada's (the audit: it moved the device, past the cap, to another account).
	other := newAccount(t, f.s, "umbrella")
	eve := &tidings.User{AccountID: other.ID, Email: "eve@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	must(t, f.s.CreateUser(ctx, eve))
	for _, thief := range []*tidings.User{bob, eve} {
		_, err = f.s.SavePushSubscription(ctx, &tidings.PushSubscription{AccountID: thief.AccountID, UserID: thief.ID, Endpoint: phone.Endpoint, P256dh: "k3", Auth: "a3"})
		wantCode(t, err, tidings.EConflict)
	}
	if got, _ := f.s.FindPushSubscription(ctx, phone.ID); got.UserID != ada.ID || got.AccountID != f.account.ID || got.P256dh != "key2" {
		t.Fatalf("another user's post moved the device: %+v", got)
	}
	laptop := &tidings.PushSubscription{AccountID: f.account.ID, UserID: bob.ID, Endpoint: "https://updates.push.services.mozilla.com/wpush/v2/b",
		P256dh: "k", Auth: "a"}
	_, err = f.s.SavePushSubscription(ctx, laptop)
	must(t, err)
	mine, err := f.s.ListPushSubscriptions(ctx, ada.ID)
	must(t, err)
	all, err := f.s.AccountPushSubscriptions(ctx, f.account.ID)
	must(t, err)
	if len(mine) != 1 || len(all) != 2 {
		t.Fatalf("ada has %d, the account %d", len(mine), len(all))
	}
	wantCode(t, f.s.RenamePushSubscription(ctx, bob.ID, phone.ID, "mine now"), tidings.ENotFound)
	must(t, f.s.RenamePushSubscription(ctx, ada.ID, phone.ID, "Work phone"))
	wantCode(t, f.s.DeletePushSubscription(ctx, bob.ID, phone.ID), tidings.ENotFound)
	at := epoch.Add(time.Minute)
	must(t, f.s.PushDelivered(ctx, phone.ID, at))
	got, _ = f.s.FindPushSubscription(ctx, phone.ID)
	if got.Name != "Work phone" || !got.LastSuccessAt.Equal(at) {
		t.Fatalf("after rename and delivery: %+v", got)
	}
	for i := 1; i < tidings.MaxDevicesPerUser; i++ {
		_, err := f.s.SavePushSubscription(ctx, &tidings.PushSubscription{AccountID: f.account.ID, UserID: ada.ID,
			Endpoint: fmt.Sprintf("https://fcm.googleapis.com/fcm/send/%d", i), P256dh: "k", Auth: "a"})
		must(t, err)
	}
	_, err = f.s.SavePushSubscription(ctx, &tidings.PushSubscription{AccountID: f.account.ID, UserID: ada.ID,
		Endpoint: "https://fcm.googleapis.com/fcm/send/one-too-many", P256dh: "k", Auth: "a"})
	wantCode(t, err, tidings.EConflict)

	// Preferences: defaults, then saved.
	prefs, err := f.s.NotifyPrefs(ctx, ada.ID)
	must(t, err)
	if len(prefs.Muted) != 0 || prefs.QuietStart != prefs.QuietEnd {
		t.Fatalf("default prefs %+v", prefs)
	}
	must(t, f.s.SetNotifyPrefs(ctx, ada.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas/payments"}, QuietStart: 22 * 60, QuietEnd: 7 * 60, TimeZone: "Europe/Berlin"}))
	prefs, _ = f.s.NotifyPrefs(ctx, ada.ID)
	if !prefs.Mutes("my-saas", "payments") || prefs.Mutes("my-saas", "deploys") || prefs.TimeZone != "Europe/Berlin" || prefs.QuietStart != 1320 {
		t.Fatalf("saved prefs %+v", prefs)
	}

	// Records: the latest status of an event for a device wins; counts by status.
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e1", SubscriptionID: phone.ID, Status: tidings.PushPending, At: epoch},
		{EventID: "e1", SubscriptionID: laptop.ID, Status: tidings.PushMuted, At: epoch}}))
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e1", SubscriptionID: phone.ID, Status: tidings.PushSent, At: epoch.Add(time.Second)},
		{EventID: "e2", SubscriptionID: phone.ID, Status: tidings.PushQuiet, At: epoch.Add(time.Second)}}))
	records, err := f.s.EventPushes(ctx, f.account.ID, "e1")
	must(t, err)
	if len(records) != 2 || records[0].Status != tidings.PushMuted || records[1].Status != tidings.PushSent || records[1].UserID != ada.ID {
		t.Fatalf("records %+v %+v", records[0], records[1])
	}
	other = newAccount(t, f.s, "globex")
	if r, _ := f.s.EventPushes(ctx, other.ID, "e1"); len(r) != 0 {
		t.Fatalf("another account reads %d records", len(r))
	}
	if n, _ := f.s.CountPushes(ctx, ada.ID, tidings.PushQuiet, epoch); n != 1 {
		t.Fatalf("quiet count %d", n)
	}
	must(t, f.s.DeletePushSubscription(ctx, 0, laptop.ID))
	_, err = f.s.FindPushSubscription(ctx, laptop.ID)
	wantCode(t, err, tidings.ENotFound)

	// A mail's record keeps its detail (the server's reply), bounded to one line; a
	// later status without one clears it. A member who is gone still has the record
	// the mail was queued with settled.
	mail := tidings.MailTarget(bob.ID)
	long := "451 4.3.0\r\ntry again " + strings.Repeat("later ", 100)
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e3", SubscriptionID: mail, UserID: bob.ID, Status: tidings.PushPending, At: epoch, Detail: long}}))
	records, err = f.s.EventPushes(ctx, f.account.ID, "e3")
	must(t, err)
	if len(records) != 1 || records[0].Detail != tidings.RecordDetail(long) || len([]rune(records[0].Detail)) != tidings.MaxRecordDetail ||
		!strings.HasPrefix(records[0].Detail, "451 4.3.0 try again later") || records[0].UserID != bob.ID {
		t.Fatalf("the mail's record %+v", records)
	}
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e3", SubscriptionID: mail, UserID: bob.ID, Status: tidings.PushSent, At: epoch.Add(time.Second)}}))
	if records, _ = f.s.EventPushes(ctx, f.account.ID, "e3"); len(records) != 1 || records[0].Status != tidings.PushSent || records[0].Detail != "" {
		t.Fatalf("the mail's record once sent %+v", records[0])
	}
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e4", SubscriptionID: mail, UserID: bob.ID, Status: tidings.PushPending, At: epoch}}))
	must(t, f.s.DeleteUser(ctx, f.account.ID, bob.ID))
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e4", SubscriptionID: mail, UserID: bob.ID, Status: tidings.PushUnsent,
		At: epoch.Add(time.Second), Detail: "no longer a member"}}))
	if records, _ = f.s.EventPushes(ctx, f.account.ID, "e4"); len(records) != 1 || records[0].Status != tidings.PushUnsent ||
		records[0].Detail != "no longer a member" {
		t.Fatalf("the record of a mail to a member who left %+v", records)
	}
	must(t, f.s.RecordPushes(ctx, []*tidings.PushRecord{{EventID: "e5", SubscriptionID: mail, UserID: bob.ID, Status: tidings.PushUnsent, At: epoch}}))
	if records, _ = f.s.EventPushes(ctx, f.account.ID, "e5"); len(records) != 0 {
		t.Fatalf("a record for a member who is gone was made: %+v", records)
	}

	// The events of a target's records of a status: oldest first, bounded, with the
	// total; another target's and older ones are left out.
	adaMail := tidings.MailTarget(ada.ID)
	var quiet []*tidings.PushRecord
	for i := range 5 {
		quiet = append(quiet, &tidings.PushRecord{EventID: fmt.Sprintf("q%d", i), SubscriptionID: adaMail, UserID: ada.ID,
			Status: tidings.PushQuiet, At: epoch.Add(time.Duration(10-i) * time.Minute)})
	}
	quiet = append(quiet, &tidings.PushRecord{EventID: "old", SubscriptionID: adaMail, UserID: ada.ID, Status: tidings.PushQuiet, At: epoch.Add(-time.Hour)},
		&tidings.PushRecord{EventID: "q9", SubscriptionID: adaMail, UserID: ada.ID, Status: tidings.PushSent, At: epoch.Add(time.Minute)})
	must(t, f.s.RecordPushes(ctx, quiet))
	ids, total, err := f.s.RecordedEvents(ctx, ada.ID, adaMail, tidings.PushQuiet, epoch, 3)
	must(t, err)
	if total != 5 || strings.Join(ids, " ") != "q4 q3 q2" {
		t.Fatalf("RecordedEvents = %q of %d, want q4 q3 q2 of 5", ids, total)
	}
	if ids, total, err = f.s.RecordedEvents(ctx, ada.ID, phone.ID, tidings.PushQuiet, epoch, 3); err != nil || total != 1 || len(ids) != 1 || ids[0] != "e2" {
		t.Fatalf("the phone's quiet events %q of %d, %v", ids, total, err)
	}
	if ids, total, err = f.s.RecordedEvents(ctx, ada.ID, adaMail, tidings.PushQuiet, epoch.Add(time.Hour), 3); err != nil || total != 0 || len(ids) != 0 {
		t.Fatalf("none since: %q of %d, %v", ids, total, err)
	}

	// Settings are set once: two servers starting together agree.
	_, err = f.s.Setting(ctx, "vapid")
	wantCode(t, err, tidings.ENotFound)
	v1, err := f.s.SetSettingOnce(ctx, "vapid", "first")
	must(t, err)
	v2, err := f.s.SetSettingOnce(ctx, "vapid", "second")
	must(t, err)
	if v1 != "first" || v2 != "first" {
		t.Fatalf("settings %q %q", v1, v2)
	}
}
