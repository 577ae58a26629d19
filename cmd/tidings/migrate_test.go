package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/sqlite"
)

// TestMigrateStore moves a seeded embedded store into PostgreSQL with the CLI: what a
// team has (people, sessions, tokens, projects, events with tags, insights with their
// history, devices, webhooks and the outbox) reads the same on the other side, new
// rows follow the copied ones, and a database that holds data is refused.
func TestMigrateStore(t *testing.T) {
	t.Parallel()
	if !testbackend.Postgres() {
		t.Skip("needs a PostgreSQL target: runs in the PostgreSQL run")
	}
	ctx := context.Background()
	dir := t.TempDir()
	src, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a, err := src.CreateAccount(ctx, "acme")
	must(err)
	_, err = src.CreateProject(ctx, a.ID, "my-saas")
	must(err)
	_, err = src.CreateChannel(ctx, a.ID, "my-saas", "payments")
	must(err)
	must(src.SetAutoCreateChannels(ctx, a.ID, "my-saas", true))
	u := &tidings.User{AccountID: a.ID, Email: "Ada@Example.com", PasswordHash: "$argon2id$x", Role: tidings.UserOwner}
	must(src.CreateUser(ctx, u))
	now := time.Now().UTC().Truncate(time.Millisecond)
	session := &tidings.Session{Hash: []byte("0123456789abcdef0123456789abcdef"), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	must(src.CreateSession(ctx, session))
	id, _, hash := tidings.NewTokenSecret()
	must(src.CreateToken(ctx, &tidings.Token{ID: id, AccountID: a.ID, Name: "ci", Hash: hash, Access: tidings.AccessFull,
		Project: "my-saas", Roles: []string{"log", "insight"}}))
	var events []*tidings.Event
	for i := 0; i < 30; i++ {
		ev, err := src.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "my-saas", Channel: []string{"payments", "deploys"}[i%2],
			Event: "paid", Description: "**$9**", Parser: tidings.ParserMarkdown, Icon: "💰", Notify: i == 29,
			Tags: tidings.Tags{{Key: "plan", Value: "pro"}, {Key: "n", Value: strings.Repeat("x", i%3+1)}}})
		must(err)
		events = append(events, ev)
	}
	for _, v := range []string{"19.99", "0.01"} {
		_, err := src.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue", Value: v,
			ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement})
		must(err)
	}
	must(src.CreateWebhook(ctx, a.ID, &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: "https://example.com/hook",
		Format: tidings.FormatSlack, Events: tidings.WebhookAll, Name: "team"}))
	_, err = src.SavePushSubscription(ctx, &tidings.PushSubscription{AccountID: a.ID, UserID: u.ID,
		Endpoint: "https://fcm.googleapis.com/fcm/send/abc", P256dh: "key", Auth: "auth", Name: "Pixel"})
	must(err)
	must(src.SetNotifyPrefs(ctx, u.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas/deploys"}, QuietStart: 60, QuietEnd: 120, TimeZone: "UTC"}))
	_, err = src.SetSettingOnce(ctx, "vapid", "the key")
	must(err)
	// Members' routes and digests, the escalation delay, an invitation's email.
	must(src.SetRoutes(ctx, a.ID, u.ID, "my-saas", "", &tidings.Routes{Email: true}))
	must(src.SetRoutes(ctx, a.ID, u.ID, "my-saas", "payments", &tidings.Routes{Push: true, Email: true}))
	must(src.SetDigest(ctx, a.ID, u.ID, "my-saas", tidings.DigestWeekly))
	must(src.SetEscalation(ctx, a.ID, "my-saas", 10*time.Minute))
	must(src.CreateInvite(ctx, &tidings.Invite{Hash: []byte("fedcba9876543210fedcba9876543210"), AccountID: a.ID, Role: tidings.UserMember,
		Email: "bob@example.com", CreatedBy: u.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
	pending, _, err := src.PendingDeliveries(ctx)
	must(err)
	must(src.Close())

	target := pgtest.URL(t)
	code, out, errs := runCLI(t, "", "", "migrate-store", "--from", dir, "--to", target)
	if code != 0 {
		t.Fatalf("migrate-store: %d %s", code, errs)
	}
	if !strings.Contains(out, "events") || !strings.Contains(out, "30") || !strings.Contains(out, "verified") {
		t.Fatalf("migrate-store printed %q", out)
	}
	dst := testbackend.Open(t, target)
	tok, err := dst.FindToken(ctx, id)
	must(err)
	if string(hash) != string(tok.Hash) || tok.Project != "my-saas" {
		t.Fatalf("token %+v", tok)
	}
	if _, who, acct, err := dst.FindSession(ctx, session.Hash, now); err != nil || who.Email != "Ada@Example.com" || acct.Name != "acme" {
		t.Fatalf("session: %v %v %v", who, acct, err)
	}
	if _, err := dst.FindUserByEmail(ctx, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	page, err := dst.ListEvents(ctx, a.ID, tidings.EventQuery{Project: "my-saas", Limit: 100, Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}})
	must(err)
	if len(page.Events) != 30 {
		t.Fatalf("%d events", len(page.Events))
	}
	for i, ev := range page.Events {
		want := events[29-i]
		if ev.ID != want.ID || ev.Channel != want.Channel || ev.Icon != "💰" || ev.Tags[1].Value != want.Tags[1].Value || !ev.Timestamp.Equal(want.Timestamp) {
			t.Fatalf("event %d: %+v, want %+v", i, ev, want)
		}
	}
	hist, err := dst.InsightHistory(ctx, a.ID, "my-saas", "Revenue", 10)
	must(err)
	if len(hist) != 2 || hist[1].Value != "20.00" {
		t.Fatalf("history %+v", hist)
	}
	if hooks, _ := dst.ListWebhooks(ctx, a.ID); len(hooks) != 1 || hooks[0].Name != "team" {
		t.Fatalf("webhooks %+v", hooks)
	}
	if devs, _ := dst.ListPushSubscriptions(ctx, u.ID); len(devs) != 1 || devs[0].Name != "Pixel" {
		t.Fatalf("devices %+v", devs)
	}
	if p, _ := dst.NotifyPrefs(ctx, u.ID); len(p.Muted) != 1 || p.QuietEnd != 120 {
		t.Fatalf("prefs %+v", p)
	}
	if n, _, _ := dst.PendingDeliveries(ctx); n != pending || n == 0 {
		t.Fatalf("outbox %d, want %d", n, pending)
	}
	if rs, _ := dst.AccountRoutes(ctx, a.ID); len(rs) != 2 || tidings.RoutesFor(rs, u.ID, "my-saas", "payments") != (tidings.Routes{Push: true, Email: true}) ||
		tidings.RoutesFor(rs, u.ID, "my-saas", "deploys") != (tidings.Routes{Email: true}) {
		t.Fatalf("routes %+v", rs)
	}
	if d, _ := dst.MemberDigests(ctx, a.ID, u.ID); d["my-saas"] != tidings.DigestWeekly {
		t.Fatalf("digests %v", d)
	}
	if p, _ := dst.FindProject(ctx, a.ID, "my-saas"); p.EscalateAfter != 10*time.Minute {
		t.Fatalf("escalate after %v", p.EscalateAfter)
	}
	if invs, _ := dst.ListInvites(ctx, a.ID, now); len(invs) != 1 || invs[0].Email != "bob@example.com" {
		t.Fatalf("invites %+v", invs)
	}
	// Serial columns continue after the copied rows.
	if _, err := dst.CreateProject(ctx, a.ID, "second"); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue", Value: "1",
		ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement}); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "", "", "migrate-store", "--from", dir, "--to", target); code == 0 || !strings.Contains(errs, "holds data already") {
		t.Fatalf("a second copy into the same database: %d %s", code, errs)
	}
}
