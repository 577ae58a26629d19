package web_test

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/web"
)

// routesOf reads a member's saved routes of my-saas as "channel=routes" lines, sorted
// as the store returns them ("" is the project).
func routesOf(t *testing.T, e *env, userID int64) map[string]string {
	t.Helper()
	rs, err := e.store.AccountRoutes(context.Background(), e.account("acme").ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rs {
		if r.UserID == userID && r.Project == "my-saas" {
			out[r.Channel] = r.Routes.String()
		}
	}
	return out
}

func digestOf(t *testing.T, e *env, userID int64) string {
	t.Helper()
	ds, err := e.store.MemberDigests(context.Background(), e.account("acme").ID, userID)
	if err != nil {
		t.Fatal(err)
	}
	return ds["my-saas"]
}

// TestMemberRoutes: each member chooses how they are notified of a project (push,
// email, both, nothing), a channel's own choice or "as the project", and a digest;
// their choices are theirs alone; bad input says what is wrong and saves nothing.
func TestMemberRoutes(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{Mailer: &mailbox{}, PublicURL: publicURL})
	ada := e.owner()
	acme := e.account("acme")
	bob, bobUser := e.member(acme, "bob@example.com")
	page := bob.get("/settings/notifications")
	page.want(t, 200, "How you’re notified", `id="routes-my-saas"`, `name="by" value="push" checked`, `name="c:payments"`,
		`<option value="" selected>As the project</option>`, `name="digest" value="off" checked`)
	if strings.Contains(page.body, "disabled") {
		t.Fatal("email is offered disabled though the server sends mail")
	}

	bob.post("/settings/notifications/routes", "project", "my-saas", "by", "push,email", "c:payments", "email", "digest", "weekly").
		redirects(t, "/settings/notifications#routes-my-saas")
	if got := routesOf(t, e, bobUser.ID); got[""] != "push,email" || got["payments"] != "email" || len(got) != 2 {
		t.Fatalf("bob's routes: %v", got)
	}
	if d := digestOf(t, e, bobUser.ID); d != tidings.DigestWeekly {
		t.Fatalf("bob's digest %q", d)
	}
	page = bob.get("/settings/notifications")
	page.want(t, 200, "How you’re notified of my-saas: push and email; digest weekly.", `name="by" value="push,email" checked`,
		`<option value="email" selected>Email</option>`, `name="digest" value="weekly" checked`)
	// Ada's page is her own.
	ada.get("/settings/notifications").want(t, 200, `name="by" value="push" checked`, `name="digest" value="off" checked`)

	// Back: the channel as the project, nothing for the project, no digest.
	bob.post("/settings/notifications/routes", "project", "my-saas", "by", "none", "c:payments", "", "digest", "off").
		redirects(t, "/settings/notifications#routes-my-saas")
	if got := routesOf(t, e, bobUser.ID); got[""] != "none" || len(got) != 1 {
		t.Fatalf("bob's routes: %v", got)
	}
	if d := digestOf(t, e, bobUser.ID); d != "" {
		t.Fatalf("bob's digest %q after off", d)
	}

	for _, bad := range []struct {
		form []string
		says string
	}{
		{[]string{"project", "my-saas", "by", "pigeon"}, "choose push, email, push and email, or nothing"},
		{[]string{"project", "my-saas", "by", "push", "c:payments", "smoke"}, "#payments: choose as the project"},
		{[]string{"project", "my-saas", "by", "push", "digest", "hourly"}, "the digest is off, daily or weekly"},
		{[]string{"project", "nope", "by", "push"}, "nope"},
		{[]string{"project", "my-saas", "by", "push", "c:nope", "email"}, "nope"},
		{[]string{"project", "Not A Project", "by", "push"}, "unknown project"},
	} {
		p := bob.post("/settings/notifications/routes", bad.form...)
		p.want(t, 400, `class="error" role="alert"`)
		if !strings.Contains(html.UnescapeString(p.body), bad.says) {
			t.Fatalf("%v: the error does not say %q: %s", bad.form, bad.says, excerpt(p.body))
		}
	}
	if got := routesOf(t, e, bobUser.ID); got[""] != "none" || len(got) != 1 {
		t.Fatalf("bad input changed bob's routes: %v", got)
	}
}

