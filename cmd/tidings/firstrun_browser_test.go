package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestFirstRunInChromium: a new sign-up lands on the getting-started checklist, which
// ticks as the project, channel and token are made in the UI, ticks the first event
// live (without a reload) when it arrives over the API, and ticks notifications when
// this browser has a push subscription; hidden, home is the project. Each state is
// judged in light and dark, on a desktop and a phone.
func TestFirstRunInChromium(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	m := startServer(t, testbackend.Location(t), nil)
	b := newBrowser(t, m.URL())
	axe := axeSource(t)

	b.do(chromedp.Navigate(m.URL() + "/"))
	b.submit("#account", "acme", "#email", "ada@example.com", "#password", "correct horse", "#password2", "correct horse")
	if loc := b.location(); loc != "/" {
		t.Fatalf("after sign-up: %s, want the checklist at /", loc)
	}
	b.mustUntil(`document.querySelector(".getting-started .gs-n").textContent === "0" && document.querySelectorAll(".gs-step").length === 5`)
	b.checkLabels("getting started")
	judgeFirstRun(t, b, axe, "firstrun-new")

	// Each unticked step links to where it is done.
	b.click(`document.querySelector('.gs-step[data-step="project"] .gs-do a').click()`)
	if loc := b.location(); loc != "/settings/projects" {
		t.Fatalf("the project step leads to %s", loc)
	}
	b.submit(`form[action="/settings/projects"] input[name=name]`, "my-saas")
	b.submit(`form[action="/settings/projects/my-saas/channels"] input[name=name]`, "payments")
	b.do(chromedp.Navigate(m.URL() + "/"))
	b.mustUntil(`document.querySelector(".gs-n").textContent === "2"`)
	b.click(`document.querySelector('.gs-step[data-step="token"] .gs-do a').click()`)
	if loc := b.location(); loc != "/settings/api" {
		t.Fatalf("the token step leads to %s", loc)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=access][value=full]').click()`))
	b.submit(`form[action="/settings/api"] input[name=name]`, "server")
	token := get(b, chromedp.Evaluate[string](`(document.body.innerText.match(/tds_[A-Za-z0-9_]+/) || [""])[0]`))
	if token == "" {
		t.Fatal("no token shown after creating one")
	}

	// The event step: the curl names TIDINGS_TOKEN; the page listens before the event is sent.
	b.do(chromedp.Navigate(m.URL() + "/"))
	b.mustUntil(`document.querySelector(".gs-n").textContent === "3" && document.querySelector('.getting-started[data-live="on"]')`)
	if curl := b.text("#first-event"); !strings.Contains(curl, "$TIDINGS_TOKEN") || !strings.Contains(curl, `"project":"my-saas","channel":"payments"`) {
		t.Fatalf("the first event's curl: %s", curl)
	}
	judgeFirstRun(t, b, axe, "firstrun-steps")
	b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(m.URL()+"/"))
	b.mustUntil(`document.querySelector('.getting-started[data-live="on"]')`)
	b.do(chromedp.Evaluate[chromedp.Void](`window.samePage = true`))
	if status, body := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Hello from curl","icon":"👋"}`); status != 200 {
		t.Fatalf("publish: %d %s", status, body)
	}
	b.mustUntil(`document.querySelector('.gs-step[data-step="event"]').classList.contains("done") && document.querySelector(".gs-n").textContent === "4"`)
	if !get(b, chromedp.Evaluate[bool](`window.samePage === true && document.querySelector("#gs-bar").value === 4`)) {
		t.Fatal("the event step ticked by reloading the page, or the bar did not move")
	}
	if txt := b.text(`.gs-step[data-step="event"]`); !strings.Contains(txt, "Your first event arrived.") || !strings.Contains(txt, "Open the feed") {
		t.Fatalf("the ticked event step: %s", txt)
	}
	judgeFirstRun(t, b, axe, "firstrun-event")

	// A browser with a push subscription ticks the last step (no push service is
	// reachable here: the registration's pushManager answers with one).
	b.do(chromedp.EmulateViewport(1280, 900))
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `if (navigator.serviceWorker) navigator.serviceWorker.getRegistration = function () {
			return Promise.resolve({ pushManager: { getSubscription: function () { return Promise.resolve({ endpoint: "x" }); } } });
		};`}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(m.URL() + "/"))
	b.mustUntil(`document.querySelector('.gs-step[data-step="push"]').classList.contains("done") && !document.querySelector(".gs-all").hidden`)
	b.screenshot("firstrun-all-done")

	// Hidden: remembered, and home is the project with the event.
	b.click(`document.querySelector(".gs-hide").click()`)
	if loc := b.location(); loc != "/p/my-saas" {
		t.Fatalf("after hiding the checklist: %s", loc)
	}
	if msg := b.text(".notice-ok"); !strings.Contains(msg, "checklist is hidden") {
		t.Fatalf("after hiding: %q", msg)
	}
	b.do(chromedp.Navigate(m.URL() + "/"))
	if loc := b.location(); loc != "/p/my-saas" {
		t.Fatalf("home after hiding the checklist: %s", loc)
	}
}

// judgeFirstRun screenshots the checklist as it is in light and dark on a desktop and
// on a phone (390×844), checks it with axe-core and for contrast in each, and checks
// that it is no wider than a 390 or a 320 px screen.
func judgeFirstRun(t *testing.T, b *browser, axe, name string) {
	t.Helper()
	sizes := []struct {
		suffix        string
		width, height int64
	}{{"", 1280, 900}, {"-phone", 390, 844}}
	for _, size := range sizes {
		b.do(chromedp.EmulateViewport(size.width, size.height))
		for _, scheme := range []string{"light", "dark"} {
			b.colorScheme(scheme)
			b.mustUntil(`document.querySelector(".getting-started")`)
			for _, v := range b.axe(axe) {
				t.Errorf("%s (%s%s): axe-core: %s", name, scheme, size.suffix, v)
			}
			if bad := get(b, chromedp.Evaluate[[]string](contrastCheck)); len(bad) > 0 {
				t.Errorf("%s (%s%s): text below 4.5:1 contrast: %v", name, scheme, size.suffix, bad)
			}
			b.screenshot(fmt.Sprintf("%s%s-%s", name, size.suffix, scheme))
		}
	}
	b.colorScheme("light")
	for _, width := range []int64{390, 320} {
		b.do(chromedp.EmulateViewport(width, 844))
		if w := get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
			t.Errorf("%s scrolls sideways by %d px at %d px", name, w, width)
		}
	}
	b.do(chromedp.EmulateViewport(1280, 900))
}
