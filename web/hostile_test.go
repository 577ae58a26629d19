package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/attack"
	"github.com/tidings-dev/tidings/web"
)

// TestFormBodiesBounded: a form over 64 KiB is refused, at once when its Content-Length
// says so even if the body is held back.
func TestFormBodiesBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	status := attack.HeldBackBody(t, e.srv.URL, "/login", "application/x-www-form-urlencoded", 10<<20)
	if !strings.HasPrefix(status, "413") {
		t.Fatalf("held-back 10 MB form: %s", status)
	}
	// A body that crosses the limit while being read (no Content-Length up front).
	c := e.client()
	big := url.Values{"email": {strings.Repeat("a", 70<<10) + "@example.com"}, "password": {"x"}}
	req := c.do("POST", "/login", big, "Transfer-Encoding", "chunked")
	if req.status != 413 {
		t.Fatalf("70 KiB form: %d", req.status)
	}
}

// TestSignInLimiterBounded: emails over 254 characters are refused outright, before any
// bucket is made (the limiter's own bounds are in TestLoginLimiter, on a fixed clock).
func TestSignInLimiterBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	c := e.client()
	c.post("/login", "email", strings.Repeat("a", 255)+"@x", "password", "whatever").want(t, 400, "valid email")
	if _, byEmail := web.LoginBuckets(e.dash); byEmail != 0 {
		t.Fatalf("an over-long email made %d buckets", byEmail)
	}
}

// TestSignUpLimitedPerAddress: every sign-up attempt counts, before any password is
// hashed; the sixth within the hour is refused.
func TestSignUpLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	c := e.client()
	for i := 0; i < 5; i++ {
		c.post("/signup", "account", "team", "email", "a@example.com", "password", "correct horse", "password2", "other horse").
			want(t, 400, "passwords differ")
	}
	c.post("/signup", "account", "team", "email", "a@example.com", "password", "correct horse", "password2", "correct horse").
		want(t, 429, "Too many sign-ups")
}

// TestRedirectsStayHome: next= cannot send a signed-in person to another site.
func TestRedirectsStayHome(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	for i, next := range []string{"/\t/evil.example", "//evil.example", "/\\evil.example", "https://evil.example", "/\n/evil.example"} {
		c := e.client()
		page := c.get("/login?next=" + url.QueryEscape(next))
		if strings.Contains(page.body, "evil.example") {
			t.Fatalf("the sign-in form carries next=%q", next)
		}
		if i < 3 { // the sign-in limit allows five attempts per email at once
			c.post("/login", "email", "ada@example.com", "password", "correct horse", "next", next).redirects(t, "/")
		}
	}
	c := e.client()
	c.post("/login", "email", "ada@example.com", "password", "correct horse", "next", "/p/my-saas?tag=plan:premium").
		redirects(t, "/p/my-saas?tag=plan:premium")
}

// TestInvitationsListedAndRevoked: owners see pending invitations and revoke them; a
// revoked link no longer works; members cannot revoke.
func TestInvitationsListedAndRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	link := inviteLink(t, e, owner, "")
	page := owner.get("/settings/members")
	page.want(t, 200, "Pending invitations")
	i := strings.Index(page.body, "/settings/members/invites/")
	action := page.body[i : i+strings.Index(page.body[i:], `"`)]
	if strings.Contains(action, strings.TrimPrefix(link, "/invite/")) {
		t.Fatal("the list shows the invitation's secret")
	}
	m, _ := e.member(e.account("acme"), "bob@example.com")
	m.post(action).want(t, 403)
	e.client().get(link).want(t, 200)
	owner.post(action).redirects(t, "/settings/members")
	e.client().get(link).want(t, 404)
	if strings.Contains(owner.get("/settings/members").body, "Pending invitations") {
		t.Fatal("a revoked invitation is still listed")
	}
}
