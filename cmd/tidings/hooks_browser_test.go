package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings"
)

// TestHooksPageInChromium: Settings → Hooks in light, dark and at phone width —
// the create form with a JSON template tried on a sample body, then the list with a
// hook made in the form (its URL shown once, with a copy button) and its delivery log:
// readable contrast, labelled fields, no axe-core violation, no sideways scroll; kept
// as screenshots (hooks-*.png).
func TestHooksPageInChromium(t *testing.T) {
	m, b, _ := signedInBrowser(t)
	axe := axeSource(t)
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name, ready string, load func()) {
		t.Helper()
		for _, size := range []struct {
			name          string
			width, height int64
		}{{"", 1280, 900}, {"-phone", 390, 844}} {
			b.do(chromedp.EmulateViewport(size.width, size.height))
			for _, scheme := range []string{"light", "dark"} {
				b.colorScheme(scheme)
				load()
				b.mustUntil(ready)
				if bad := get(b, chromedp.Evaluate[[]string](contrastCheck)); len(bad) > 0 {
					t.Errorf("%s (%s%s): text below 4.5:1 contrast: %v", name, scheme, size.name, bad)
				}
				for _, v := range b.axe(axe) {
					t.Errorf("%s (%s%s): axe-core: %s", name, scheme, size.name, v)
				}
				if w := get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
					t.Errorf("%s (%s%s) scrolls sideways by %d px", name, scheme, size.name, w)
				}
				b.checkLabels(name)
				b.screenshot("hooks-" + name + "-" + scheme + size.name)
			}
		}
		b.colorScheme("light")
		b.do(chromedp.EmulateViewport(1280, 900))
	}

	// The form: only the picked source's fields are shown; a JSON template tried on a
	// sample body shows the event it would make, and the form keeps what was typed.
	b.do(chromedp.Navigate(m.URL() + "/settings/hooks"))
	b.mustUntil(`document.querySelector("#create-hook")`)
	if get(b, chromedp.Evaluate[bool](`document.querySelector(".source-extra[data-source=json]").hidden && !document.querySelector(".source-extra[data-source=stripe]").hidden`)) != true {
		t.Error("with Stripe picked, the JSON template is shown or Stripe's option hidden")
	}
	tryIt := func() {
		b.do(chromedp.Navigate(m.URL() + "/settings/hooks"))
		b.mustUntil(`document.querySelector("#create-hook")`)
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("input[name=source][value=json]").click()`))
		b.mustUntil(`!document.querySelector(".source-extra[data-source=json]").hidden`)
		b.do(chromedp.SetValue(chromedp.CSS(`#hk-name`), "Orders"),
			chromedp.SetValue(chromedp.CSS(`#hk-t-event`), "Order {{.status}}"),
			chromedp.SetValue(chromedp.CSS(`#hk-t-icon`), "🛒"),
			chromedp.SetValue(chromedp.CSS(`#hk-t-tags`), `{"order": "{{.order.id}}", "total": "{{.order.total}}"}`),
			chromedp.SetValue(chromedp.CSS(`#hk-t-user`), "{{.customer}}"),
			chromedp.SetValue(chromedp.CSS(`#hk-t-notify`), `{{if eq .status "paid"}}true{{end}}`),
			chromedp.SetValue(chromedp.CSS(`#hk-sample`), `{"order": {"id": "A-1042", "total": "49.90"}, "status": "paid", "customer": "cus_9"}`))
		b.click(`document.querySelector("button[name=try]").click()`)
	}
	check("try", `document.querySelector("#tried table")`, tryIt)
	if got := b.text("#tried"); !strings.Contains(got, "Order paid") || !strings.Contains(got, "order: A-1042") {
		t.Errorf("the tried template shows %q", got)
	}
	if v := get(b, chromedp.Evaluate[string](`document.querySelector("#hk-t-event").value`)); v != "Order {{.status}}" {
		t.Errorf("the form lost its template: %q", v)
	}

	// Saved: the URL is shown once with a copy button, and its secret; then a log.
	b.submit("#hk-name", "Orders")
	b.mustUntil(`document.querySelector("#new-hook-url")`)
	url := b.text("#new-hook-url")
	if !strings.HasPrefix(url, m.URL()+"/hooks/hk_") || b.text("#new-hook-secret") == "" {
		t.Fatalf("the new hook's URL %q", url)
	}
	b.screenshot("hooks-created")
	if _, err := m.store.CreateChannel(ctx, acme.ID, "my-saas", "deploys"); err != nil {
		t.Fatal(err)
	}
	_, hash := tidings.NewHookPath()
	gh := &tidings.Hook{ID: tidings.HookID(hash), PathHash: hash, AccountID: acme.ID, Project: "my-saas", Channel: "deploys",
		Source: tidings.HookGitHub, Name: "GitHub tidings-dev/tidings", Secret: "s3cret"}
	if err := m.store.CreateHook(ctx, gh); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, a := range []tidings.HookAttempt{
		{DeliveryID: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Status: 200, Events: 1},
		{DeliveryID: "9a5c0e2e-cc78-11e3-81ab-4c9367dc0958", Status: 200, Events: 1},
		{DeliveryID: "b1e2a0f4-cc78-11e3-81ab-4c9367dc0958", Status: 401, Error: "X-Hub-Signature-256 does not match the hook's secret"},
		{DeliveryID: "c0ffee00-cc78-11e3-81ab-4c9367dc0958", Status: 200, Events: 0},
	} {
		a.HookID, a.At = gh.ID, now.Add(time.Duration(i-4)*7*time.Minute)
		if err := m.store.RecordHookAttempt(ctx, acme.ID, &a); err != nil {
			t.Fatal(err)
		}
	}
	check("list", `document.querySelector("#hook-`+gh.ID+` .attempts tbody tr")`, func() {
		b.do(chromedp.Navigate(m.URL() + "/settings/hooks")) // a fragment alone would not load the page
	})
	log := b.text("#hook-" + gh.ID)
	for _, want := range []string{"GitHub tidings-dev/tidings", "my-saas #deploys", "last delivery ✓ 200", "✗ 401", "does not match"} {
		if !strings.Contains(log, want) {
			t.Errorf("the hook's panel lacks %q:\n%s", want, log)
		}
	}
	// Delete, confirmed.
	b.click(`document.querySelector("#hook-` + gh.ID + ` form[action$='/delete'] button").click()`)
	b.mustUntil(`document.querySelector(".notice") && !document.querySelector("#hook-` + gh.ID + `")`)
	if hooks, _ := m.store.ListHooks(ctx, acme.ID); len(hooks) != 1 {
		t.Errorf("after delete: %d hooks", len(hooks))
	}
}
