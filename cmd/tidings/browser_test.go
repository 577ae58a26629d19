package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/testenv"
)

// chromium finds the browser, or skips (fails where TIDINGS_REQUIRE_SERVICES=1, as in CI).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TIDINGS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Need(t, "Chromium is not installed (apt-get install chromium fonts-noto-color-emoji)")
	return ""
}

// artifacts is where screenshots are kept: TIDINGS_ARTIFACTS, or a temp folder.
func artifacts(t *testing.T) string {
	dir := os.Getenv("TIDINGS_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "tidings-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	browserSlots <- struct{}{}
	t.Cleanup(func() { <-browserSlots }) // after the browser's own cleanups
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout
		t.Fatalf("starting Chromium: %v", err)
	}
	// Confirmation dialogs (revoke, remove) are accepted, as a person would.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return &browser{t: t, ctx: ctx, base: base, shot: artifacts(t)}
}

// do runs steps with a time limit; on failure it keeps a screenshot of the page.
// stepTimeout bounds one browser step (a navigation, a submit and the page it loads):
// generous, for a machine running the suite's other tests and a second browser.
const stepTimeout = 45 * time.Second

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.screenshot("failure")
		b.t.Fatal(err)
	}
}

func get[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.screenshot("failure")
		b.t.Fatal(err)
	}
	return v
}

func (b *browser) location() string { return strings.TrimPrefix(get(b, chromedp.Location()), b.base) }

func (b *browser) text(sel string) string { return get(b, chromedp.Text(chromedp.CSS(sel))) }

// until waits for a JavaScript condition to hold.
func (b *browser) until(js string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, time.Until(deadline)+time.Second)
		err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		// A page still being replaced (a click's navigation) destroys the context the
		// check runs in: check again on the new page.
		if err == nil || !navigating(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context") || strings.Contains(msg, "context was destroyed")
}

// settle waits for a condition on a page that may still be navigating: a check that
// meets a page being replaced is tried again.
func (b *browser) settle(js string) {
	b.t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var ok bool
		if ok, err = chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
	}
	b.screenshot("failure")
	b.t.Fatalf("waiting for %s: %v", js, err)
}

func (b *browser) mustUntil(js string) {
	b.t.Helper()
	if err := b.until(js, 30*time.Second); err != nil {
		b.screenshot("failure")
		b.t.Fatalf("waiting for %s: %v", js, err)
	}
}

func (b *browser) screenshot(name string) {
	// Every page kept as a screenshot fits its screen and has no target too small to
	// tap: the check runs wherever a test keeps one (not on a failure's).
	if name != "failure" {
		b.t.Helper()
		width, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`window.innerWidth`))
		if err == nil {
			b.fits(name, int64(width))
		}
	}
	// From the top: a page scrolled to an anchor would draw its sticky header mid-page.
	chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // quality 100 gives PNG
	if err == nil {
		p := filepath.Join(b.shot, name+".png")
		os.WriteFile(p, png, 0o644)
		b.t.Logf("screenshot: %s", p)
	}
}

