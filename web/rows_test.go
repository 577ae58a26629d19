package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestTokenFormStartsOnTheCurrentProject: the token form's project is the one of the
// link (?project=), else the one last looked at; "Every project" stays a choice; a
// project of another account is never filled in.
func TestTokenFormStartsOnTheCurrentProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	c.post("/settings/projects", "name", "blog").redirects(t, "/settings/projects/blog")
	selected := func(p *page) string {
		i := strings.Index(p.body, `<select id="tok-project"`)
		sel := p.body[i : i+strings.Index(p.body[i:], "</select>")]
		j := strings.Index(sel, " selected>")
		if j < 0 {
			return ""
		}
		return sel[strings.LastIndex(sel[:j], `value="`)+7 : j-1]
	}
	if got := selected(c.get("/settings/api")); got != "" {
		t.Fatalf("before any project was looked at, the form starts on %q", got)
	}
	if got := selected(c.get("/settings/api?project=blog")); got != "blog" {
		t.Fatalf("from a link for blog, the form starts on %q", got)
	}
	c.get("/p/my-saas").want(t, 200)
	p := c.get("/settings/api")
	if got := selected(p); got != "my-saas" {
		t.Fatalf("after my-saas's feed, the form starts on %q", got)
	}
	p.want(t, 200, `<option value="">Every project</option>`)
	if got := selected(c.get("/settings/api?project=globex-secret")); got != "my-saas" {
		t.Fatalf("an unknown project of the link: the form starts on %q", got)
	}
	// Refused, the form keeps what was chosen, "Every project" included.
	if got := selected(c.post("/settings/api", "name", "x", "access", "full", "project", "")); got != "" {
		t.Fatalf("a refused form with every project starts on %q", got)
	}
}

// TestDetailPagesStayInTheirAccount: a member's and a device's page are found only in
// their own account (a device: only by its own user); members see a member's page
// without the owner's actions; an owner sees the danger zone and cannot remove
// themselves.
func TestDetailPagesStayInTheirAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	acme := e.account("acme")
	bob, bobUser := e.member(acme, "bob@example.com")
	users, _ := e.store.ListUsers(context.Background(), acme.ID)
	ada := users[0]

	owner.get("/settings/members").want(t, 200, `href="/settings/members/`+itoa(bobUser.ID)+`"`, `<span class="you">you</span>`)
	owner.get("/settings/members/"+itoa(bobUser.ID)).want(t, 200, "Danger zone", "Remove bob@example.com", "Make a password reset link")
	self := owner.get("/settings/members/" + itoa(ada.ID))
	self.want(t, 200, "Settings → Password")
	if strings.Contains(self.body, "Danger zone") {
		t.Fatal("an owner is offered to remove themselves")
	}
	asMember := bob.get("/settings/members/" + itoa(ada.ID))
	asMember.want(t, 200, "ada@example.com")
	if strings.Contains(asMember.body, "Danger zone") || strings.Contains(asMember.body, "/reset") {
		t.Fatal("a member is offered an owner's actions")
	}
	bob.get("/settings/members/notanumber").want(t, 404)

	other := newEnvOtherAccount(t, e)
	other.get("/settings/members/"+itoa(bobUser.ID)).want(t, 404)

	// Bob's device: his page; nobody else's, in his team or another.
	sub := &tidings.PushSubscription{ID: tidings.NewID("sub_"), AccountID: acme.ID, UserID: bobUser.ID,
		Endpoint: "https://fcm.googleapis.com/fcm/send/bob", P256dh: "p", Auth: "a", Name: "Bob's phone", Browser: "Chrome on Android"}
	if _, err := e.store.SavePushSubscription(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	subs, _ := e.store.ListPushSubscriptions(context.Background(), bobUser.ID)
	id := subs[0].ID
	bob.get("/settings/devices").want(t, 200, "Bob&#39;s phone", `href="/settings/devices/`+id+`"`)
	bob.get("/settings/devices/"+id).want(t, 200, "Bob&#39;s phone", "Danger zone", "Send a test notification")
	owner.get("/settings/devices/"+id).want(t, 404)
	other.get("/settings/devices/"+id).want(t, 404)
	owner.post("/settings/devices/"+id+"/rename", "name", "mine now").want(t, 404)
	bob.post("/settings/devices/"+id+"/test").redirects(t, "/settings/devices/"+id)
	bob.get("/settings/devices/"+id).want(t, 200, "A test notification is on its way to this device.")
	bob.post("/settings/devices/"+id+"/rename", "name", strings.Repeat("x", 65)).want(t, 400, "at most 64 characters", "Bob&#39;s phone")
	bob.post("/settings/devices/"+id+"/remove").redirects(t, "/settings/devices")
	bob.get("/settings/devices").want(t, 200, "Device removed", "No devices yet")
}
