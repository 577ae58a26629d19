package main

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tidings-dev/tidings"
	scripts "github.com/tidings-dev/tidings/browser"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/testenv"
)

// The browser scripts are tested as other websites use them: a Tidings server, and a
// website on another origin (http://localhost:port, while Tidings is at
// http://127.0.0.1:port) whose pages have a strict Content-Security-Policy that allows
// scripts and connections to the Tidings origin only (and the page's own inline
// scripts by nonce). Every test runs on both stores: what the scripts send is stored.

// lsjsSite is a Tidings server with project my-saas (channels payments and feedback), a
// public token for web pages, and a website on another origin that serves pages.
type lsjsSite struct {
	t       *testing.T
	m       *Main
	loc     string
	token   string // public, for every project
	full    string // a full token, made when first needed
	tidings string // the server's origin
	origin  string // the website's
	nonce   string
	connect string // another origin the pages may connect to
	mu      sync.Mutex
	pages   map[string]string
}

func newLsjsSite(t *testing.T, projects ...string) *lsjsSite {
	t.Helper()
	t.Parallel()
	loc := testbackend.Location(t)
	cmds := [][]string{{"account", "create", "acme"}}
	for _, p := range append([]string{"my-saas"}, projects...) {
		cmds = append(cmds, []string{"project", "create", p}, []string{"channel", "create", p, "payments"},
			[]string{"channel", "create", p, "feedback"})
	}
	for _, args := range cmds {
		if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, token, _ := runCLI(t, loc, "", "token", "create", "--access", "public")
	nonce := make([]byte, 12)
	rand.Read(nonce)
	s := &lsjsSite{t: t, loc: loc, token: strings.TrimSpace(token), nonce: hex.EncodeToString(nonce), pages: map[string]string{}}
	s.m = startServer(t, loc, nil)
	s.tidings = s.m.URL()
	web := httptest.NewServer(s)
	t.Cleanup(web.Close)
	// Another host than Tidings' 127.0.0.1: another origin, and another site.
	s.origin = strings.Replace(web.URL, "127.0.0.1", "localhost", 1)
	return s
}

// csp allows scripts and connections to Tidings only, and the page's own inline
// scripts and styles by their nonce.
func (s *lsjsSite) csp() string {
	return fmt.Sprintf("default-src 'none'; script-src 'nonce-%s' %s; connect-src %s; style-src 'nonce-%s'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'", s.nonce, s.tidings, s.tidings+" "+s.connect, s.nonce)
}

func (s *lsjsSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	html, ok := s.pages[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Security-Policy", s.csp())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, html)
}

// page serves html at paths; {{nonce}}, {{tidings}} and {{token}} are replaced.
func (s *lsjsSite) page(html string, paths ...string) {
	html = strings.NewReplacer("{{nonce}}", s.nonce, "{{tidings}}", s.tidings, "{{token}}", s.token).Replace(html)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range paths {
		s.pages[p] = html
	}
}

// snippet is the README's snippet as a page includes it: its script tags carry the
// page's nonce (the CSP allows no other inline script), and it points at this server.
func (s *lsjsSite) snippet() string {
	code := docSnippet(s.t, "README.md", "<!-- ls-snippet -->", "html")
	if !strings.Contains(code, `src="https://tidings.example.com/ls.js"`) || !strings.Contains(code, `"PUBLIC_TOKEN"`) {
		s.t.Fatalf("the README's snippet no longer has the address and token the test replaces:\n%s", code)
	}
	return strings.NewReplacer("<script", `<script nonce="{{nonce}}"`, "https://tidings.example.com", s.tidings,
		"PUBLIC_TOKEN", s.token).Replace(code)
}

// store opens the server's store beside it, to read back what was stored.
func (s *lsjsSite) store() (tidings.Store, int64) {
	st := testbackend.Open(s.t, s.loc)
	a, err := st.FindAccount(context.Background(), "acme")
	if err != nil {
		s.t.Fatal(err)
	}
	return st, a.ID
}

// eventually retries check until it returns nil, for up to a minute.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = check(); err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

// events returns the project's events, newest first.
func events(st tidings.Store, account int64, project string) []*tidings.Event {
	page, err := st.ListEvents(context.Background(), account, tidings.EventQuery{Project: project, Limit: 50})
	if err != nil {
		return nil
	}
	return page.Events
}

func findEvent(evs []*tidings.Event, name string) *tidings.Event {
	for _, e := range evs {
		if e.Event == name {
			return e
		}
	}
	return nil
}

// apiGet reads a read endpoint with a full token and returns its status (and body
// when not 200).
func (s *lsjsSite) apiGet(path string, into any) (int, string) {
	s.t.Helper()
	s.mu.Lock()
	if s.full == "" {
		_, full, _ := runCLI(s.t, s.loc, "", "token", "create", "--access", "full")
		s.full = strings.TrimSpace(full)
	}
	s.mu.Unlock()
	req, _ := http.NewRequest("GET", s.tidings+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.full)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return res.StatusCode, string(body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		s.t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return 200, ""
}

// pageViewsJSON is GET /v1/pages' answer.
type pageViewsJSON struct {
	PageViews []struct {
		UserID   string `json:"user_id"`
		Path     string `json:"path"`
		Title    string `json:"title"`
		Referrer string `json:"referrer"`
	} `json:"page_views"`
}

// viewsOf waits until the user has want page views (through GET /v1/pages) and returns
// them, newest first, as "path|title|referrer".
func (s *lsjsSite) viewsOf(user string, want int) []string {
	s.t.Helper()
	var got []string
	eventually(s.t, "page views of "+user, func() error {
		var v pageViewsJSON
		if code, body := s.apiGet("/v1/pages?project=my-saas&user_id="+user, &v); code != 200 {
			return fmt.Errorf("GET /v1/pages: %d %.200s", code, body)
		}
		got = nil
		for _, p := range v.PageViews {
			got = append(got, p.Path+"|"+p.Title+"|"+strings.TrimPrefix(p.Referrer, s.origin))
		}
		if len(got) != want {
			return fmt.Errorf("%d page views, want %d: %q", len(got), want, got)
		}
		return nil
	})
	return got
}

// noCookies: neither origin has set a cookie in the browser.
func noCookies(t *testing.T, b *browser) {
	t.Helper()
	res, err := chromedp.Call(b.ctx, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cookies) > 0 {
		t.Errorf("%d cookies set, want none: first %s=%s on %s", len(res.Cookies), res.Cookies[0].Name, res.Cookies[0].Value, res.Cookies[0].Domain)
	}
}

// leave navigates away, which sends the page views still queued (pagehide).
func leave(b *browser) { b.do(chromedp.Navigate("about:blank")) }

// TestLsJSSnippet: the README's snippet on a page of another origin with a strict CSP:
// setConfig, setUserId, track, identify, a data-event click with tags, a single-page
// app's pushState and back, another page and back (the back/forward cache), and page
// views and a session stored; no cookies.
func TestLsJSSnippet(t *testing.T) {
	s := newLsjsSite(t)
	head := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>` + s.snippet() + `
<script nonce="{{nonce}}">
  window.ls("setDebug", true);
  window.ls("setUserId", "user-42");
  window.ls("track", { channel: "payments", event: "Snippet Purchase", icon: "💰", tags: { plan: "pro" }, description: "Pro plan" });
  window.ls("identify", { properties: { name: "Ada Lovelace", plan: "pro", seats: 3 } });
</script></head>`
	s.page(fmt.Sprintf(head, "Home")+`<body>
<button id="upgrade" data-event="Upgraded Plan" data-channel="payments" data-icon=":moneybag:" data-notify="true"
  data-tag-plan="Pro" data-tag-Billing-Period="monthly" data-tag-price="9.99" data-tag-trial="false"><span>Upgrade to Pro</span></button>
<a id="away" href="/other">Another page</a></body></html>`, "/")
	// Another page of the site: the snippet alone (the user id is remembered).
	s.page(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Other</title>`+s.snippet()+
		`</head><body><p>Another page</p></body></html>`, "/other")

	b := newBrowser(t, s.origin)
	b.do(chromedp.Navigate(s.origin + "/"))
	b.mustUntil(`window.lsi === true && localStorage.getItem("tidings:user_id") === "user-42"`)
	b.do(chromedp.Click(chromedp.CSS("#upgrade span")))
	// A single-page app's navigation: its query string (an email) is not sent, utm_* is.
	b.do(chromedp.Evaluate[chromedp.Void](`history.pushState({}, "", "/pricing?email=ada%40example.com&utm_source=news"); document.title = "Pricing"`))
	// Back, as an app does it: its title set when it hears of the change.
	b.do(chromedp.Evaluate[chromedp.Void](`addEventListener("popstate", () => { document.title = "Home" }, { once: true }); history.back()`))
	b.mustUntil(`location.pathname === "/" && document.title === "Home"`)
	b.do(chromedp.Evaluate[chromedp.Void](`window.kept = true`))
	// Another page (its view has this one as referrer) and back: restored from the
	// back/forward cache or loaded again, it is a view either way.
	get(b, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS("#away"))))
	b.mustUntil(`location.pathname === "/other" && window.lsi === true`)
	// Back: a page restored from the back/forward cache fires no load, and a check
	// waiting in the page left would wait frozen with it: ask again and again.
	b.do(chromedp.Evaluate[chromedp.Void](`history.back()`))
	b.settle(`location.pathname === "/" && window.lsi === true`)
	restored := get(b, chromedp.Evaluate[bool](`window.kept === true`))
	t.Logf("back to / from the back/forward cache: %v", restored)
	if cookies := get(b, chromedp.Evaluate[string](`document.cookie`)); cookies != "" {
		t.Errorf("document.cookie = %q", cookies)
	}
	leave(b)
	noCookies(t, b)

	st, account := s.store()
	eventually(t, "the snippet's events", func() error {
		evs := events(st, account, "my-saas")
		buy, click := findEvent(evs, "Snippet Purchase"), findEvent(evs, "Upgraded Plan")
		if buy == nil || click == nil {
			return fmt.Errorf("%d events, missing one", len(evs))
		}
		if buy.UserID != "user-42" || buy.Icon != "💰" || buy.Description != "Pro plan" || string(buy.Tags.JSON()) != `{"plan":"pro"}` {
			return fmt.Errorf("track: %+v %s", buy, buy.Tags.JSON())
		}
		if click.UserID != "user-42" || click.Icon != "💰" || !click.Notify || click.Channel != "payments" ||
			string(click.Tags.JSON()) != `{"plan":"Pro","billing-period":"monthly","price":9.99,"trial":false}` {
			return fmt.Errorf("click: %+v %s", click, click.Tags.JSON())
		}
		return nil
	})
	eventually(t, "identify", func() error {
		u, err := st.FindPerson(context.Background(), account, "my-saas", "user-42")
		if err != nil {
			return err
		}
		if len(u.Properties) != 3 || u.Properties[0].Value != "Ada Lovelace" {
			return fmt.Errorf("properties %+v", u.Properties)
		}
		return nil
	})

	views := s.viewsOf("user-42", 5)
	slices.Sort(views)
	want := []string{"/other|Other|/", "/pricing?utm_source=news|Pricing|/", "/|Home|", "/|Home|/", "/|Home|/pricing?utm_source=news"}
	if !slices.Equal(views, want) {
		t.Errorf("page views (sorted):\n got %q\nwant %q", views, want)
	}
	eventually(t, "user-42's counts", func() error {
		u, err := st.FindPerson(context.Background(), account, "my-saas", "user-42")
		if err != nil {
			return err
		}
		if u.PageViews != 5 || u.Sessions != 1 || u.Events != 2 {
			return fmt.Errorf("page views %d, sessions %d, events %d; want 5, 1, 2", u.PageViews, u.Sessions, u.Events)
		}
		return nil
	})
	var user struct {
		Sessions  int64 `json:"sessions"`
		PageViews int64 `json:"page_views"`
	}
	if code, body := s.apiGet("/v1/users/user-42?project=my-saas", &user); code != 200 || user.Sessions != 1 || user.PageViews != 5 {
		t.Errorf("GET /v1/users/user-42: %d %+v %.200s", code, user, body)
	}

	// clearUserId forgets the user: no page view after it.
	b.do(chromedp.Navigate(s.origin + "/other"))
	b.mustUntil(`window.lsi === true`)
	b.do(chromedp.Evaluate[chromedp.Void](`window.ls("clearUserId"); history.pushState({}, "", "/after-clear")`))
	if id := get(b, chromedp.Evaluate[string](`String(localStorage.getItem("tidings:user_id"))`)); id != "null" {
		t.Errorf("after clearUserId, localStorage holds %q", id)
	}
	leave(b)
	// The /other view of this visit was sent before clearUserId; /after-clear never is.
	if views := s.viewsOf("user-42", 6); slices.ContainsFunc(views, func(v string) bool { return strings.HasPrefix(v, "/after-clear") }) {
		t.Errorf("a page view after clearUserId: %q", views)
	}
}