// unlabelled lists the visible form fields of the page that have no label.
func (b *browser) checkLabels(page string) {
	b.t.Helper()
	missing := get(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
		.filter(el => el.labels.length === 0 && !el.getAttribute("aria-label")).map(el => el.name || el.id || el.type)`))
	if len(missing) > 0 {
		b.t.Errorf("%s: form fields without a label: %v", page, missing)
	}
}

// submit fills fields (selector, value, …), submits the form of the last one and
// waits for the page that answers.
func (b *browser) submit(fields ...string) {
	b.t.Helper()
	var steps []chromedp.Action[chromedp.Void]
	for i := 0; i+1 < len(fields); i += 2 {
		steps = append(steps, chromedp.SetValue(chromedp.CSS(fields[i]), fields[i+1]))
	}
	steps = append(steps, chromedp.Submit(chromedp.CSS(fields[len(fields)-2])))
	get(b, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Steps(steps...)))
}

// click clicks and waits for the page that answers.
func (b *browser) click(js string) {
	b.t.Helper()
	get(b, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Evaluate[chromedp.Void](js)))
}

// browserSlots lets two browsers run at once: the browser tests are parallel with the
// rest, and more Chromiums than cores would only make each one slow.
var browserSlots = make(chan struct{}, 2)

// signedInBrowser starts a server with the usual account (project my-saas, channel
// payments; made with the CLI) and a browser signed in as its owner. token is a public
// token of my-saas, as a browser or an app would use.
func signedInBrowser(t *testing.T) (m *Main, b *browser, token string) {
	t.Helper()
	testbackend.Once(t)
	t.Parallel()
	loc := testbackend.Location(t)
	setupAccount(t, loc)
	if code, _, errs := runCLI(t, loc, "correct horse\n", "user", "create", "ada@example.com", "--role", "owner"); code != 0 {
		t.Fatal(errs)
	}
	_, out, _ := runCLI(t, loc, "", "token", "create", "--access", "public", "--project", "my-saas")
	token = strings.TrimSpace(out)
	m = startServer(t, loc, nil)
	// Registered before the browser's cleanups, so it runs after them: the server
	// waits for open event streams, which the browser closes.
	b = newBrowser(t, m.URL())
	b.do(chromedp.Navigate(m.URL() + "/login"))
	b.submit("#email", "ada@example.com", "#password", "correct horse")
	b.mustUntil(`location.pathname !== "/login"`)
	return m, b, token
}

// TestSignUpInChromium walks a newcomer's first session: a fresh install opens the
// sign-up, then a project, a channel and a token are made in the UI; revoking the token
// in the UI refuses it at once; sign-out, and sign-in with the keyboard alone; the
// dashboard installs as an app.
func TestSignUpInChromium(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	m := startServer(t, testbackend.Location(t), nil)
	b := newBrowser(t, m.URL())

	b.do(chromedp.Navigate(m.URL() + "/"))
	if loc := b.location(); loc != "/signup" {
		t.Fatalf("a fresh install opens %s, want /signup", loc)
	}
	b.checkLabels("sign-up")
	for _, v := range b.axe(axeSource(t)) {
		t.Errorf("sign-up: axe-core: %s", v)
	}
	b.screenshot("sign-up")
	// A team name typed as a name shows the address it becomes.
	b.do(chromedp.Focus(chromedp.CSS("#account")), chromedp.KeyEvent("Acme Inc"))
	b.mustUntil(`document.getElementById("account-help").textContent.includes("acme-inc")`)
	b.screenshot("sign-up-slug") // and it is submitted as acme-inc
	b.do(chromedp.SetValue(chromedp.CSS("#email"), "ada@example.com"), chromedp.SetValue(chromedp.CSS("#password"), "correct horse"),
		chromedp.SetValue(chromedp.CSS("#password2"), "correct horse"))
	b.click(`document.querySelector('form[action="/signup"] button[type=submit]').click()`) // as a person does: the submit event fires
	if loc := b.location(); loc != "/" || !strings.Contains(b.text(".getting-started"), "0 of") {
		t.Fatalf("after sign-up: %s, want the getting-started checklist", loc)
	}
	if who := b.text(".who"); !strings.HasPrefix(who, "acme-inc ·") {
		t.Fatalf("the team typed as Acme Inc is %q", who)
	}
	b.do(chromedp.Navigate(m.URL() + "/settings/projects"))
	b.submit("#new-project", "My SaaS")
	if msg := b.text(".error"); !strings.Contains(msg, "lowercase letters, digits and single dashes") {
		t.Fatalf("bad project name: %q", msg)
	}
	b.submit("#new-project", "my-saas")
	b.submit("#ch-my-saas", "payments")
	if got := b.text("#project-my-saas .channels"); !strings.Contains(got, "#payments") {
		t.Fatalf("channel not listed: %q", got)
	}
	b.screenshot("settings-projects")
	b.checkLabels("settings → projects")
	// A new project's pages say what to do next.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	if txt := b.text("main"); !strings.Contains(txt, "No events yet") || !strings.Contains(b.text("#first-event"), `"project":"my-saas","channel":"payments"`) {
		t.Fatalf("an empty feed: %s", txt)
	}
	b.screenshot("feed-empty")
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/insights"))
	b.screenshot("insights-empty")

	// A token made in the UI, shown once, with a curl example that uses it.
	b.do(chromedp.Navigate(m.URL()+"/settings/api"), chromedp.SetValue(chromedp.CSS("#tok-project"), "my-saas"))
	b.submit("#tok-name", "website", "#tok-channel", "payments")
	token := strings.TrimSpace(b.text("#new-token"))
	if !strings.HasPrefix(token, "tds_") || !strings.Contains(b.text("#curl-example"), token) {
		t.Fatalf("token %q, example %q", token, b.text("#curl-example"))
	}
	b.screenshot("settings-api")
	b.checkLabels("settings → API")

	status, resp := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"first"}`)
	if status != 200 {
		t.Fatalf("publish with the token made in the UI: %d %s", status, resp)
	}

	// Revoke in the UI: the API refuses the token at once.
	b.do(chromedp.Navigate(m.URL() + "/settings/api"))
	b.click(`document.querySelector('.rows.tokens a.row').click()`)
	b.click(`document.querySelector('.danger-zone button').click()`)
	b.mustUntil(`document.querySelector(".row.revoked")`)
	if status, resp := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"x"}`); status != 401 {
		t.Fatalf("after revoking in the UI: %d %s", status, resp)
	}

	// Sign out, then sign in with the keyboard alone: type, Tab, type, Enter.
	b.click(`document.querySelector('form[action="/logout"] button').click()`)
	if loc := b.location(); loc != "/login" {
		t.Fatalf("after sign-out: %s", loc)
	}
	b.checkLabels("sign-in")
	// Signed out: the sign-in page and the closed sign-up's error card, judged by axe-core.
	for _, path := range []string{"/login", "/signup"} {
		b.do(chromedp.Navigate(m.URL() + path))
		for _, v := range b.axe(axeSource(t)) {
			t.Errorf("%s: axe-core: %s", path, v)
		}
		b.screenshot("signed-out" + shotName(path))
	}
	b.do(chromedp.Navigate(m.URL() + "/login"))
	b.submit("#email", "ada@example.com", "#password", "not my password")
	// The browser applies autofocus at its next rendering update, after the load event.
	b.until(`document.activeElement.id === "password"`, 30*time.Second)
	if focused := get(b, chromedp.Evaluate[string](`document.activeElement.id`)); focused != "password" || !strings.Contains(b.text(".auth-card .error"), "Wrong email or password") {
		t.Fatalf("after a wrong password: focus on %q, error %q", focused, b.text(".auth-card .error"))
	}
	b.screenshot("sign-in-error")
	b.do(chromedp.Navigate(m.URL() + "/login"))
	b.do(chromedp.Focus(chromedp.CSS("#email")), chromedp.KeyEvent("ada@example.com"), chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent("correct horse"))
	get(b, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.KeyEvent(kb.Enter)))
	b.mustUntil(`location.pathname === "/p/my-saas"`)

	// The dashboard installs as an app (manifest, icons, service worker).
	inst, err := chromedp.Call(b.ctx, page.GetInstallabilityErrors, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range inst.InstallabilityErrors {
		t.Errorf("not installable as an app: %s %v", e.ErrorID, e.ErrorArguments)
	}
}

// TestLiveFeedInChromium: events appear live in the open feed, hostile Markdown renders
// safely, the tag filter and the search narrow the feed (and the live events), a long
// description folds, a reader scrolled down is told of new events, and a burst of one
// group commit arrives complete, in order.
func TestLiveFeedInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)

	// The feed, live.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.mustUntil(`document.querySelector('.feed[data-live="on"]')`)
	b.checkLabels("feed")
	evil := "**Paid** by <script>window.pwned=1</script> <img src=x onerror=\"window.pwned=2\"> " +
		"[click](javascript:window.pwned=3)\n\nsecond line"
	body, _ := json.Marshal(map[string]any{"project": "my-saas", "channel": "payments", "event": "New Subscription",
		"description": evil, "parser": "markdown", "icon": "💰", "tags": map[string]any{"plan": "premium", "seats": 3}})
	status, resp := post(t, m.URL()+"/v1/log", token, string(body))
	acked := time.Now()
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}
	var ev struct{ ID string }
	json.Unmarshal([]byte(resp), &ev)
	if err := b.until(`document.getElementById("ev-`+ev.ID+`")`, 30*time.Second); err != nil {
		b.screenshot("feed-not-live")
		t.Fatalf("the event did not appear in the open feed: %v", err)
	}
	if get(b, chromedp.Evaluate[bool](`!!document.querySelector(".empty-state")`)) {
		t.Fatal("the empty feed's first-event panel stayed after the first event arrived")
	}
	t.Logf("event visible %v after the API answered", time.Since(acked).Round(time.Millisecond))

	pwned := get(b, chromedp.Evaluate[any](`window.pwned === undefined ? null : window.pwned`))
	unsafe := get(b, chromedp.Evaluate[bool](`!!document.querySelector('.ev-desc script, .ev-desc [onerror], .ev-desc a[href^="javascript"]')`))
	if pwned != nil || unsafe {
		t.Fatalf("Markdown rendered unsafely: pwned=%v unsafe element=%v", pwned, unsafe)
	}
	if strong := b.text("#ev-" + ev.ID + " .ev-desc strong"); strong != "Paid" {
		t.Fatalf("Markdown not rendered: %q", strong)
	}

	// Another event, then the tag filter narrows the feed.
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Refund","icon":"💸","tags":{"plan":"basic"}}`)
	b.mustUntil(`[...document.querySelectorAll(".ev-name")].some(a => a.textContent === "Refund")`)
	count := get(b, chromedp.Evaluate[int](`document.querySelectorAll('.events .event').length`))
	if count != 2 {
		t.Fatalf("%d events in the feed, want 2", count)
	}
	if day := b.text(".events .day"); day != "Today" {
		t.Fatalf("the feed's day heading: %q, want Today", day)
	}
	b.screenshot("feed")
	// A long description is clamped with "Show more", which opens it.
	long := "A long report\n\n```\n" + strings.Repeat("step ok\n", 40) + "```"
	body, _ = json.Marshal(map[string]any{"project": "my-saas", "channel": "payments", "event": "Nightly report",
		"description": long, "parser": "markdown", "icon": "📋"})
	post(t, m.URL()+"/v1/log", token, string(body))
	b.mustUntil(`document.querySelector(".show-more")`)
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".show-more").click()`))
	if open := get(b, chromedp.Evaluate[bool](`!document.querySelector(".ev-desc.clamped") && document.querySelector(".show-more").textContent === "Show less"`)); !open {
		t.Fatal("Show more did not open the description")
	}
	b.screenshot("feed-long")
	b.click(`[...document.querySelectorAll(".chip")].find(a => a.textContent === "plan: premium").click()`)
	count = get(b, chromedp.Evaluate[int](`document.querySelectorAll('.events .event').length`))
	if count != 1 || !strings.Contains(b.text(".events"), "New Subscription") {
		t.Fatalf("tag filter shows %d events: %s", count, b.text(".events"))
	}

	// The search box: a prefix finds the event, and a new match arrives live.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.submit("#q", "subscr*")
	count = get(b, chromedp.Evaluate[int](`document.querySelectorAll('.events .event').length`))
	if count != 1 || !strings.Contains(b.text(".events"), "New Subscription") {
		t.Fatalf("search subscr* shows %d events: %s", count, b.text(".events"))
	}
	b.mustUntil(`document.querySelector('.feed[data-live="on"]')`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Subscription renewed in Zürich"}`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Refund again"}`)
	b.mustUntil(`[...document.querySelectorAll(".ev-name")].some(a => a.textContent === "Subscription renewed in Zürich")`)
	if strings.Contains(b.text(".events"), "Refund again") {
		t.Fatalf("a live event that does not match the search is shown: %s", b.text(".events"))
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".search-help").open = true`))
	b.screenshot("search")
	b.submit("#q", "zurich since:7y")
	if msg := b.text(".error"); !strings.Contains(msg, "since must be an age like") {
		t.Fatalf("a bad search says %q", msg)
	}
	if v := get(b, chromedp.Evaluate[string](`document.querySelector("#q").value`)); v != "zurich since:7y" {
		t.Fatalf("the search box lost what was typed: %q", v)
	}

	// Scrolled down a long feed, a reader is told how many new events arrived above.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.mustUntil(`document.querySelector('.feed[data-live="on"]')`)
	for i := 0; i < 25; i++ {
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".events").insertAdjacentHTML("beforeend", document.querySelector(".event").outerHTML.replace(/id="ev-/, 'id="pad-'))`))
	}
	b.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.body.scrollHeight)`))
	b.mustUntil(`window.scrollY > 200`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"While you were reading"}`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"And another"}`)
	b.mustUntil(`!document.querySelector(".new-marker").hidden && document.querySelector(".new-marker").textContent.startsWith("2 new")`)
	b.do(chromedp.Click(chromedp.CSS(".new-marker")))
	b.mustUntil(`window.scrollY < 80 && document.querySelector(".new-marker").hidden`)

	// Published at once by many clients, the events of one group commit reach the page
	// in no particular order: every one appears, once, newest first.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.mustUntil(`document.querySelector('.feed[data-live="on"]')`)
	var wg sync.WaitGroup
	for i := 0; i < 15; i++ { // within the public token's burst of 20 per address
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if status, resp := post(t, m.URL()+"/v1/log", token, fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"burst %d"}`, i)); status != 200 {
				t.Errorf("burst %d: %d %s", i, status, resp)
			}
		}(i)
	}
	wg.Wait()
	b.mustUntil(`[...document.querySelectorAll(".ev-name")].filter(a => a.textContent.startsWith("burst ")).length === 15`)
	sorted := get(b, chromedp.Evaluate[bool](`(() => { const ids = [...document.querySelectorAll(".events .event")].map(e => e.dataset.id);
		return ids.every((id, i) => i === 0 || ids[i-1] > id) && new Set(ids).size === ids.length; })()`))
	if !sorted {
		t.Fatalf("live cards out of order or repeated: %s", b.text(".events"))
	}
}

