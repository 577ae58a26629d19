package web_test

import (
	"context"
	"fmt"
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
	c.post("/settings/projects", "name", "other").redirects(t, "/settings/projects#project-other")
	acme := e.account("acme")
	e.fillProject(acme, "my-saas")
	e.fillProject(acme, "other")
	e.publish(acme, tidings.NewEvent{Event: "Signup"})
	const maxPage = 150 << 10
	for _, path := range []string{"/p/my-saas", "/p/other", "/p/my-saas/c/payments", "/p/my-saas/insights",
		"/settings/projects", "/p/my-saas/channels", "/p/my-saas/charts", "/settings/api", "/settings/webhooks",
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
