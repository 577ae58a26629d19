package web_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/web"
)

func TestFirstVisitCreatesTheAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.client()
	c.get("/").redirects(t, "/signup")
	c.get("/signup").want(t, 200, "Create your account", "first person to sign up becomes the owner")
	c.post("/signup", "account", "Acme Inc", "email", "ada@example.com", "password", "correct horse", "password2", "correct horse").
		want(t, 400, tidings.NameRuleMessage)
	c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "short", "password2", "short").
		want(t, 400, "at least 8 characters")
	c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "correct horse", "password2", "different").
		want(t, 400, "differ")
	p := c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "correct horse", "password2", "correct horse")
	p.redirects(t, "/") // home: the getting-started checklist
	cookie := p.header.Get("Set-Cookie")
	for _, want := range []string{"tidings_session=", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Fatalf("session cookie %q lacks %s", cookie, want)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Fatal("Secure cookie over plain HTTP would never come back")
	}
	users, _ := e.store.ListUsers(t.Context(), e.account("acme").ID)
	if len(users) != 1 || users[0].Role != tidings.UserOwner || strings.HasPrefix(users[0].PasswordHash, "correct") ||
		!strings.HasPrefix(users[0].PasswordHash, "$argon2id$") {
		t.Fatalf("first user = %+v", users)
	}
	c.get("/").want(t, 200, "Get started with Tidings", `<span class="gs-n">0</span> of 4`) // no project yet: the checklist

	// Sign-up is closed afterwards.
	other := e.client()
	other.get("/signup").want(t, 403, "Sign-up is closed")
	other.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		want(t, 403, "Sign-up is closed")
	other.get("/").redirects(t, "/login")
}

func TestOpenSignup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	e.owner()
	c := e.client()
	c.get("/signup").want(t, 200)
	c.post("/signup", "account", "acme", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		want(t, 400, "taken")
	c.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
}

func TestLoginLogoutAndPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	c := e.client()
	c.get("/p/my-saas").redirects(t, "/login?next=%2Fp%2Fmy-saas")
	c.post("/login", "email", "ada@example.com", "password", "wrong password").want(t, 401, "Wrong email or password")
	c.post("/login", "email", "nobody@example.com", "password", "wrong password").want(t, 401, "Wrong email or password")
	c.post("/login", "email", "ada@example.com", "password", "correct horse", "next", "//evil.example/").redirects(t, "/")
	c.post("/login", "email", "ADA@example.com", "password", "correct horse", "next", "/p/my-saas").redirects(t, "/p/my-saas")
	c.get("/p/my-saas").want(t, 200, "my-saas")

	second := e.client()
	second.post("/login", "email", "ada@example.com", "password", "correct horse").redirects(t, "/")

	c.post("/settings/password", "current", "wrong", "new", "new password 1", "new2", "new password 1").want(t, 400, "current password is wrong")
	c.post("/settings/password", "current", "correct horse", "new", "new password 1", "new2", "new password 1").want(t, 200, "password is changed")
	second.get("/p/my-saas").redirects(t, "/login?next=%2Fp%2Fmy-saas") // the other session ended
	c.get("/p/my-saas").want(t, 200)                                    // this one stays

	c.post("/logout").redirects(t, "/login")
	c.get("/p/my-saas").redirects(t, "/login?next=%2Fp%2Fmy-saas")
	c.post("/login", "email", "ada@example.com", "password", "new password 1").redirects(t, "/")
}

func TestLoginAttemptsAreLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.owner()
	c := e.client()
	limited := false
	for i := 0; i < 8; i++ {
		p := c.post("/login", "email", "ada@example.com", "password", "guess")
		if p.status == http.StatusTooManyRequests {
			limited = true
			p.want(t, 429, "Too many sign-in attempts")
			break
		}
	}
	if !limited {
		t.Fatal("8 wrong passwords in a row were all checked")
	}
	// From the network that failed, even the right password waits (the limit is per
	// email and network; TestLoginLimiter shows the owner elsewhere still signs in).
	c.post("/login", "email", "ada@example.com", "password", "correct horse").want(t, 429)
}

func TestCrossSiteFormsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		p := c.do("POST", "/settings/projects", map[string][]string{"name": {"evil"}}, h...)
		p.want(t, 403, "sent from another site")
		p = c.do("POST", "/logout", map[string][]string{}, h...)
		p.want(t, 403)
	}
	if _, err := e.store.FindProject(t.Context(), e.account("acme").ID, "evil"); err == nil {
		t.Fatal("a cross-site form created a project")
	}
	// The same form from the dashboard itself goes through.
	c.do("POST", "/settings/projects", map[string][]string{"name": {"fine"}}, "Sec-Fetch-Site", "same-origin").
		redirects(t, "/settings/projects/fine")
}

func TestMembersAndRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	link := inviteLink(t, e, owner, "")

	m := e.client()
	m.get(link).want(t, 200, "Join acme")
	m.post(link, "email", "ada@example.com", "password", "member pass", "password2", "member pass").want(t, 400, "exists already")
	m.post(link, "email", "bob@example.com", "password", "member pass", "password2", "member pass").redirects(t, "/")
	e.client().get(link).want(t, 404) // one use only

	// Members read everything, manage nothing.
	m.get("/p/my-saas").want(t, 200)
	m.get("/settings/projects").want(t, 200, "my-saas")
	m.get("/settings/members").want(t, 200, "bob@example.com")
	for _, path := range []string{"/settings/api", "/settings/projects/my-saas/delete"} {
		m.get(path).want(t, 403, "Only owners")
	}
	for _, path := range []string{"/settings/projects", "/settings/api", "/settings/members/invite", "/settings/projects/my-saas/delete"} {
		m.post(path, "name", "x").want(t, 403, "Only owners")
	}
	if _, err := e.store.FindProject(t.Context(), e.account("acme").ID, "my-saas"); err != nil {
		t.Fatal("a member deleted a project")
	}

	users, _ := e.store.ListUsers(t.Context(), e.account("acme").ID)
	bob := users[1]
	owner.post("/settings/members/"+itoa(users[0].ID)+"/remove").want(t, 403, "cannot remove yourself")
	owner.post("/settings/members/"+itoa(bob.ID)+"/remove").redirects(t, "/settings/members")
	m.get("/p/my-saas").redirects(t, "/login?next=%2Fp%2Fmy-saas")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// inviteLink creates an invitation (role "" leaves the form's default) and returns its