// TestInsightsInChromium: cards appear and change live, in the viewer's locale, in the
// order they were made; dark mode; an owner deletes one.
func TestInsightsInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)

	// Insights: a card appears and changes live.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/insights"))
	b.mustUntil(`document.querySelector('.insights[data-live="on"]')`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Monthly Revenue","value":"1000.50","change":"update","prefix":"$","icon":"💰"}`)
	// Values in the viewer's locale (en-US here): thousands separators, the exact decimals.
	b.mustUntil(`document.querySelector(".grid").textContent.includes("1,000.50")`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Monthly Revenue","value":20,"change":"increment"}`)
	b.mustUntil(`document.querySelector(".grid").textContent.includes("1,020.50")`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Status","value":"Operational","change":"update","icon":"🟢"}`)
	b.mustUntil(`document.querySelector(".grid").textContent.includes("Operational")`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Accounts","value":1234567,"change":"update"}`)
	b.mustUntil(`document.querySelector(".grid").textContent.includes("1,234,567")`)
	count := get(b, chromedp.Evaluate[int](`document.querySelectorAll('.grid .card').length`))
	if count != 3 {
		t.Fatalf("%d insight cards, want 3", count)
	}
	// In the order they were created, live and after a reload alike.
	order := `[...document.querySelectorAll(".grid .card h2")].map(h => h.textContent).join(",")`
	live := get(b, chromedp.Evaluate[string](order))
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/insights"))
	if reloaded := get(b, chromedp.Evaluate[string](order)); live != "Monthly Revenue,Status,Accounts" || reloaded != live {
		t.Fatalf("insight order live %q, after a reload %q", live, reloaded)
	}
	b.screenshot("insights")
	// The same board in dark mode.
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	dark := get(b, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if dark != "rgb(11, 18, 32)" {
		t.Fatalf("dark mode background = %s", dark)
	}
	b.screenshot("insights-dark")
	chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})

	// An owner deletes an insight from the board (after confirming) and it is gone.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/insights"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".manage").open = true`))
	b.do(chromedp.SetValue(chromedp.CSS("#delete-title"), "Status"))
	b.screenshot("insights-delete")
	b.click(`document.querySelector('.manage form button').click()`)
	if n := get(b, chromedp.Evaluate[int](`document.querySelectorAll('.grid .card').length`)); n != 2 || strings.Contains(b.text(".grid"), "Operational") {
		t.Fatalf("after deleting Status: %d cards: %s", n, b.text(".grid"))
	}
}

// TestJourneysInChromium: users identified over the API, a user's and a group's journey
// live, and any tag's journey.
func TestJourneysInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"New Subscription","tags":{"plan":"premium"}}`)

	// Users: identified over the API, listed, and one user's journey by day.
	post(t, m.URL()+"/v1/identify", token, `{"project":"my-saas","user_id":"user-42","properties":{"name":"Ada Lovelace","plan":"premium","seats":3}}`)
	post(t, m.URL()+"/v1/group", token, `{"project":"my-saas","group_id":"analytical-engines","user_id":"user-42","properties":{"industry":"computing"}}`)
	post(t, m.URL()+"/v1/identify", token, `{"project":"my-saas","user_id":"user-7","properties":{"plan":"free"}}`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Upgraded to premium","icon":"⭐","user_id":"user-42","tags":{"plan":"premium"}}`)
	// A page viewed since: the journey folds it above the newest event.
	viewPages(t, m, "my-saas", tidings.PageView{UserID: "user-42", Path: "/pricing", Timestamp: time.Now()})
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/users"))
	if txt := b.text("table.people"); !strings.Contains(txt, "user-42") || !strings.Contains(txt, "plan: premium") {
		t.Fatalf("users page: %s", txt)
	}
	b.screenshot("users")
	// A user is listed by name, with the ID beside it.
	b.click(`[...document.querySelectorAll("table.people a.person")].find(a => a.querySelector(".person-id") && a.querySelector(".person-id").textContent === "user-42").click()`)
	if txt := b.text(".feed"); !strings.Contains(txt, "Upgraded to premium") || !strings.Contains(txt, "analytical-engines") {
		t.Fatalf("user page: %s", txt)
	}
	// The journey is live: the user's next event appears, another user's does not.
	b.mustUntil(`document.querySelector('.journey[data-live="on"]')`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Someone else paid","user_id":"user-7"}`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Invited a teammate","icon":"👋","user_id":"user-42"}`)
	b.mustUntil(`[...document.querySelectorAll(".ev-name")].some(a => a.textContent === "Invited a teammate")`)
	if strings.Contains(b.text(".journey"), "Someone else paid") {
		t.Fatalf("another user's event in the live journey: %s", b.text(".journey"))
	}
	// The live event goes above the fold of the pages viewed before it.
	if !get(b, chromedp.Evaluate[bool](`(() => {
		const ev = [...document.querySelectorAll(".ev-name")].find(a => a.textContent === "Invited a teammate").closest("article");
		const fold = document.querySelector(".views-fold");
		return fold !== null && fold.textContent.includes("Viewed 1 page") && (ev.compareDocumentPosition(fold) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
	})()`)) {
		t.Fatalf("the live event is not above the fold of page views: %s", b.text(".journey"))
	}
	b.screenshot("user-journey")
	b.click(`document.querySelector('a[href="/p/my-saas/groups/analytical-engines"]').click()`)
	if txt := b.text("main"); !strings.Contains(txt, "industry: computing") || !strings.Contains(txt, "user-42") || !strings.Contains(txt, "Invited a teammate") {
		t.Fatalf("group page: %s", txt)
	}
	// The group's journey is live too: a member's next event appears.
	b.mustUntil(`document.querySelector('.journey[data-live="on"]')`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Seat added","icon":"🪑","user_id":"user-42","tags":{"plan":"premium","seats":4}}`)
	b.mustUntil(`[...document.querySelectorAll(".ev-name")].some(a => a.textContent === "Seat added")`)
	b.screenshot("group")
	// Any tag's journey: from the feed filtered by the tag, and from a chip's ⇢.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas?tag=plan:premium"))
	b.click(`document.querySelector(".journey-link a").click()`)
	if txt := b.text(".journey"); !strings.Contains(txt, "Upgraded to premium") || !strings.Contains(txt, "New Subscription") {
		t.Fatalf("journey of plan: premium: %s", txt)
	}
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.click(`document.querySelector('.chip-journey[aria-label="Journey of seats: 4"]').click()`)
	b.mustUntil(`location.search === "?tag=seats%3A4"`)
	if txt := b.text(".journey"); !strings.Contains(txt, "Seat added") || strings.Contains(txt, "Upgraded to premium") {
		t.Fatalf("journey of seats: 4: %s", txt)
	}
	b.screenshot("tag-journey")
}

