package main

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings"
)

// TestFullProjectInChromium: a project at its caps (1,000 channels, 1,000 insights)
// reads well — the sidebar's link to the other channels, the channel list with its
// search, the insights a page at a time, the refusal of one more channel in Settings —
// with labelled fields, readable contrast and no axe-core violation.
func TestFullProjectInChromium(t *testing.T) {
	m, b, _ := signedInBrowser(t)
	s := m.store // the server's own: its writer, its live updates
	ctx := context.Background()
	a, err := s.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, tidings.MaxChannelsPerProject+tidings.MaxInsightsPerProject)
	for i := range tidings.MaxChannelsPerProject - 1 {
		wg.Go(func() {
			if _, err := s.CreateChannel(ctx, a.ID, "my-saas", fmt.Sprintf("channel-%04d", i)); err != nil {
				errs <- err
			}
		})
	}
	for i := range tidings.MaxInsightsPerProject {
		wg.Go(func() {
			if _, err := s.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "my-saas", Title: fmt.Sprintf("Signups %04d", i),
				Value: fmt.Sprint(i * 7), ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	axe := axeSource(t)
	check := func(name string) {
		t.Helper()
		if bad := get(b, chromedp.Evaluate[[]string](contrastCheck)); len(bad) > 0 {
			t.Errorf("%s: text below 4.5:1 contrast: %v", name, bad)
		}
		for _, v := range b.axe(axe) {
			t.Errorf("%s: axe-core: %s", name, v)
		}
		b.checkLabels(name)
		b.screenshot("full-" + name)
	}
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.mustUntil(`document.querySelector('#sidebar a.more') && document.querySelector('#sidebar a.more').textContent === "980 more channels…"`)
	check("feed")
	b.click(`document.querySelector('#sidebar a.more').click()`)
	b.mustUntil(`location.pathname === "/p/my-saas/channels" && document.querySelectorAll("main ul.channels li").length === 100`)
	check("channels")
	b.submit("#cq", "099")
	b.mustUntil(`document.querySelectorAll("main ul.channels li").length === 10`)
	check("channels-search")
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/insights"))
	b.mustUntil(`document.querySelectorAll(".grid .card").length === 100 && document.querySelector('a[rel="next"]')`)
	check("insights")
	b.click(`document.querySelector('a[rel="next"]').click()`)
	b.mustUntil(`document.querySelectorAll(".grid .card").length === 100 && document.querySelector(".grid .card h2").textContent !== ""`)
	check("insights-page-2")
	b.do(chromedp.Navigate(m.URL() + "/settings/projects/my-saas"))
	b.submit("#ch-my-saas", "one-too-many")
	b.mustUntil(`document.querySelector("p.error") && document.querySelector("p.error").textContent.includes("has 1000 channels")`)
	check("settings-refused")
	for _, path := range []string{"/settings/api", "/settings/notifications", "/p/my-saas/charts"} {
		b.do(chromedp.Navigate(m.URL() + path))
		check(shotName(path)[1:])
	}
}