// TestLsJSGPC: a visitor whose browser signals Global Privacy Control sends nothing (the
// project does not ignore GPC, the default): no event, no identify, no page view.
// A project that ignores GPC records them.
func TestLsJSGPC(t *testing.T) {
	s := newLsjsSite(t, "gpc-ok")
	st, account := s.store()
	if err := st.SetIgnoreGPC(context.Background(), account, "gpc-ok", true); err != nil {
		t.Fatalf("SetIgnoreGPC: %v", err)
	}
	html := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>GPC</title>` + consoleLog + `
<script async id="logsnag-script" src="{{tidings}}/ls.js"></script>
<script nonce="{{nonce}}">
  window.lsq = window.lsq || [];
  window.ls = window.ls || ((...args) => window.lsq.push(args));
  window.ls("setDebug", true);
  window.ls("setConfig", "{{token}}", "%s");
  window.ls("setUserId", "%s");
  window.ls("track", { channel: "payments", event: "%s" });
  window.ls("identify", { properties: { name: "Private" } });
</script></head><body><button id="b" data-event="GPC Click" data-channel="payments">Click</button></body></html>`
	s.page(fmt.Sprintf(html, "my-saas", "user-gpc", "GPC Event"), "/")
	s.page(fmt.Sprintf(html, "gpc-ok", "user-ok", "Allowed Event"), "/ok")
	s.page(fmt.Sprintf(html, "my-saas", "user-marker", "Marker"), "/marker")

	b := newBrowser(t, s.origin)
	gpc, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `Object.defineProperty(Navigator.prototype, "globalPrivacyControl", { get: () => true, configurable: true })`})
	if err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(s.origin + "/"))
	b.mustUntil(`navigator.globalPrivacyControl === true && window.log.some(l => l.includes("Global Privacy Control: sending nothing"))`)
	b.do(chromedp.Click(chromedp.CSS("#b")), chromedp.Evaluate[chromedp.Void](`history.pushState({}, "", "/spa")`))
	leave(b)

	// The project that ignores GPC: the same page is recorded.
	b.do(chromedp.Navigate(s.origin + "/ok"))
	b.mustUntil(`window.log.some(l => l.includes("Global Privacy Control: the project ignores it"))`)
	b.do(chromedp.Click(chromedp.CSS("#b")))
	leave(b)

	// Without GPC, a marker: once it is stored, whatever the GPC page sent would be too.
	if _, err := chromedp.Call(b.ctx, page.RemoveScriptToEvaluateOnNewDocument,
		page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: gpc.Identifier}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(s.origin + "/marker"))
	b.mustUntil(`navigator.globalPrivacyControl !== true && window.lsi === true`)
	leave(b)
	eventually(t, "the marker and the ignoring project's events", func() error {
		if findEvent(events(st, account, "my-saas"), "Marker") == nil {
			return fmt.Errorf("no marker yet")
		}
		if ok := events(st, account, "gpc-ok"); findEvent(ok, "Allowed Event") == nil || findEvent(ok, "GPC Click") == nil {
			return fmt.Errorf("the project that ignores GPC has %d events", len(ok))
		}
		return nil
	})
	s.viewsOf("user-marker", 1)
	for _, e := range events(st, account, "my-saas") {
		if e.Event != "Marker" {
			t.Errorf("stored despite GPC: %s (user %s)", e.Event, e.UserID)
		}
	}
	if _, err := st.FindPerson(context.Background(), account, "my-saas", "user-gpc"); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Errorf("the GPC visitor was recorded as a user: %v", err)
	}
	if views, err := st.ListPageViews(context.Background(), account, tidings.PageViewQuery{Project: "my-saas", UserID: "user-gpc", Limit: 10}); err != nil || len(views.Views) != 0 {
		t.Errorf("the GPC visitor's page views: %+v %v", views, err)
	}
	if views, err := st.ListPageViews(context.Background(), account, tidings.PageViewQuery{Project: "gpc-ok", UserID: "user-ok", Limit: 10}); err != nil || len(views.Views) != 1 {
		t.Errorf("the page view where GPC is ignored: %+v %v", views, err)
	}
}

// consoleLog keeps what the page's scripts write to the console in window.log.
const consoleLog = `<script nonce="{{nonce}}">
  window.log = [];
  for (const k of ["log", "warn"]) { const f = console[k]; console[k] = (...a) => { window.log.push(a.map(x => typeof x === "string" ? x : JSON.stringify(x)).join(" ")); f.apply(console, a); }; }
</script>`

// TestLsJSNoRetryLoop: ls.js keeps nothing unsent in a retry loop. Against a server that
// refuses (400) or is down (503): a refused event is sent once and its message shown, a
// failed one is tried once more, and nothing after. Page views go in batches of at most
// 20, however many a single-page app makes.
func TestLsJSNoRetryLoop(t *testing.T) {
	s := newLsjsSite(t)
	var mu sync.Mutex
	sent := map[string]int{}
	var batches []int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "POST")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var body struct {
			Event string
			Views []json.RawMessage
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/v1/page":
			batches = append(batches, len(body.Views))
		case body.Event == "Refused":
			sent[body.Event]++
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"status":400,"code":"validation_failed","message":"tags.Bad: keys must be lowercase"}`)
		case body.Event == "Down":
			sent[body.Event]++
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			sent[body.Event]++
			io.WriteString(w, `{}`)
		}
	}))
	t.Cleanup(api.Close)
	s.connect = api.URL
	s.page(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Retry</title>`+consoleLog+`
<script async id="logsnag-script" src="{{tidings}}/ls.js"></script>
<script nonce="{{nonce}}">
  window.lsq = window.lsq || [];
  window.ls = window.ls || ((...args) => window.lsq.push(args));
  window.ls("setConfig", "{{token}}", "my-saas", { host: "`+api.URL+`" });
  window.ls("setUserId", "user-1");
  window.ls("track", { channel: "payments", event: "Refused" });
  window.ls("track", { channel: "payments", event: "Down" });
</script></head><body></body></html>`, "/")

	b := newBrowser(t, s.origin)
	b.do(chromedp.Navigate(s.origin + "/"))
	b.mustUntil(`window.log.some(l => l.includes("/v1/log failed (400): tags.Bad: keys must be lowercase")) &&
		window.log.some(l => l.includes("/v1/log failed (503)"))`)
	b.do(chromedp.Evaluate[chromedp.Void](`for (let i = 0; i < 45; i++) history.pushState({}, "", "/p/" + i)`))
	leave(b)
	count := func() (map[string]int, []int) {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(sent), slices.Clone(batches)
	}
	eventually(t, "the page views", func() error {
		if _, b := count(); sum(b) != 46 {
			return fmt.Errorf("batches %v", b)
		}
		return nil
	})
	// The failed one's second try was its last: after longer than its pause, still 2.
	time.Sleep(4 * time.Second)
	got, sizes := count()
	if got["Refused"] != 1 || got["Down"] != 2 {
		t.Errorf("attempts: %v; want Refused 1 (a 4xx is never retried), Down 2 (tried once more)", got)
	}
	for _, n := range sizes {
		if n > 20 || n < 1 {
			t.Errorf("a batch of %d page views: %v", n, sizes)
		}
	}
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// lsjsPackages are the published LogSnag front-end packages the test bundles, with the
// versions of their peers.
var lsjsPackages = []string{"@logsnag/react@1.0.2", "react@18.3.1", "react-dom@18.3.1", "@logsnag/vue@1.0.0", "vue@3.5.45", "esbuild@0.28.2"}

// The apps, as a user writes them: the hooks, a data-event button, a route change by
// pushState; with the provider (React) or the plugin (Vue) in place of RENDER and USE,
// or without, with the README's snippet in the page. window.TOKEN is set by the page.
const reactApp = `
import React from "react";
import { createRoot } from "react-dom/client";
import { LogSnagProvider, useLogSnag } from "@logsnag/react";
const h = React.createElement;
function App() {
  const { setUserId, track, identify } = useLogSnag();
  const [page, setPage] = React.useState(location.pathname);
  React.useEffect(() => {
    setUserId("react-user");
    identify({ properties: { name: "Grace Hopper", framework: "react" } });
    const back = () => setPage(location.pathname);
    addEventListener("popstate", back);
    return () => removeEventListener("popstate", back);
  }, []);
  React.useEffect(() => { document.title = page === "/" ? "Home" : "Pricing"; }, [page]);
  const go = (p) => { history.pushState({}, "", p); setPage(p); };
  return h("main", null,
    h("h1", null, page),
    h("button", { id: "buy", onClick: () => track({ channel: "payments", event: "App Purchase", icon: "💰", tags: { plan: "pro" } }) }, "Buy"),
    h("button", { id: "tagged", "data-event": "App Click", "data-channel": "payments", "data-tag-source": "react" }, "Tagged"),
    h("button", { id: "next", onClick: () => go("/pricing") }, "Pricing"));
}
createRoot(document.getElementById("root")).render(RENDER);
`

const vueApp = `
import { createApp, h, ref, onMounted, watchEffect } from "vue";
import LogSnag, { setUserId, track, identify } from "@logsnag/vue";
const App = {
  setup() {
    const page = ref(location.pathname);
    onMounted(() => {
      setUserId("vue-user");
      identify({ properties: { name: "Grace Hopper", framework: "vue" } });
      addEventListener("popstate", () => { page.value = location.pathname; });
    });
    watchEffect(() => { document.title = page.value === "/" ? "Home" : "Pricing"; });
    const go = (p) => { history.pushState({}, "", p); page.value = p; };
    return () => h("main", [
      h("h1", page.value),
      h("button", { id: "buy", onClick: () => track({ channel: "payments", event: "App Purchase", icon: "💰", tags: { plan: "pro" } }) }, "Buy"),
      h("button", { id: "tagged", "data-event": "App Click", "data-channel": "payments", "data-tag-source": "vue" }, "Tagged"),
      h("button", { id: "next", onClick: () => go("/pricing") }, "Pricing"),
    ]);
  },
};
const app = createApp(App);
USE
app.mount("#root");
`

var bundles struct {
	sync.Once
	js  map[string]string
	err error
}

// appBundles installs the published packages with npm and bundles each app (lsjsApps)
// with esbuild, once per test binary.
func appBundles(t *testing.T) map[string]string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Need(t, "npm is needed to install @logsnag/react and @logsnag/vue: apt-get install npm")
	}
	bundles.Do(func() {
		dir, err := os.MkdirTemp("", "tidings-lsjs-")
		if err != nil {
			bundles.err = err
			return
		}
		defer os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		install := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--silent"}, lsjsPackages...)...)
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			bundles.err = fmt.Errorf("npm install: %v\n%s", err, out)
			return
		}
		bundles.js = map[string]string{}
		for _, app := range lsjsApps {
			if err := os.WriteFile(filepath.Join(dir, app.name+".js"), []byte(app.source()), 0o644); err != nil {
				bundles.err = err
				return
			}
			esbuild := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "esbuild"), app.name+".js", "--bundle",
				"--format=iife", "--minify", "--outfile="+app.name+".out.js", `--define:process.env.NODE_ENV="production"`,
				"--define:__VUE_OPTIONS_API__=true", "--define:__VUE_PROD_DEVTOOLS__=false",
				"--define:__VUE_PROD_HYDRATION_MISMATCH_DETAILS__=false", "--log-level=warning")
			esbuild.Dir = dir
			if out, err := esbuild.CombinedOutput(); err != nil {
				bundles.err = fmt.Errorf("esbuild %s: %v\n%s", app.name, err, out)
				return
			}
			b, err := os.ReadFile(filepath.Join(dir, app.name+".out.js"))
			if err != nil {
				bundles.err = err
				return
			}
			bundles.js[app.name] = string(b)
		}
	})
	if bundles.err != nil {
		testenv.Need(t, "installing and bundling the LogSnag packages failed (no npm registry?): %v", bundles.err)
	}
	return bundles.js
}

// lsjsApps are the apps TestLsJSPackages runs: each framework with its package's
// provider or plugin and the page's <script id="logsnag-script">, and without it, with
// the README's snippet (what the README advises).
var lsjsApps = []lsjsApp{{"react", "react", true}, {"react-hooks", "react", false}, {"vue", "vue", true}, {"vue-functions", "vue", false}}

type lsjsApp struct {
	name, framework string
	provider        bool // the package's provider (React) or plugin (Vue)
}

// source is the app's code: the framework's app with or without the provider.
func (c lsjsApp) source() string {
	if c.framework == "react" {
		render := "h(App)"
		if c.provider {
			render = `h(LogSnagProvider, { token: window.TOKEN, project: "my-saas" }, h(App))`
		}
		return strings.Replace(reactApp, "RENDER", render, 1)
	}
	use := ""
	if c.provider {
		use = `app.use(LogSnag, { token: window.TOKEN, project: "my-saas" });`
	}
	return strings.Replace(vueApp, "USE", use, 1)
}

// TestLsJSPackages runs the published @logsnag/react and @logsnag/vue, bundled with
// esbuild exactly as an app uses them: with their provider or plugin on a page that
// includes <script id="logsnag-script" src=".../ls.js">, and without it on a page with
// the README's snippet. The hooks' setUserId, identify and track, a data-event click, a
// route change and back are stored, with their page views and session.
func TestLsJSPackages(t *testing.T) {
	t.Parallel()
	js := appBundles(t)
	for i := range lsjsApps {
		c := &lsjsApps[i]
		user := c.name + "-user"
		t.Run(c.name, func(t *testing.T) {
			s := newLsjsSite(t)
			bundle := strings.ReplaceAll(js[c.name], `"`+c.framework+`-user"`, `"`+user+`"`)
			// The bundle is inline, by nonce: the page's CSP allows no other script
			// than Tidings'. (A </script> inside the bundle would end it early.)
			if strings.Contains(bundle, "</script") || !strings.Contains(bundle, user) {
				t.Fatal("the bundle holds </script>, or not its user id")
			}
			tags := `<script id="logsnag-script" async src="{{tidings}}/ls.js"></script>`
			if !c.provider {
				tags = s.snippet()
			}
			s.page(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title>`+tags+`
<script nonce="{{nonce}}">window.TOKEN = "{{token}}";</script></head>
<body><div id="root"></div><script nonce="{{nonce}}">`+bundle+`</script></body></html>`, "/", "/pricing")

			b := newBrowser(t, s.origin)
			b.do(chromedp.Navigate(s.origin + "/"))
			b.mustUntil(`window.lsi === true && localStorage.getItem("tidings:user_id") === "` + user + `" && !!document.querySelector("#buy")`)
			// @logsnag/react adds no script of its own when the page has one with the
			// id logsnag-script; @logsnag/vue's plugin adds LogSnag's always (the CSP,
			// which allows Tidings only, refuses it).
			srcs := get(b, chromedp.Evaluate[[]string](`[...document.scripts].filter(s => s.src).map(s => s.id + " " + s.src)`))
			t.Logf("scripts with a src: %q", srcs)
			if c.framework == "react" && len(srcs) != 1 {
				t.Errorf("@logsnag/react added a script beside the page's: %q", srcs)
			}
			b.do(chromedp.Click(chromedp.CSS("#buy")), chromedp.Click(chromedp.CSS("#tagged")), chromedp.Click(chromedp.CSS("#next")))
			b.mustUntil(`location.pathname === "/pricing" && document.title === "Pricing"`)
			b.do(chromedp.Evaluate[chromedp.Void](`history.back()`))
			b.mustUntil(`location.pathname === "/" && document.title === "Home"`)
			leave(b)
			noCookies(t, b)

			st, account := s.store()
			eventually(t, "the app's events and identify", func() error {
				evs := events(st, account, "my-saas")
				buy, click := findEvent(evs, "App Purchase"), findEvent(evs, "App Click")
				if buy == nil || click == nil {
					return fmt.Errorf("%d events, missing one", len(evs))
				}
				if buy.UserID != user || buy.Icon != "💰" || string(buy.Tags.JSON()) != `{"plan":"pro"}` {
					return fmt.Errorf("track: %+v %s", buy, buy.Tags.JSON())
				}
				if click.UserID != user || string(click.Tags.JSON()) != `{"source":"`+c.framework+`"}` {
					return fmt.Errorf("click: %+v %s", click, click.Tags.JSON())
				}
				u, err := st.FindPerson(context.Background(), account, "my-saas", user)
				if err != nil || len(u.Properties) != 2 {
					return fmt.Errorf("%s: %+v %v", user, u, err)
				}
				return nil
			})
			views := s.viewsOf(user, 3)
			slices.Sort(views)
			if want := []string{"/pricing|Pricing|/", "/|Home|", "/|Home|/pricing"}; !slices.Equal(views, want) {
				t.Errorf("page views (sorted):\n got %q\nwant %q", views, want)
			}
			eventually(t, "sessions", func() error {
				u, err := st.FindPerson(context.Background(), account, "my-saas", user)
				if err != nil || u.Sessions != 1 || u.PageViews != 3 {
					return fmt.Errorf("%+v %v", u, err)
				}
				return nil
			})
		})
	}
}