// TestSettingsInChromium: the empty charts board, a webhook, the notification
// settings and an invitation link.
func TestSettingsInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"For the charts"}`)

	// Charts are a picture.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/charts"))
	b.mustUntil(`document.querySelectorAll(".board-empty + .board-grid svg.plot rect.bar").length === 1`)
	b.screenshot("charts")
	b.checkLabels("charts")
	for _, path := range []string{"/settings/members", "/settings/password"} {
		b.do(chromedp.Navigate(m.URL() + path))
		b.checkLabels(path)
	}
	// A webhook, and the notification settings.
	b.do(chromedp.Navigate(m.URL() + "/settings/webhooks"))
	b.checkLabels("webhooks")
	b.submit("#wh-name", "Deploys to Slack", "#wh-url", "https://hooks.slack.com/services/T0/B0/XYZ")
	b.mustUntil(`document.querySelector(".webhook") && document.querySelector(".webhook").textContent.includes("Deploys to Slack")`)
	b.screenshot("settings-webhooks")
	b.do(chromedp.Navigate(m.URL() + "/settings/notifications"))
	b.checkLabels("notifications")
	b.mustUntil(`document.querySelector("#time-zone").value !== ""`) // the browser's own zone by default
	b.screenshot("settings-notifications")

	// An invitation link, listed as pending with a way to revoke it.
	b.do(chromedp.Navigate(m.URL() + "/settings/members"))
	b.click(`document.querySelector('form[action="/settings/members/invite"] button').click()`)
	b.settle(`document.querySelector('form[action^="/settings/members/invites/"]') !== null`)
	// The expiry is formatted by the page in the viewer's time zone (the server's own
	// text is "2026-11-30 07:45:12 UTC"), like every other time.
	b.mustUntil(`(t => t && !/^\d{4}-/.test(t.textContent))(document.querySelector("time[data-exact]"))`)
	b.screenshot("settings-members")
}

// TestEveryPageInChromium: every page, with something on it, has readable contrast in
// light and dark, labelled fields and no violation axe-core finds (WCAG 2.1 AA and its
// best practices), and no sideways scroll at phone width, down to 320 px.
func TestEveryPageInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	axe := axeSource(t)
	var eventID string
	for _, body := range []string{
		`{"project":"my-saas","channel":"payments","event":"New Subscription","description":"A new **premium** subscription","parser":"markdown","icon":"💰","tags":{"plan":"premium","seats":3},"user_id":"user-42"}`,
		`{"project":"my-saas","channel":"payments","event":"Refund","icon":"💸","tags":{"plan":"basic"}}`,
		`{"project":"my-saas","channel":"payments","event":"deploy failed","description":"panic: boom\n    at main.go:12"}`,
		`{"project":"my-saas","channel":"payments","event":"Nightly export to the analytics warehouse finished with warnings for three tables","icon":"📦","description":"TypeError: Cannot read properties of undefined (reading 'customerSubscriptionIdentifier')\n    at exportCustomerSubscriptions (/srv/app/jobs/exportCustomerSubscriptionsToWarehouse.js:118:42)\n    at async Promise.all (index 3)","tags":{"table":"subscriptions"}}`,
	} {
		status, resp := post(t, m.URL()+"/v1/log", token, body)
		if status != 200 {
			t.Fatalf("publish: %d %s", status, resp)
		}
		var ev struct{ ID string }
		json.Unmarshal([]byte(resp), &ev)
		eventID = ev.ID
	}
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Monthly Revenue","value":"1000.50","change":"update","prefix":"$","icon":"💰"}`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Monthly Revenue","value":"1200","change":"update","prefix":"$","icon":"💰"}`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Active subscriptions on the yearly premium plan in Europe","value":42,"change":"update","icon":"🌍"}`)
	post(t, m.URL()+"/v1/insight", token, `{"project":"my-saas","title":"Status","value":"all good","change":"update","icon":"✅"}`)
	post(t, m.URL()+"/v1/identify", token, `{"project":"my-saas","user_id":"user-42","properties":{"name":"Ada Lovelace","plan":"premium"}}`)
	post(t, m.URL()+"/v1/group", token, `{"project":"my-saas","group_id":"analytical-engines","user_id":"user-42"}`)
	addPageViews(t, m)
	addRecipients(t, m)

	// Every page: readable contrast in light and dark; at phone width, no sideways scroll.
	pages := []string{"/", "/p/my-saas", "/p/my-saas?q=subscr*", "/p/my-saas/events/" + eventID, "/p/my-saas/journey?tag=plan%3Apremium", "/p/my-saas/insights", "/p/my-saas/charts", "/p/my-saas/charts/new?q=plan%3Apremium&split=tag%3Aplan&display=stacked",
		"/p/my-saas/funnels/new?step=plan%3Apremium&step=event%3ARefund", "/p/my-saas/insights/history?title=Monthly+Revenue", "/p/my-saas/users", "/p/my-saas/groups", "/p/my-saas/channels",
		"/p/my-saas/users/user-42", "/settings/projects", "/settings/projects/my-saas/notify", "/settings/api", "/settings/webhooks", "/settings/members",
		"/settings/notifications", "/settings/devices", "/settings/password", "/settings/hooks",
		"/settings/projects/my-saas", "/settings/projects/my-saas/delete", "/settings/projects/my-saas/channels/payments/delete", "/p/nope", "/p/my-saas/c/payments", "/p/my-saas/pages", "/p/my-saas/pages?range=12m", "/p/blog/pages"}
	for _, dark := range []bool{false, true} {
		scheme := "light"
		if dark {
			scheme = "dark"
		}
		b.colorScheme(scheme)
		for _, path := range pages {
			b.do(chromedp.Navigate(m.URL() + path))
			b.assess(path, scheme, axe)
			if !dark {
				b.checkLabels(path)
				b.fits(path, 1280)
			}
			b.screenshot("page" + shotName(path) + "-" + scheme)
		}
	}
	// On a phone, light and dark: no sideways scroll, nothing too small to tap; and at
	// 320 px, the narrowest phones.
	for _, size := range []struct {
		width  int64
		scheme string
	}{{390, "light"}, {390, "dark"}, {320, "light"}} {
		b.colorScheme(size.scheme)
		b.do(chromedp.EmulateViewport(size.width, 844))
		for _, path := range pages {
			b.do(chromedp.Navigate(m.URL() + path))
			b.fits(path, size.width)
			if size.width == 390 {
				name := "page" + shotName(path) + "-phone"
				if size.scheme == "dark" {
					name += "-dark"
				}
				b.screenshot(name)
			}
		}
	}
	b.colorScheme("light")
	b.do(chromedp.EmulateViewport(390, 844))
	// A profile's journey with its first fold of page views open.
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		b.do(chromedp.Navigate(m.URL() + "/p/my-saas/users/user-42"))
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".views-fold").open = true`))
		if txt := b.text(".views-fold"); !strings.Contains(txt, "/pricing") {
			t.Errorf("the profile's fold of page views: %s", txt)
		}
		b.screenshot("user-profile-open-phone-" + scheme)
	}
	b.colorScheme("light")
	b.do(chromedp.Navigate(m.URL() + "/settings/api"))
	b.screenshot("settings-api-phone")
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/insights"))
	b.screenshot("insights-phone")
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.mustUntil(`document.querySelector(".event")`)
	b.screenshot("feed-phone")

	// The webhook form with Pushover picked: its own fields shown, Telegram's hidden;
	// light, dark and phone.
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"", 1280, 900}, {"-phone", 390, 844}} {
		b.do(chromedp.EmulateViewport(size.width, size.height))
		for _, scheme := range []string{"light", "dark"} {
			b.colorScheme(scheme)
			b.do(chromedp.Navigate(m.URL() + "/settings/webhooks"))
			b.mustUntil(`document.querySelector('.format-extra[data-format="telegram"]').hidden`)
			b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("details.create").open = true`))
			b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("input[name=format][value=pushover]").click()`))
			b.mustUntil(`!document.querySelector('.format-extra[data-format="pushover"]').hidden && document.querySelector('.format-extra[data-format="telegram"]').hidden`)
			for _, v := range b.axe(axe) {
				t.Errorf("webhook form with pushover (%s%s): axe-core: %s", scheme, size.name, v)
			}
			if bad := get(b, chromedp.Evaluate[[]string](contrastCheck)); len(bad) > 0 {
				t.Errorf("webhook form with pushover (%s%s): text below 4.5:1 contrast: %v", scheme, size.name, bad)
			}
			b.screenshot("settings-webhooks-pushover-" + scheme + size.name)
		}
	}
	b.colorScheme("light")
}

