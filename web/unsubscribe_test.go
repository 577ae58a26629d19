package web_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestUnsubscribe: a mail's unsubscribe link asks first (GET) and stops the project's
// email on POST, also as RFC 8058's one-click POST from a mail client elsewhere (no
// session, another origin): email leaves the member's routes of the project and its
// channels, push stays, the digest ends. A wrong or foreign token is 404, and the
// cross-origin check still refuses every other form.
func TestUnsubscribe(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	acme := e.account("acme")
	ctx := context.Background()
	bobClient, bob := e.member(acme, "bob@example.com")
	_ = bobClient
	if _, err := e.store.CreateChannel(ctx, acme.ID, "my-saas", "deploys"); err != nil {
		t.Fatal(err)
	}
	set := func(channel, by string) {
		t.Helper()
		r, err := tidings.ParseRoutes(by)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetRoutes(ctx, acme.ID, bob.ID, "my-saas", channel, &r); err != nil {
			t.Fatal(err)
		}
	}
	set("", "push,email")
	set("payments", "email")
	set("deploys", "push")
	if err := e.store.SetDigest(ctx, acme.ID, bob.ID, "my-saas", tidings.DigestDaily); err != nil {
		t.Fatal(err)
	}
	key, err := tidings.MailKey(ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimPrefix(tidings.UnsubscribeURL(publicURL, key, bob.ID, "my-saas"), publicURL)

	c := e.client() // a browser without a session
	page := c.get(link)
	page.want(t, 200, "Stop email about my-saas?", "bob@example.com", `<form method="post" action="`+strings.ReplaceAll(link, "&", "&amp;")+`"`)

	u := strconv.FormatInt(bob.ID, 10)
	token := tidings.UnsubscribeToken(key, bob.ID, "my-saas")
	other := tidings.UnsubscribeToken(key, bob.ID+1, "my-saas")
	for _, bad := range []string{
		"/unsubscribe?" + url.Values{"u": {u}, "p": {"my-saas"}, "t": {token + "x"}}.Encode(),
		"/unsubscribe?" + url.Values{"u": {u}, "p": {"my-saas"}, "t": {other}}.Encode(),
		"/unsubscribe?" + url.Values{"u": {u}, "p": {"blog"}, "t": {token}}.Encode(),
		"/unsubscribe?" + url.Values{"u": {"x"}, "p": {"my-saas"}, "t": {token}}.Encode(),
		"/unsubscribe?" + url.Values{"u": {u}, "p": {"my-saas"}}.Encode(),
		"/unsubscribe",
	} {
		c.get(bad).want(t, 404)
		c.request("POST", bad, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click")).want(t, 404)
	}
	if got := routesOf(t, e, bob.ID); got[""] != "push,email" {
		t.Fatalf("a bad link changed bob's routes: %v", got)
	}

	// One-click, as a mail provider's server or a webmail page in a browser sends it.
	c.request("POST", link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"),
		"Origin", "https://mail.example.net", "Sec-Fetch-Site", "cross-site").
		want(t, 200, "You will no longer get email about my-saas", `href="/settings/notifications"`)
	if got := routesOf(t, e, bob.ID); got[""] != "push" || got["payments"] != "none" || got["deploys"] != "push" || len(got) != 3 {
		t.Fatalf("bob's routes after unsubscribing: %v", got)
	}
	if d := digestOf(t, e, bob.ID); d != "" {
		t.Fatalf("bob's digest after unsubscribing: %q", d)
	}
	// Twice is fine: nothing left to switch off.
	c.request("POST", link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click")).
		want(t, 200, "You will no longer get email about my-saas")

	// Every other form from another site is still refused.
	c.request("POST", "/login", "application/x-www-form-urlencoded", strings.NewReader("email=bob%40example.com&password=x"),
		"Origin", "https://mail.example.net", "Sec-Fetch-Site", "cross-site").want(t, 403)
	c.request("POST", "/forgot", "application/x-www-form-urlencoded", strings.NewReader("email=bob%40example.com"),
		"Origin", "https://mail.example.net", "Sec-Fetch-Site", "cross-site").want(t, 403)
}

// TestUnsubscribeAll: the link of the quiet-hours summary (tidings.UnsubscribeAll)
// asks "Stop all email from Tidings?" and, one-click, switches email off in the
// member's routes of every project and ends every digest; push stays, and another
// member's choices are untouched.
func TestUnsubscribeAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	acme := e.account("acme")
	ctx := context.Background()
	_, bob := e.member(acme, "bob@example.com")
	_, carol := e.member(acme, "carol@example.com")
	if _, err := e.store.CreateProject(ctx, acme.ID, "blog"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*tidings.User{bob, carol} {
		for project, by := range map[string]tidings.Routes{"my-saas": {Push: true, Email: true}, "blog": {Email: true}} {
			if err := e.store.SetRoutes(ctx, acme.ID, u.ID, project, "", &by); err != nil {
				t.Fatal(err)
			}
			if err := e.store.SetDigest(ctx, acme.ID, u.ID, project, tidings.DigestWeekly); err != nil {
				t.Fatal(err)
			}
		}
	}
	key, err := tidings.MailKey(ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimPrefix(tidings.UnsubscribeURL(publicURL, key, bob.ID, tidings.UnsubscribeAll), publicURL)
	c := e.client()
	c.get(link).want(t, 200, "Stop all email from Tidings?", "bob@example.com", ">Stop all email</button>")
	// A project's link does not stand for every project, nor the other way round.
	mine := strings.TrimPrefix(tidings.UnsubscribeURL(publicURL, key, bob.ID, "my-saas"), publicURL)
	c.get(strings.Replace(mine, "p=my-saas", "p=%2A", 1)).want(t, 404)

	c.request("POST", link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"),
		"Origin", "https://mail.example.net", "Sec-Fetch-Site", "cross-site").want(t, 200, "You will no longer get email from Tidings")
	routes, err := e.store.AccountRoutes(ctx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range routes {
		got[strconv.FormatInt(r.UserID, 10)+" "+r.Project] = r.Routes.String()
	}
	b, c2 := strconv.FormatInt(bob.ID, 10), strconv.FormatInt(carol.ID, 10)
	if got[b+" my-saas"] != "push" || got[b+" blog"] != "none" || got[c2+" my-saas"] != "push,email" || got[c2+" blog"] != "email" {
		t.Fatalf("routes after bob unsubscribed from all: %v", got)
	}
	for u, want := range map[int64]int{bob.ID: 0, carol.ID: 2} {
		if ds, err := e.store.MemberDigests(ctx, acme.ID, u); err != nil || len(ds) != want {
			t.Fatalf("digests of %d: %v, %v; want %d", u, ds, err, want)
		}
	}
}
