package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/web"
)

// stepDone reports whether the home page's step with that key is ticked.
func stepDone(t *testing.T, p *page, key string) bool {
	t.Helper()
	m := regexp.MustCompile(`<li class="gs-step([^"]*)" data-step="` + key + `"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no step %q on the page: %s", key, excerpt(p.body))
	}
	return strings.Contains(m[1], " done")
}

// TestChecklistTicksAsThingsHappen: a new team's home is the checklist; each step
// ticks from what exists, whichever way it was made; once every step is done, home
// is the project.
func TestChecklistTicksAsThingsHappen(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{VAPIDPublicKey: "BPUBLICKEY"})
	c := e.client()
	c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	home := c.get("/")
	home.want(t, 200, "Get started with Tidings", `<span class="gs-n">0</span> of 5`, `href="/settings/projects">Create a project</a>`,
		`action="/getting-started/hide"`, "The command that sends it appears here once there is a project and a channel.")
	for _, key := range []string{"project", "channel", "token", "event", "push"} {
		if stepDone(t, home, key) {
			t.Errorf("step %s done on a new team", key)
		}
	}
	if strings.Contains(home.body, "data-streams") {
		t.Error("a team without projects listens for events")
	}

	c.post("/settings/projects", "name", "my-saas")
	c.post("/settings/projects/my-saas/channels", "name", "payments")
	home = c.get("/")
	home.want(t, 200, `<span class="gs-n">2</span> of 5`, "Project my-saas is ready.", "Channel #payments in my-saas is ready.",
		`data-streams="/p/my-saas/stream"`, "<code>TIDINGS_TOKEN</code>", "<strong>full-access</strong> token", `&#34;project&#34;:&#34;my-saas&#34;,&#34;channel&#34;:&#34;payments&#34;`)
	if !stepDone(t, home, "project") || !stepDone(t, home, "channel") || stepDone(t, home, "token") {
		t.Fatal("after a project and a channel")
	}
	// The first step not done is the current one.
	if !strings.Contains(home.body, `<li class="gs-step current" data-step="token"`) {
		t.Errorf("the token step is not the current one: %s", excerpt(home.body))
	}

	// A token made with the CLI counts as well; a revoked one does not.
	acme := e.account("acme")
	tok := newToken(acme)
	if err := e.store.CreateToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if home = c.get("/"); !stepDone(t, home, "token") || !strings.Contains(home.body, "Token server (full access) is ready.") {
		t.Fatalf("after a token: %s", excerpt(home.body))
	}
	if err := e.store.RevokeToken(context.Background(), acme.ID, tok.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if stepDone(t, c.get("/"), "token") {
		t.Fatal("a revoked token ticks the step")
	}
	tok = newToken(acme)
	if err := e.store.CreateToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}

	e.publish(acme, tidings.NewEvent{Event: "Hello from curl"})
	home = c.get("/")
	home.want(t, 200, `<span class="gs-n">4</span> of 5`, "Events arrive in my-saas.")
	if !stepDone(t, home, "event") || stepDone(t, home, "push") || strings.Contains(home.body, "data-streams") {
		t.Fatalf("after the first event: %s", excerpt(home.body))
	}

	// A device: every step is done, and home is the project.
	users, _ := e.store.ListUsers(context.Background(), acme.ID)
	if _, err := e.store.SavePushSubscription(context.Background(), &tidings.PushSubscription{ID: "dev1", AccountID: acme.ID,
		UserID: users[0].ID, Endpoint: "https://fcm.googleapis.com/fcm/send/x", P256dh: "p", Auth: "a", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	c.get("/").redirects(t, "/p/my-saas")
}

// TestChecklistWithoutPush: a server without push keys has no notification step.
func TestChecklistWithoutPush(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	home := c.get("/")
	home.want(t, 200, `<span class="gs-n">2</span> of 4`)
	if strings.Contains(home.body, `data-step="push"`) {
		t.Fatal("a notification step without push keys")
	}
}

// TestChecklistHide: hiding is remembered for the member, in every browser, and for
// nobody else; home is then the project.
func TestChecklistHide(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	bob, _ := e.member(acme, "bob@example.com")
	bob.get("/").want(t, 200, "Get started with Tidings")

	p := ada.post("/getting-started/hide")
	p.redirects(t, "/p/my-saas")
	ada.get("/p/my-saas").want(t, 200, "The getting-started checklist is hidden.")
	ada.get("/").redirects(t, "/p/my-saas")
	again := e.client()
	again.post("/login", "email", "ada@example.com", "password", "correct horse").redirects(t, "/")
	again.get("/").redirects(t, "/p/my-saas") // another browser: still hidden
	bob.get("/").want(t, 200, "Get started with Tidings")

	// Hiding needs a session and a form from this site.
	e.client().post("/getting-started/hide").redirects(t, "/login")
	bob.do("POST", "/getting-started/hide", nil, "Sec-Fetch-Site", "cross-site").want(t, 403)
	bob.get("/").want(t, 200, "Get started with Tidings")

	// Without projects, hiding leads to the page that creates one.
	e2 := newEnv(t, true)
	c := e2.client()
	c.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	c.post("/getting-started/hide").redirects(t, "/settings/projects")
	c.get("/").redirects(t, "/settings/projects")
}

// TestChecklistForMembers: a member, who cannot make projects or tokens, sees the
// steps that are theirs: the team's first event and notifications.
func TestChecklistForMembers(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, web.Config{VAPIDPublicKey: "BPUBLICKEY"})
	e.owner()
	bob, _ := e.member(e.account("acme"), "bob@example.com")
	home := bob.get("/")
	home.want(t, 200, `<span class="gs-n">0</span> of 2`, "with a token from an owner of your team", `href="/p/my-saas">Open the feed</a>`)
	for _, key := range []string{"project", "channel", "token"} {
		if strings.Contains(home.body, `data-step="`+key+`"`) {
			t.Errorf("a member is asked to do %s", key)
		}
	}
	if strings.Contains(home.body, "curl") {
		t.Error("a member, who has no token, is given the curl")
	}
}

// TestSignInLandsOnTheBusiestProject: signing in leads to the project whose newest
// event is the newest; ?next= still wins; a team without events goes home.
func TestSignInLandsOnTheBusiestProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ada := e.owner()
	ada.post("/settings/projects", "name", "aaa-first")
	ada.post("/settings/projects/aaa-first/channels", "name", "general")
	signIn := func(next string) *page {
		return e.client().post("/login", "email", "ada@example.com", "password", "correct horse", "next", next)
	}
	signIn("").redirects(t, "/") // no events yet: the checklist

	acme := e.account("acme")
	now := time.Now()
	e.publish(acme, tidings.NewEvent{Project: "aaa-first", Channel: "general", Event: "older", Timestamp: now.Add(-time.Hour)})
	e.publish(acme, tidings.NewEvent{Event: "newer", Timestamp: now.Add(-time.Minute)})
	signIn("").redirects(t, "/p/my-saas")
	e.publish(acme, tidings.NewEvent{Project: "aaa-first", Channel: "general", Event: "newest", Timestamp: now})
	signIn("").redirects(t, "/p/aaa-first")
	signIn("/settings/api").redirects(t, "/settings/api")

	// Another team's activity is not looked at, nor shown.
	eve := e.client()
	eve.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	eve = e.client()
	eve.post("/login", "email", "eve@example.com", "password", "correct horse").redirects(t, "/")
	if home := eve.get("/"); strings.Contains(home.body, "my-saas") || strings.Contains(home.body, "aaa-first") {
		t.Fatalf("another team's projects on globex's home: %s", excerpt(home.body))
	}
}

// newToken is a full-access token of the account, as the CLI makes one.
func newToken(a *tidings.Account) *tidings.Token {
	id, _, hash := tidings.NewTokenSecret()
	return &tidings.Token{ID: id, AccountID: a.ID, Name: "server", Access: tidings.AccessFull, Roles: []string{tidings.RoleLog}, Hash: hash}
}

// landsSignedIn checks that signing in led home or to a project (the one with the
// most recent activity): where depends on the events the test made before.
func (p *page) landsSignedIn(t *testing.T) {
	t.Helper()
	if p.status != 303 || p.location != "/" && !strings.HasPrefix(p.location, "/p/") {
		t.Fatalf("signing in: %d to %q, want home or a project: %s", p.status, p.location, excerpt(p.body))
	}
}