// addRecipients gives my-saas chosen members (its owner) and a second channel that
// follows the project while #payments notifies nobody: the recipients settings have
// each kind of setting to show.
func addRecipients(t *testing.T, m *Main) {
	t.Helper()
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.store.CreateChannel(ctx, acme.ID, "my-saas", "deploys"); err != nil {
		t.Fatal(err)
	}
	if err := m.store.SetRecipients(ctx, acme.ID, "my-saas", "", &tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"ada@example.com"}}); err != nil {
		t.Fatal(err)
	}
	if err := m.store.SetRecipients(ctx, acme.ID, "my-saas", "payments", &tidings.Recipients{Mode: tidings.NotifyNobody}); err != nil {
		t.Fatal(err)
	}
	// A Telegram webhook: the list shows its URL without the bot token.
	if err := m.store.CreateWebhook(ctx, acme.ID, &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Format: tidings.FormatTelegram,
		Events: tidings.WebhookNotify, Name: "Ops in Telegram", ChatID: "-1001234567890",
		URL: "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage"}); err != nil {
		t.Fatal(err)
	}
}

// addPageViews gives user-42 of my-saas page views (over the last weeks, from a search
// engine and from inside the site) between their events, and makes a project "blog"
// without any: the profile, the Pages view and its empty state have something to show.
func addPageViews(t *testing.T, m *Main) {
	t.Helper()
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var views []tidings.PageView
	paths := []string{"/", "/pricing", "/docs/getting-started", "/blog/launch-week", "/signup?utm_source=newsletter"}
	for d := range 24 {
		for k := range d%4 + 1 {
			v := tidings.PageView{UserID: "user-42", Path: paths[(d+k)%len(paths)], Title: "Tidings", Timestamp: now.AddDate(0, 0, -d).Add(-time.Duration(10+k) * time.Minute)}
			if k == 0 {
				v.Referrer = []string{"https://www.google.com/", "https://news.ycombinator.com/item?id=42", ""}[d%3]
			} else {
				v.Referrer = "https://tidings.example/"
			}
			if d > 0 && d%5 == 0 {
				v.UserID = "user-7"
			}
			views = append(views, v)
		}
	}
	viewPages(t, m, "my-saas", views...)
	// Events of user-42 between the page views: the journey folds the views between them.
	for _, ev := range []tidings.NewEvent{{Event: "Signed up", Icon: "🎉", Timestamp: now.AddDate(0, 0, -20)}, {Event: "Invited a teammate", Icon: "👋", Timestamp: now.AddDate(0, 0, -6)}} {
		ev.Project, ev.Channel, ev.UserID, ev.Parser = "my-saas", "payments", "user-42", tidings.ParserText
		if _, err := m.store.PublishEvent(ctx, acme.ID, &ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.store.CreateProject(ctx, acme.ID, "blog"); err != nil {
		t.Fatal(err)
	}
}

// viewPages stores page views of acme's project as POST /v1/page would: checked, in
// batches, on the site tidings.example.
func viewPages(t *testing.T, m *Main, project string, views ...tidings.PageView) {
	t.Helper()
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for len(views) > 0 {
		n := min(len(views), tidings.MaxPageViewsPerCall)
		c := &tidings.NewPageViews{Project: project, Host: "tidings.example", Views: views[:n]}
		var p tidings.Problems
		c.Check(&p, time.Now(), true)
		if err := p.Err(); err != nil {
			t.Fatal(err)
		}
		if err := m.store.AddPageViews(ctx, acme.ID, c); err != nil {
			t.Fatal(err)
		}
		views = views[n:]
	}
}

// shotName turns a path into part of a screenshot's name: /settings/api → -settings-api;
// an event's page is -event, whatever its ID (the names stay the same from run to run).
func shotName(path string) string {
	if strings.Contains(path, "/events/") {
		return "-event"
	}
	return shotUnsafe.ReplaceAllString(path, "-")
}

// shotUnsafe is what a file name had better not hold: /p/my-saas?q=subscr* → -p-my-saas-q-subscr-.
var shotUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// colorScheme makes the page see prefers-color-scheme: scheme.
func (b *browser) colorScheme(scheme string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		b.t.Fatal(err)
	}
}

// contrastCheck lists the visible text whose colour against its background is below
// WCAG's 4.5:1 (3:1 for large text): each as "tag.class 'text' ratio".
const contrastCheck = `(() => {
  const parse = (c) => {
    let m = c.match(/^rgba?\(([^)]+)\)/);
    if (m) { const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; }
    m = c.match(/^color\(srgb ([^)]+)\)/);
    if (m) { const p = m[1].split(/[ \/]+/).filter(Boolean).map(Number); return {r: p[0] * 255, g: p[1] * 255, b: p[2] * 255, a: p.length > 3 ? p[3] : 1}; }
    return null;
  };
  const over = (top, under) => ({r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1});
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = {r: 255, g: 255, b: 255, a: 1};
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const bad = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!["#text"].some(() => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || el.closest("[hidden], .sr, details:not([open]) > :not(summary), button:disabled, svg")) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === "hidden" || cs.display === "none" || +cs.opacity === 0) continue;
    const bg = background(el);
    const fg = over(parse(cs.color) || {r: 0, g: 0, b: 0, a: 1}, bg);
    const l1 = lum(fg), l2 = lum(bg), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize), large = size >= 24 || (+cs.fontWeight >= 700 && size >= 18.66);
    if (ratio < (large ? 3 : 4.5)) bad.push(el.tagName.toLowerCase() + "." + [...el.classList].join(".") + " '" + el.textContent.trim().slice(0, 30) + "' " + ratio.toFixed(2));
  }
  return bad;
})()`

// axeVersion is the axe-core the pages are judged by.
const axeVersion = "axe-core@4.14.1"

var axeOnce struct {
	sync.Once
	src string
	err error
}

// axeSource installs axe-core with npm once per test binary and returns its script.
func axeSource(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Need(t, "npm is needed to install axe-core for the accessibility check: apt-get install npm")
	}
	axeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tidings-axe-")
		if err != nil {
			axeOnce.err = err
			return
		}
		defer os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", axeVersion)
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			axeOnce.err = fmt.Errorf("%v\n%s", err, out)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		axeOnce.src, axeOnce.err = string(b), err
	})
	if axeOnce.err != nil {
		testenv.Need(t, "npm install of axe-core failed (no registry?): %v", axeOnce.err)
	}
	return axeOnce.src
}