// pressEnter presses Enter as a keyboard does: one keyDown carrying its text, which the
// browser does not type when the page prevents the keydown. (chromedp's KeyEvent sends
// the text as an event of its own, which nothing prevents: a newline a person never
// gets would land in the message the dialog has just focused.)
func pressEnter(b *browser) {
	b.t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
		if typ == input.DispatchKeyEventTypeKeyDown {
			p.Text, p.UnmodifiedText = "\r", "\r"
		}
		if _, err := chromedp.Call(b.ctx, input.DispatchKeyEvent, p); err != nil {
			b.t.Fatal(err)
		}
	}
}

// TestFeedbackWidget: /feedback/ls.js turns a data-logsnag-feedback button into a
// dialog in a shadow root, on a page whose own styles are hostile: opened with the
// keyboard, focus kept inside, Escape closes and gives focus back, an empty message is
// refused, a sent one is stored with its tags and email, and a refused one says why.
// Screenshots in light, dark and phone sizes.
func TestFeedbackWidget(t *testing.T) {
	s := newLsjsSite(t)
	s.page(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Feedback</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script type="module" src="{{tidings}}/feedback/ls.js"></script>
<style nonce="{{nonce}}">
  body { font: 40px/3 serif; color: #c00; letter-spacing: 4px; text-transform: uppercase; }
  dialog, textarea, input { display: none !important; }
  * { font-size: 30px !important; color: #0a0 !important; }
  button { background: hotpink; }
  p { margin: 0 }
</style></head><body>
<p id="text">The page's own text.</p>
<button id="fb" data-logsnag-feedback data-logsnag-token="{{token}}" data-logsnag-project="my-saas"
  data-logsnag-channel="feedback" data-logsnag-user-id="user-7" data-logsnag-tag-plan="pro" data-logsnag-tag-Page-Name="home">Feedback</button>
<span id="nope" data-logsnag-feedback data-logsnag-token="{{token}}" data-logsnag-project="my-saas"
  data-logsnag-channel="no-such-channel">Other feedback</span>
</body></html>`, "/")

	b := newBrowser(t, s.origin)
	b.do(chromedp.Navigate(s.origin + "/"))
	b.mustUntil(`document.querySelector("#fb").getAttribute("aria-haspopup") === "dialog"`)
	before := get(b, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#text")).cssText || [...getComputedStyle(document.querySelector("#text"))].map(k => k + ":" + getComputedStyle(document.querySelector("#text")).getPropertyValue(k)).join(";")`))

	// root is the open dialog's shadow root; opened tells that the dialog is open.
	const root = `document.querySelector("tidings-feedback").shadowRoot`
	const opened = `document.querySelector("tidings-feedback")?.shadowRoot?.querySelector("dialog")?.open`
	// Keyboard: focus the button, Enter opens the dialog with the message focused.
	b.do(chromedp.Focus(chromedp.CSS("#fb")))
	pressEnter(b)
	b.mustUntil(opened + ` && ` + root + `.activeElement?.id === "message"`)
	if v := get(b, chromedp.Evaluate[string](root+`.querySelector("#message").value`)); v != "" {
		t.Errorf("the Enter that opened the dialog typed %q into the message", v)
	}
	// The page's styles do not reach inside, and the widget's do not leak out.
	if vis := get(b, chromedp.Evaluate[string](`(() => { const r = `+root+`; const m = r.querySelector("#message");
		const cs = getComputedStyle(m), w = r.querySelector("dialog").getBoundingClientRect().width;
		return [cs.display, cs.fontSize, cs.paddingLeft, getComputedStyle(r.querySelector("h2")).textTransform, w > 300 && w <= 448].join(" ") })()`)); vis != "block 15px 10px none true" {
		t.Errorf("inside the dialog (display, font size, padding, h2's text-transform, 300 < width <= 448): %s", vis)
	}
	if after := get(b, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#text")).cssText || [...getComputedStyle(document.querySelector("#text"))].map(k => k + ":" + getComputedStyle(document.querySelector("#text")).getPropertyValue(k)).join(";")`)); after != before {
		t.Error("opening the widget changed the page's own text's style")
	}
	// Tab goes round inside the dialog: message, email, Cancel, Send, message…
	var order []string
	for range 5 {
		b.do(chromedp.KeyEvent(kb.Tab))
		order = append(order, get(b, chromedp.Evaluate[string](root+`.activeElement?.id || `+root+`.activeElement?.className || document.activeElement.id`)))
	}
	if want := []string{"email", "close", "send", "message", "email"}; !slices.Equal(order, want) {
		t.Errorf("focus with Tab: %q, want %q", order, want)
	}
	b.do(chromedp.KeyEvent(kb.Escape))
	b.mustUntil(`!document.querySelector("tidings-feedback") && document.activeElement.id === "fb"`)

	// Open again (a click), screenshots in light, dark and phone sizes.
	shots := func(suffix string) {
		b.do(chromedp.Click(chromedp.CSS("#fb")))
		b.mustUntil(opened)
		b.do(chromedp.Evaluate[chromedp.Void](root + `.querySelector("#message").value = "The export button is hard to find."`))
		b.screenshot("feedback-dialog" + suffix)
		b.do(chromedp.KeyEvent(kb.Escape))
		b.mustUntil(`!document.querySelector("tidings-feedback")`)
	}
	b.colorScheme("light")
	shots("-light")
	b.colorScheme("dark")
	if bg := func() string {
		b.do(chromedp.Click(chromedp.CSS("#fb")))
		b.mustUntil(opened)
		defer func() {
			b.do(chromedp.KeyEvent(kb.Escape))
			b.mustUntil(`!document.querySelector("tidings-feedback")`)
		}()
		return get(b, chromedp.Evaluate[string](`getComputedStyle(`+root+`.querySelector("dialog")).backgroundColor`))
	}(); bg != "rgb(28, 33, 40)" {
		t.Errorf("the dialog's background in dark mode: %s", bg)
	}
	shots("-dark")
	b.colorScheme("light")
	if _, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Click(chromedp.CSS("#fb")))
	b.mustUntil(opened)
	if fits := get(b, chromedp.Evaluate[bool](`(() => { const r = `+root+`.querySelector("dialog").getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.width > 300 })()`)); !fits {
		t.Error("the dialog does not fit a phone's width")
	}
	b.do(chromedp.KeyEvent(kb.Escape))
	shots("-phone")
	if _, err := chromedp.Call(b.ctx, emulation.ClearDeviceMetricsOverride, struct{}{}); err != nil {
		t.Fatal(err)
	}

	// An empty message is refused without sending.
	b.do(chromedp.Focus(chromedp.CSS("#fb")))
	pressEnter(b)
	b.mustUntil(opened)
	b.do(chromedp.Evaluate[chromedp.Void](root + `.querySelector(".send").click()`))
	b.mustUntil(root + `.querySelector(".status").textContent.includes("write a message")`)
	// Typed with the keyboard and sent with Enter on Send.
	b.do(chromedp.KeyEvent("The export button is hard to find."), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("ada@example.com"),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	b.mustUntil(root + `.querySelector(".status").textContent.startsWith("Sent")`)
	b.screenshot("feedback-dialog-sent")
	b.do(chromedp.KeyEvent(kb.Escape))
	b.mustUntil(`!document.querySelector("tidings-feedback") && document.activeElement.id === "fb"`)

	st, account := s.store()
	eventually(t, "the feedback event", func() error {
		e := findEvent(events(st, account, "my-saas"), "Feedback")
		if e == nil {
			return fmt.Errorf("not stored yet")
		}
		if e.Channel != "feedback" || e.Icon != "💬" || e.Description != "The export button is hard to find." || e.UserID != "user-7" ||
			string(e.Tags.JSON()) != `{"plan":"pro","page-name":"home","email":"ada@example.com"}` {
			return fmt.Errorf("%+v %s", e, e.Tags.JSON())
		}
		return nil
	})

	// A refused one (no such channel) says why, with the server's message. The span
	// became a button for the keyboard.
	b.do(chromedp.Focus(chromedp.CSS("#nope")))
	pressEnter(b)
	b.mustUntil(opened)
	if v := get(b, chromedp.Evaluate[string](root+`.querySelector("#message").value`)); v != "" {
		t.Errorf("the Enter that opened the dialog from a span typed %q into the message", v)
	}
	b.do(chromedp.KeyEvent("Hello"), chromedp.Evaluate[chromedp.Void](root+`.querySelector(".send").click()`))
	b.mustUntil(root + `.querySelector(".status").textContent.startsWith("Not sent")`)
	if msg := get(b, chromedp.Evaluate[string](root+`.querySelector(".status").textContent`)); !strings.Contains(msg, `"no-such-channel"`) {
		t.Errorf("the refusal says: %q", msg)
	}
	b.screenshot("feedback-dialog-refused")
	// axe-core on the widget alone (the page's hostile styles are the page's business).
	b.do(chromedp.Evaluate[chromedp.Void](axeSource(t)))
	for _, v := range get(b, chromedp.Evaluate[[]string](`axe.run({include: [["tidings-feedback"]]}, {resultTypes: ["violations"]}).then(r =>
		r.violations.map(v => v.id + " (" + v.impact + "): " + v.help + " — " + v.nodes.slice(0, 3).map(n => JSON.stringify(n.target)).join(", ")))`,
		chromedp.EvalAwaitPromise)) {
		t.Errorf("feedback dialog: axe-core: %s", v)
	}
	noCookies(t, b)
}

// TestLsJSServed: the scripts through the server's whole chain (access log, compression):
// each path answers with its script, the headers other websites need, the version's
// long cache, a 304 to its ETag, and none of the dashboard's page headers.
func TestLsJSServed(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	m := startServer(t, testbackend.Location(t), nil)
	for path, script := range map[string]*scripts.Script{"/ls.js": scripts.LS, "/web/ls.js": scripts.LS, "/feedback/ls.js": scripts.Feedback} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			req, _ := http.NewRequest("GET", m.URL()+path+"?v="+script.Version(), nil)
			req.Header.Set("Accept-Encoding", "gzip")
			res, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body := res.Body
			if res.Header.Get("Content-Encoding") == "gzip" {
				if body, err = gzip.NewReader(res.Body); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := io.ReadAll(body)
			if res.StatusCode != 200 || string(got) != string(script.Body()) {
				t.Fatalf("%d, %d bytes (want %d)", res.StatusCode, len(got), len(script.Body()))
			}
			for k, want := range map[string]string{
				"Content-Type":                 "application/javascript; charset=utf-8",
				"Cache-Control":                "public, max-age=31536000, immutable",
				"Access-Control-Allow-Origin":  "*",
				"Cross-Origin-Resource-Policy": "cross-origin",
				"X-Content-Type-Options":       "nosniff",
				"Content-Security-Policy":      "",
				"X-Frame-Options":              "",
			} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			req, _ = http.NewRequest("GET", m.URL()+path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			req.Header.Set("If-None-Match", res.Header.Get("ETag"))
			again, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			again.Body.Close()
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match %s: %d", res.Header.Get("ETag"), again.StatusCode)
			}
		})
	}
}
