package web_test

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

// fillProject gives an account's project as many channels and insights as its caps allow.
func (e *env) fillProject(a *tidings.Account, project string) {
	e.t.Helper()
	ctx := context.Background()
	cs, err := e.store.ListChannels(ctx, a.ID, project)
	if err != nil {
		e.t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, tidings.MaxChannelsPerProject+tidings.MaxInsightsPerProject)
	for i := range tidings.MaxChannelsPerProject - len(cs) {
		wg.Go(func() {
			if _, err := e.store.CreateChannel(ctx, a.ID, project, fmt.Sprintf("channel-%04d", i)); err != nil {
				errs <- err
			}
		})
	}
	for i := range tidings.MaxInsightsPerProject {
		wg.Go(func() {
			if _, err := e.store.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: project, Title: fmt.Sprintf("Insight %04d", i),
				Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
}

// TestPagesBoundedAtCaps: with two projects full of channels and insights, no page of
// the dashboard is larger than maxPage.
func TestPagesBoundedAtCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	c := e.owner()
	c.post("/settings/projects", "name", "other").redirects(t, "/settings/projects/other")
	acme := e.account("acme")
	e.fillProject(acme, "my-saas")
	e.fillProject(acme, "other")
	e.publish(acme, tidings.NewEvent{Event: "Signup"})
	const maxPage = 64 << 10
	for _, path := range []string{"/p/my-saas", "/p/other", "/p/my-saas/c/payments", "/p/my-saas/insights",
		"/settings/projects", "/settings/projects/my-saas", "/settings/projects/my-saas/delete", "/p/my-saas/channels", "/p/my-saas/charts", "/settings/api", "/settings/webhooks",
		"/settings/notifications", "/settings/members"} {
		p := c.get(path)
		p.want(t, 200)
		t.Logf("%s: %d bytes", path, len(p.body))
		if len(p.body) > maxPage {
			t.Errorf("%s is %d KiB with %d channels and insights per project (at most %d KiB)", path, len(p.body)>>10,
				tidings.MaxChannelsPerProject, maxPage>>10)
		}
	}
}

var (
	cardTitle = regexp.MustCompile(`<h2 title="([^"]*)">`)
	nextLink  = regexp.MustCompile(`<a href="([^"]*)" rel="next">`)
)

// TestDashboardAtCaps: in a full project, the web form refuses channel number
// MaxChannelsPerProject+1 saying why; the insights page and the channel list show
// every insight and channel once, a page at a time; the sidebar leads to the rest; a
// channel not in a form's list can still be chosen by name.
func TestDashboardAtCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	c := e.owner()
	acme := e.account("acme")
	e.fillProject(acme, "my-saas")
	p := c.post("/settings/projects/my-saas/channels", "name", "one-too-many")
	p.want(t, 409, fmt.Sprintf("has %d channels, the most a project may have", tidings.MaxChannelsPerProject), "delete channels you no longer use")

	walk := func(start string, item *regexp.Regexp, perPage int) map[string]bool {
		t.Helper()
		seen := map[string]bool{}
		for path, pages := start, 0; path != ""; pages++ {
			if pages > 20 {
				t.Fatal("paging does not end")
			}
			p := c.get(path)
			p.want(t, 200)
			items := item.FindAllStringSubmatch(p.body, -1)
			if len(items) == 0 || len(items) > perPage {
				t.Fatalf("%s shows %d items (at most %d a page)", path, len(items), perPage)
			}
			for _, m := range items {
				if seen[m[1]] {
					t.Fatalf("%q on two pages", m[1])
				}
				seen[m[1]] = true
			}
			path = ""
			if m := nextLink.FindStringSubmatch(p.body); m != nil {
				path = html.UnescapeString(m[1])
			}
		}
		return seen
	}
	if n := len(walk("/p/my-saas/insights", cardTitle, tidings.DefaultInsightPage)); n != tidings.MaxInsightsPerProject {
		t.Fatalf("the insights pages show %d insights, want %d", n, tidings.MaxInsightsPerProject)
	}
	// The list's items, not the sidebar's: an owner's have a delete link.
	channelLink := regexp.MustCompile(`<li><a href="/p/my-saas/c/([a-z0-9-]+)">#[a-z0-9-]+</a> <a class="danger`)
	if n := len(walk("/p/my-saas/channels", channelLink, 100)); n != tidings.MaxChannelsPerProject {
		t.Fatalf("the channel list shows %d channels, want %d", n, tidings.MaxChannelsPerProject)
	}
	c.get("/p/my-saas").want(t, 200, `href="/p/my-saas/channels">980 more channels…</a>`, "#channel-0018")
	c.get("/p/my-saas/c/channel-0990").want(t, 200, `aria-current="page">#channel-0990</a>`, "979 more channels…")
	found := c.get("/p/my-saas/channels?q=" + url.QueryEscape("0099"))
	found.want(t, 200, "1 of 1000 channels match", "#channel-0099")
	if strings.Contains(found.body, "#channel-0098") {
		t.Fatal("the search shows a channel it does not match")
	}
	// A channel past the form's list, by name: a token limited to it.
	c.post("/settings/api", "name", "late", "access", "public", "project", "my-saas", "channel_name", "channel-0990",
		"role_log", "1").want(t, 303)
	ts, err := e.store.ListTokens(context.Background(), acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Channel != "channel-0990" {
		t.Fatalf("tokens %+v", ts)
	}
	// A mute of a channel past the list is kept when the form is saved again.
	c.post("/settings/notifications", "mute_more", "my-saas/channel-0990", "time_zone", "UTC").redirects(t, "/settings/notifications?saved=1")
	muted := `value="my-saas/channel-0990" checked`
	c.get("/settings/notifications").want(t, 200, muted)
	c.post("/settings/notifications", "mute", "my-saas/channel-0990", "time_zone", "UTC").redirects(t, "/settings/notifications?saved=1")
	c.get("/settings/notifications").want(t, 200, muted)
}