// axe runs axe-core on the page (injected through DevTools, which the page's CSP does
// not govern) and returns its violations, one line each with the elements at fault.
func (b *browser) axe(src string) []string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
		b.t.Fatalf("injecting axe-core: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"],
		runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}}).then(r =>
		r.violations.map(v => v.id + " (" + v.impact + "): " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("running axe-core: %v", err)
	}
	return out
}

// TestIntentInChromium: urgent and high events carry their mark in words, an
// acknowledged one says who and when, a card's buttons and Acknowledge work without a
// script (forms), the versions of a key fold under the latest, and a new version that
// arrives live folds the card before it; judged by axe-core and the contrast check in
// light and dark, and kept as screenshots (light, dark, phone).
func TestIntentInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	axe := axeSource(t)
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	publish := func(body string) string {
		t.Helper()
		status, resp := post(t, m.URL()+"/v1/log", token, body)
		if status != 200 {
			t.Fatalf("publish: %d %s", status, resp)
		}
		var ev struct{ ID string }
		json.Unmarshal([]byte(resp), &ev)
		return ev.ID
	}
	publish(`{"project":"my-saas","channel":"payments","event":"Deploy 1432 started","icon":"🚀","key":"deploy-1432"}`)
	publish(`{"project":"my-saas","channel":"payments","event":"Deploy 1432: canary errors","icon":"🚀","key":"deploy-1432","priority":"high"}`)
	thread := publish(`{"project":"my-saas","channel":"payments","event":"Deploy 1432 live","icon":"🚀","key":"deploy-1432","description":"All regions on 1432."}`)
	// Urgent events need a full token (a public one may not wake the team): from the store.
	publishUrgent := func(ne tidings.NewEvent) string {
		t.Helper()
		ne.Project, ne.Channel, ne.Parser, ne.Priority = "my-saas", "payments", tidings.ParserText, "urgent"
		ev, err := m.store.PublishEvent(ctx, acme.ID, &ne)
		if err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	acked := publishUrgent(tidings.NewEvent{Event: "Payment provider timeouts", Icon: "💳", Description: "30% of checkouts time out."})
	if _, _, err := m.store.AcknowledgeEvent(ctx, acme.ID, acked, "grace@example.com", time.Now()); err != nil {
		t.Fatal(err)
	}
	publish(`{"project":"my-saas","channel":"payments","event":"Disk 85% full","icon":"💽","priority":"high"}`)
	urgent := publishUrgent(tidings.NewEvent{Event: "Database down", Icon: "🔥", Notify: true, Description: "Primary unreachable since 14:02.",
		URL:     "https://status.example.com/db",
		Actions: []tidings.Action{{Label: "Open runbook", URL: "https://runbook.example.com/db"}, {Label: "Fail over", ID: "failover"}}})

	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	card := "#ev-" + urgent
	if txt := b.text(card + " header"); !strings.Contains(strings.ToLower(txt), "urgent") {
		t.Fatalf("the urgent card's header: %q", txt)
	}
	if href := get(b, chromedp.Evaluate[string](`document.querySelector("`+card+` .ev-name").getAttribute("href")`)); href != "https://status.example.com/db" {
		t.Fatalf("the title opens %q", href)
	}
	if !strings.Contains(b.text("#ev-"+acked), "Acknowledged by grace@example.com") {
		t.Fatalf("the acknowledged card: %s", b.text("#ev-"+acked))
	}
	if n := get(b, chromedp.Evaluate[int](`document.querySelectorAll("article.event[data-thread]").length`)); n != 1 {
		t.Fatalf("%d cards of the key thread, want 1", n)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#ev-` + thread + ` details.thread").open = true`))
	if txt := b.text("#ev-" + thread + " .thread"); !strings.Contains(txt, "Updated 2 times") || !strings.Contains(txt, "canary errors") {
		t.Fatalf("the folded thread: %q", txt)
	}
	pages := []struct{ path, name string }{
		{"/p/my-saas", "intent-feed"}, {"/p/my-saas/events/" + urgent, "intent-urgent-event"}, {"/p/my-saas/events/" + acked, "intent-acked-event"},
		{"/p/my-saas/events/" + thread, "intent-thread-event"}, {"/settings/notifications", "intent-settings-notifications"}, {"/settings/projects", "intent-settings-projects"},
	}
	open := `document.querySelectorAll("details.thread").forEach(d => d.open = true)`
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		for _, p := range pages {
			b.do(chromedp.Navigate(m.URL()+p.path), chromedp.Evaluate[chromedp.Void](open))
			b.assess(p.path, scheme, axe)
			if scheme == "light" {
				b.checkLabels(p.path)
			}
			b.screenshot(p.name + "-" + scheme)
		}
	}
	b.colorScheme("light")
	b.do(chromedp.EmulateViewport(390, 844))
	for _, p := range pages[:3] {
		b.do(chromedp.Navigate(m.URL()+p.path), chromedp.Evaluate[chromedp.Void](open))
		if w := get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
			t.Errorf("%s scrolls sideways by %d px at 390 px", p.path, w)
		}
		b.screenshot(p.name + "-phone")
	}
	b.do(chromedp.EmulateViewport(1280, 900))

	// The card's buttons are forms: pressing one returns to the feed, at the card.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.click(`[...document.querySelectorAll("` + card + ` .ev-actions button")].find(x => x.textContent === "Fail over").click()`)
	b.mustUntil(`document.querySelector(".notice-ok") && document.querySelector(".notice-ok").textContent.includes("Fail over")`)
	b.click(`document.querySelector("` + card + ` .ack-button").click()`)
	b.mustUntil(`document.querySelector("` + card + ` .ev-ack") && document.querySelector("` + card + ` .ev-ack").textContent.includes("Acknowledged by ada@example.com")`)
	if get(b, chromedp.Evaluate[bool](`!!document.querySelector("`+card+` .ack-button")`)) {
		t.Fatal("the acknowledged card still offers Acknowledge")
	}
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/events/" + urgent))
	if txt := b.text(".presses"); !strings.Contains(txt, "Fail over by ada@example.com · via dashboard") {
		t.Fatalf("the event page's presses: %q", txt)
	}
	b.screenshot("intent-pressed-event-light")

	// A new version arrives live: it takes the thread's card, the older folds under it.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.mustUntil(`document.querySelector('.feed[data-live="on"]')`)
	next := publish(`{"project":"my-saas","channel":"payments","event":"Deploy 1432 rolled back","icon":"↩️","key":"deploy-1432","priority":"high"}`)
	b.mustUntil(`document.getElementById("ev-` + next + `") && !document.getElementById("ev-` + thread + `")`)
	if n := get(b, chromedp.Evaluate[int](`document.querySelectorAll("article.event[data-thread]").length`)); n != 1 {
		t.Fatalf("%d cards of the key thread after a live version, want 1", n)
	}
	b.do(chromedp.Evaluate[chromedp.Void](open))
	txt := b.text("#ev-" + next + " .thread")
	if !strings.Contains(txt, "Updated 3 times") || !strings.Contains(txt, "Deploy 1432 live") || !strings.Contains(txt, "canary errors") {
		t.Fatalf("the live-folded thread: %q", txt)
	}
	href := get(b, chromedp.Evaluate[string](`document.querySelector("#ev-`+next+` .thread-list a").getAttribute("href")`))
	if href != "/p/my-saas/events/"+thread {
		t.Fatalf("the folded card links to %q", href)
	}
	b.mustUntil(`document.getAnimations().length === 0`) // the new card has slid in
	b.screenshot("intent-feed-live-fold-light")
}