// path, read from the page the form redirects to; that page shows it once.
func inviteLink(t *testing.T, e *env, owner *client, role string) string {
	t.Helper()
	var kv []string
	if role != "" {
		kv = []string{"role", role}
	}
	owner.post("/settings/members/invite", kv...).redirects(t, "/settings/members#invite-link")
	p := owner.get("/settings/members")
	p.want(t, 200, "/invite/")
	link := p.body[strings.Index(p.body, e.srv.URL+"/invite/"):]
	link = strings.TrimPrefix(link[:strings.Index(link, "<")], e.srv.URL)
	if again := owner.get("/settings/members"); strings.Contains(again.body, link) {
		t.Fatal("a reload shows the invitation link again")
	}
	return link
}

// TestInviteAnOwner: an invitation for an owner makes one; a bad role is refused; a
// reload after creating one makes no other.
func TestInviteAnOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	owner.post("/settings/members/invite", "role", "admin").want(t, 400, "member or an owner")
	link := inviteLink(t, e, owner, "owner")
	if invs, _ := e.store.ListInvites(t.Context(), e.account("acme").ID, time.Now()); len(invs) != 1 || invs[0].Role != "owner" {
		t.Fatalf("invitations: %+v", invs)
	}
	owner.get("/settings/members").want(t, 200, `<span class="role">owner</span>`)
	c := e.client()
	c.post(link, "email", "carol@example.com", "password", "owner pass 1", "password2", "owner pass 1").redirects(t, "/")
	c.get("/settings/api").want(t, 200, "Create a token")
}

func TestSecureCookieBehindHTTPSProxy(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	c := e.client()
	p := c.do("POST", "/signup", url.Values{"account": {"acme"}, "email": {"ada@example.com"},
		"password": {"correct horse"}, "password2": {"correct horse"}}, "X-Forwarded-Proto", "https")
	if !strings.Contains(p.header.Get("Set-Cookie"), "Secure") {
		t.Fatalf("cookie behind an HTTPS proxy is not Secure: %q", p.header.Get("Set-Cookie"))
	}
	// A client that is not the trusted proxy cannot claim HTTPS.
	e2 := newEnv(t, false)
	p = e2.client().do("POST", "/signup", url.Values{"account": {"acme"}, "email": {"ada@example.com"},
		"password": {"correct horse"}, "password2": {"correct horse"}}, "X-Forwarded-Proto", "https")
	if strings.Contains(p.header.Get("Set-Cookie"), "Secure") {
		t.Fatal("an untrusted X-Forwarded-Proto was believed")
	}
}

// TestPasswordResetLink: an owner makes a one-time link for a member who lost their
// password; it sets a new one, signs them out elsewhere and in here, and works once.
func TestPasswordResetLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	bob, u := e.member(e.account("acme"), "bob@example.com")
	bob.post("/settings/members/"+itoa(u.ID)+"/reset").want(t, 403, "Only owners")
	users, _ := e.store.ListUsers(t.Context(), e.account("acme").ID)
	owner.post("/settings/members/"+itoa(users[0].ID)+"/reset").want(t, 400, "Settings → Password")
	owner.post("/settings/members/"+itoa(u.ID)+"/reset").redirects(t, "/settings/members/"+itoa(u.ID)+"#reset-link")
	p := owner.get("/settings/members/" + itoa(u.ID))
	p.want(t, 200, "Send this link to <strong>bob@example.com</strong>")
	link := p.body[strings.Index(p.body, e.srv.URL+"/reset/"):]
	link = strings.TrimPrefix(link[:strings.Index(link, "<")], e.srv.URL)
	if strings.Contains(owner.get("/settings/members/"+itoa(u.ID)).body, link) {
		t.Fatal("the reset link is shown again")
	}
	// Listed as a pending reset link, which an owner may revoke.
	owner.get("/settings/members").want(t, 200, "Pending invitations and reset links", "Password reset for bob@example.com")
	c := e.client()
	c.get(link).want(t, 200, "Choose a new password", "bob@example.com")
	c.post(link, "password", "a new password", "password2", "another").want(t, 400, "differ")
	c.post(link, "password", "a new password", "password2", "a new password").redirects(t, "/")
	c.get("/settings/members").want(t, 200, "bob@example.com")
	bob.get("/p/my-saas").redirects(t, "/login?next=%2Fp%2Fmy-saas") // the old session is gone
	e.client().get(link).want(t, 404, "ask an owner of your team for a new one")
	e.client().post("/login", "email", "bob@example.com", "password", "a new password").redirects(t, "/")
	e.client().post("/invite"+strings.TrimPrefix(link, "/reset"), "email", "x@example.com", "password", "whatever1", "password2", "whatever1").want(t, 404)
	if strings.Contains(owner.get("/settings/members").body, "Password reset for") {
		t.Fatal("a used reset link is still listed")
	}
}