// TestMemberRoutesWithoutMail: without SMTP, email and digests are offered disabled
// with the reason, and refused if sent anyway; push and nothing still work.
func TestMemberRoutesWithoutMail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	page := ada.get("/settings/notifications")
	page.want(t, 200, "Email is not available: this server has no mail server set up",
		`name="by" value="email" disabled`, `name="digest" value="daily" disabled`, `<option value="email" disabled>`)
	for _, form := range [][]string{
		{"project", "my-saas", "by", "email"},
		{"project", "my-saas", "by", "push", "c:payments", "push,email"},
		{"project", "my-saas", "by", "push", "digest", "daily"},
	} {
		ada.post("/settings/notifications/routes", form...).want(t, 400, "email is not set up on this server")
	}
	ada.post("/settings/notifications/routes", "project", "my-saas", "by", "none", "c:payments", "push").
		redirects(t, "/settings/notifications#routes-my-saas")
	u, err := e.store.FindUserByEmail(context.Background(), "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := routesOf(t, e, u.ID); got[""] != "none" || got["payments"] != "push" {
		t.Fatalf("ada's routes: %v", got)
	}

	// Email chosen while the server sent mail: the page shows it checked but disabled,
	// so the browser sends no "by" and no "digest"; saving keeps them as they are.
	acme := e.account("acme")
	both := tidings.Routes{Push: true, Email: true}
	if err := e.store.SetRoutes(context.Background(), acme.ID, u.ID, "my-saas", "", &both); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetDigest(context.Background(), acme.ID, u.ID, "my-saas", tidings.DigestDaily); err != nil {
		t.Fatal(err)
	}
	ada.get("/settings/notifications").want(t, 200, `name="by" value="push,email" checked disabled`, `name="digest" value="daily" checked disabled`)
	ada.post("/settings/notifications/routes", "project", "my-saas", "c:payments", "none").
		redirects(t, "/settings/notifications#routes-my-saas")
	if got := routesOf(t, e, u.ID); got[""] != "push,email" || got["payments"] != "none" {
		t.Fatalf("ada's routes after saving the page: %v", got)
	}
	if d := digestOf(t, e, u.ID); d != tidings.DigestDaily {
		t.Fatalf("ada's digest after saving the page: %q", d)
	}
}

// TestEscalateAfter: owners set when urgent events reach everyone (minutes; empty or 0
// never) on the project's notify page; members read it; bad input saves nothing.
func TestEscalateAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	after := func() time.Duration {
		t.Helper()
		p, err := e.store.FindProject(context.Background(), acme.ID, "my-saas")
		if err != nil {
			t.Fatal(err)
		}
		return p.EscalateAfter
	}
	ada.get("/settings/projects/my-saas/notify").want(t, 200, "Escalation order", `name="minutes"`, "Then everyone after")
	ada.post("/settings/projects/my-saas/escalate-after", "minutes", "10").redirects(t, "/settings/projects/my-saas/notify#escalate")
	if got := after(); got != 10*time.Minute {
		t.Fatalf("escalate after %v", got)
	}
	ada.get("/settings/projects/my-saas/notify").want(t, 200, "Urgent events reach everyone 10 minutes after they arrive", `value="10"`)
	bob, _ := e.member(acme, "bob@example.com")
	bob.get("/settings/projects/my-saas/notify").want(t, 200, "Urgent events reach everyone 10 minutes after they arrive")
	if p := bob.post("/settings/projects/my-saas/escalate-after", "minutes", "0"); p.status != 403 {
		t.Fatalf("a member set the escalation: %d", p.status)
	}
	for _, bad := range []string{"abc", "-1", "1441", "1.5"} {
		ada.post("/settings/projects/my-saas/escalate-after", "minutes", bad).want(t, 400, "a whole number of minutes, from 1 to 1440, or 0 for never")
	}
	if got := after(); got != 10*time.Minute {
		t.Fatalf("bad input changed it: %v", got)
	}
	ada.post("/settings/projects/my-saas/escalate-after", "minutes", "").redirects(t, "/settings/projects/my-saas/notify#escalate")
	if got := after(); got != 0 {
		t.Fatalf("empty: escalate after %v", got)
	}
	ada.post("/settings/projects/nope/escalate-after", "minutes", "5").want(t, 404)
}

