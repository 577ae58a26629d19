package web_test

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestOneTitlePerPage: a page inside a project names the project as a breadcrumb above
// one title; the sidebar marks the project on every tab; a channel's own feed does not
// repeat the channel on each card, the project's feed does.
func TestOneTitlePerPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	e.publish(acme, tidings.NewEvent{Event: "Refund"})
	crumb := `<nav class="crumbs" aria-label="Breadcrumb"><ol><li><a href="/p/my-saas">my-saas</a></li>`
	for path, title := range map[string]string{
		"/p/my-saas/insights": "<h1>Insights", "/p/my-saas/charts": "<h1>Charts</h1>", "/p/my-saas/users": "<h1>Users</h1>",
		"/p/my-saas/groups": "<h1>Groups</h1>", "/p/my-saas/pages": "<h1>Pages</h1>", "/p/my-saas/channels": "<h1>Channels</h1>",
		"/p/my-saas/c/payments": "<h1>#payments",
	} {
		p := c.get(path)
		p.want(t, 200, crumb, title, `<a class="proj-name" href="/p/my-saas" aria-current=`)
	}
	c.get("/p/my-saas/insights").want(t, 200, `<a class="proj-name" href="/p/my-saas" aria-current="true">`)
	c.get("/p/my-saas").want(t, 200, `<a class="proj-name" href="/p/my-saas" aria-current="page">`, `<a class="ev-channel" href="/p/my-saas/c/payments">#payments</a>`)
	if p := c.get("/p/my-saas/c/payments"); strings.Contains(p.body, `class="ev-channel"`) {
		t.Errorf("the channel's own feed names the channel on its cards: %s", excerpt(p.body))
	}
}

// TestErrorPagesLookAlike: signed in or not, an error is the same card, in sentences.
func TestErrorPagesLookAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	c.get("/p/nope").want(t, 404, `<section class="auth-card error-card">`, "There is no project “nope” in your team.")
	c.get("/p/my-saas/users/ghost").want(t, 404, `<section class="auth-card error-card">`, "There is no user “ghost” in the project “my-saas”.")
	e.client().get("/reset/unknown-secret").want(t, 404, `<section class="auth-card error-card">`)
}
