package web_test

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestProjectRows: Settings → Projects is one row per project, leading to the
// project's own page; owners create projects there, members only read; the list has
// no deletion beside anything.
func TestProjectRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	e.publish(acme, tidings.NewEvent{Event: "Signup"})
	list := c.get("/settings/projects")
	list.want(t, 200, `<li id="project-my-saas"><a class="row" href="/settings/projects/my-saas">`, `<span class="row-title">my-saas</span>`, "<span>1 channel</span>",
		"<span>1 event</span>", `<span class="row-chevron" aria-hidden="true">›</span>`, `action="/settings/projects"`)
	if strings.Contains(list.body, "/delete") {
		t.Fatal("the list still offers a deletion")
	}
	page := c.get("/settings/projects/my-saas")
	page.want(t, 200, `<nav class="crumbs" aria-label="Breadcrumb"><ol><li><a href="/settings/projects">Projects</a></li></ol></nav>`,
		"<h1>my-saas</h1>", `href="/p/my-saas/c/payments"`, `role="switch"`, `data-autosave`, `class="danger-zone"`,
		`action="/settings/projects/my-saas/delete-channel"`, `href="/settings/projects/my-saas/delete"`, `href="/settings/projects/my-saas/notify"`,
		// The settings tab stays current on a project's page.
		`<a href="/settings/projects" aria-current="page">Projects</a>`)

	bob, _ := e.member(acme, "bob@example.com")
	mine := bob.get("/settings/projects")
	mine.want(t, 200, `href="/settings/projects/my-saas"`)
	if strings.Contains(mine.body, `action="/settings/projects"`) {
		t.Fatal("a member is offered the new project form")
	}
	view := bob.get("/settings/projects/my-saas")
	view.want(t, 200, "<dt>Create channels on first event</dt><dd>Off</dd>", "Only owners change these settings.")
	for _, owners := range []string{"<form", "danger-zone", "/delete"} {
		if strings.Contains(view.body[strings.Index(view.body, "<main"):], owners) {
			t.Fatalf("a member's view of the project has %q", owners)
		}
	}
	bob.get("/settings/projects/my-saas/delete-channel?channel=payments").want(t, 403)
	bob.get("/settings/projects/my-saas/delete").want(t, 403)
	bob.post("/settings/projects/my-saas/delete", "confirm", "my-saas").want(t, 403)
	bob.post("/settings/projects/my-saas/channels/payments/delete", "confirm", "payments").want(t, 403)
	if _, err := e.store.FindProject(t.Context(), acme.ID, "my-saas"); err != nil {
		t.Fatal(err)
	}
	c.get("/settings/projects/nope").want(t, 404, "There is no project “nope” in your team.")
}

// TestProjectPageOfAnotherAccount: another team's project is not there, whatever the
// page or form of it.
func TestProjectPageOfAnotherAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	e.owner()
	g := e.client()
	g.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	for _, path := range []string{"/settings/projects/my-saas", "/settings/projects/my-saas/channels/payments/delete"} {
		g.get(path).want(t, 404)
	}
	g.post("/settings/projects/my-saas/channels/payments/delete", "confirm", "payments").want(t, 404)
	g.post("/settings/projects/my-saas/delete", "confirm", "my-saas").want(t, 404)
	g.post("/settings/projects/my-saas/auto-create", "on", "true").want(t, 404)
	if p, _ := e.store.FindProject(t.Context(), e.account("acme").ID, "my-saas"); p == nil || p.AutoCreateChannels {
		t.Fatal("another team changed acme's project")
	}
}

// TestProjectFormsGoBack: a project's forms lead back to the page they came from when
// it is one of the project's pages in Settings, and to the project's page otherwise:
// never to another site or another project.
func TestProjectFormsGoBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	c.post("/settings/projects", "name", "other").redirects(t, "/settings/projects/other")
	for _, tc := range []struct{ back, want string }{
		{"", "/settings/projects/my-saas"},
		{"/settings/projects/my-saas/notify", "/settings/projects/my-saas/notify"},
		{"/settings/projects/my-saas#settings-title", "/settings/projects/my-saas#settings-title"},
		{"https://evil.example/settings/projects/my-saas", "/settings/projects/my-saas"},
		{"//evil.example/settings/projects/my-saas", "/settings/projects/my-saas"},
		{`/\evil.example`, "/settings/projects/my-saas"},
		{"/settings/projects/other", "/settings/projects/my-saas"},
		{"/settings/projects/my-saas/../../api", "/settings/projects/my-saas"},
		{"/settings/api", "/settings/projects/my-saas"},
		{"/settings/projects/my-saasx", "/settings/projects/my-saas"},
	} {
		t.Run(tc.back, func(t *testing.T) {
			c.post("/settings/projects/my-saas/retention", "days", "0", "back", tc.back).redirects(t, tc.want)
		})
	}
}

// TestDeleteNamesWhatGoes: the confirmation of a deletion counts what goes with it
// (channels, events, insights, tokens and webhooks limited to it); the danger zone's
// channel picker leads to a channel's confirmation.
func TestDeleteNamesWhatGoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	c.post("/settings/projects/my-saas/channels", "name", "ops").redirects(t, "/settings/projects/my-saas")
	for range 2 {
		e.publish(acme, tidings.NewEvent{Event: "Signup"})
	}
	if _, err := e.store.ApplyInsight(t.Context(), acme.ID, &tidings.InsightChange{Project: "my-saas", Title: "Users",
		Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate}); err != nil {
		t.Fatal(err)
	}
	id, _, hash := tidings.NewTokenSecret()
	if err := e.store.CreateToken(t.Context(), &tidings.Token{ID: id, AccountID: acme.ID, Name: "site", Access: tidings.AccessPublic,
		Project: "my-saas", Channel: "payments", Roles: []string{tidings.RoleLog}, Hash: hash}); err != nil {
		t.Fatal(err)
	}
	c.get("/settings/projects/my-saas/delete").want(t, 200, "<strong>2 channels, 2 events, 1 insight and 1 API token limited to it</strong>",
		`<a href="/settings/projects/my-saas">my-saas</a>`, "Delete my-saas and 2 events")
	c.get("/settings/projects/my-saas/delete-channel?channel=payments").redirects(t, "/settings/projects/my-saas/channels/payments/delete")
	c.get("/settings/projects/my-saas/channels/payments/delete").want(t, 200, "<strong>2 events and 1 API token limited to it</strong>")
	c.get("/settings/projects/my-saas/channels/ops/delete").want(t, 200, "<strong>0 events</strong>", "Delete #ops and 0 events")
	c.get("/settings/projects/my-saas/delete-channel?channel=").want(t, 400, "Pick the channel to delete.")
	c.get("/settings/projects/my-saas/delete-channel?channel=nope").redirects(t, "/settings/projects/my-saas/channels/nope/delete")
	c.get("/settings/projects/my-saas/channels/nope/delete").want(t, 404, "There is no channel “#nope” in the project “my-saas”")
}