// TestMemberRoutesTimeZone: each project's form shows the member's time zone beside
// the digest (UTC until one is saved) in a field the page's script fills with the
// browser's; saving the form saves it, keeping the member's other choices; a zone the
// server does not know saves nothing of the form; a form without the field keeps it.
func TestMemberRoutesTimeZone(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{Mailer: &mailbox{}, PublicURL: publicURL})
	e.owner()
	bob, bobUser := e.member(e.account("acme"), "bob@example.com")
	ctx := context.Background()
	if err := e.store.SetNotifyPrefs(ctx, bobUser.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas/payments"}, QuietStart: 22 * 60, QuietEnd: 7 * 60}); err != nil {
		t.Fatal(err)
	}
	zone := func() *tidings.NotifyPrefs {
		t.Helper()
		p, err := e.store.NotifyPrefs(ctx, bobUser.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bob.get("/settings/notifications").want(t, 200, "which is UTC until you save one.",
		`<input type="hidden" name="time_zone" value="" data-default-zone>`)

	bob.post("/settings/notifications/routes", "project", "my-saas", "by", "email", "digest", "daily", "time_zone", " Europe/Berlin ").
		redirects(t, "/settings/notifications#routes-my-saas")
	if p := zone(); p.TimeZone != "Europe/Berlin" || !p.Mutes("my-saas", "payments") || p.QuietStart != 22*60 || p.QuietEnd != 7*60 {
		t.Fatalf("bob's prefs after saving the form: %+v", p)
	}
	bob.get("/settings/notifications").want(t, 200, "How you’re notified of my-saas: email; digest daily. Your time zone: Europe/Berlin.",
		"(weekly: on Mondays): Europe/Berlin.", `<input id="time-zone" name="time_zone" value="Europe/Berlin"`)

	p := bob.post("/settings/notifications/routes", "project", "my-saas", "by", "push", "digest", "weekly", "time_zone", "Mars/Olympus_Mons")
	p.want(t, 400, `class="error" role="alert"`)
	if !strings.Contains(html.UnescapeString(p.body), "your time zone is not one this server knows: write one like Europe/Berlin, or leave it empty for UTC") {
		t.Fatalf("the error: %s", excerpt(p.body))
	}
	if got, d := routesOf(t, e, bobUser.ID), digestOf(t, e, bobUser.ID); got[""] != "email" || d != tidings.DigestDaily || zone().TimeZone != "Europe/Berlin" {
		t.Fatalf("a refused zone saved %v, digest %q, zone %q", got, d, zone().TimeZone)
	}

	// Without the field (a form from before it), the zone stays; emptied, it is UTC.
	bob.post("/settings/notifications/routes", "project", "my-saas", "by", "email", "digest", "weekly").redirects(t, "/settings/notifications#routes-my-saas")
	if z := zone().TimeZone; z != "Europe/Berlin" {
		t.Fatalf("a form without the field changed the zone to %q", z)
	}
	bob.post("/settings/notifications/routes", "project", "my-saas", "by", "email", "digest", "weekly", "time_zone", "").
		redirects(t, "/settings/notifications#routes-my-saas")
	if z := zone().TimeZone; z != "" {
		t.Fatalf("an emptied field left the zone %q", z)
	}
	bob.get("/settings/notifications").want(t, 200, "Your time zone: UTC.")
}
