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
