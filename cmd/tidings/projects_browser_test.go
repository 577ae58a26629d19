package main

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings"
)

// judge runs the page checks of a settings page: contrast and axe-core in light and
// dark, labels, tap targets, no sideways scroll at 390 and 320 px; and keeps its
// screenshots (light, dark, phone). prepare runs after each navigation.
func (b *browser) judge(url, name string, prepare string) {
	b.t.Helper()
	axe := axeSource(b.t)
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		b.do(chromedp.Navigate(url))
		if prepare != "" {
			b.do(chromedp.Evaluate[chromedp.Void](prepare))
		}
		b.assess(name, scheme, axe)
		b.checkLabels(name)
		b.screenshot(name + "-" + scheme)
	}
	b.colorScheme("light")
	for _, width := range []int64{390, 320} {
		b.do(chromedp.EmulateViewport(width, 844))
		b.do(chromedp.Navigate(url))
		if prepare != "" {
			b.do(chromedp.Evaluate[chromedp.Void](prepare))
		}
		b.fits(name, width)
		if width == 390 {
			b.screenshot(name + "-phone")
			b.colorScheme("dark")
			b.screenshot(name + "-phone-dark")
			b.colorScheme("light")
		}
	}
	b.do(chromedp.EmulateViewport(1280, 900))
}

// TestProjectsInChromium: Settings → Projects as rows leading to each project's page;
// its switches save at once and say so in a toast, a refused change goes back and
// says why; deleting a channel asks for its name; and every page of it passes the
// checks in light, dark and at phone width.
func TestProjectsInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	for _, ev := range []string{"Signup", "Upgrade"} {
		if status, resp := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"`+ev+`"}`); status != 200 {
			t.Fatalf("publish: %d %s", status, resp)
		}
	}
	b.do(chromedp.Navigate(m.URL() + "/settings/projects"))
	if txt := b.text("#project-my-saas"); !strings.Contains(txt, "1 channel") || !strings.Contains(txt, "2 events") {
		t.Fatalf("the project's row: %q", txt)
	}
	b.click(`document.querySelector("#project-my-saas .row").click()`)
	if loc := b.location(); loc != "/settings/projects/my-saas" {
		t.Fatalf("the row leads to %s", loc)
	}
	// With scripts, the switches save by themselves: no Save buttons.
	if n := get(b, chromedp.Evaluate[int](`[...document.querySelectorAll(".setting button")].filter(x => x.offsetParent).length`)); n != 0 {
		t.Fatalf("%d Save buttons shown beside switches that save at once", n)
	}
	// Every message the toast shows is kept: a loaded machine may look after the toast
	// has already faded (it clears after a few seconds).
	b.do(chromedp.Evaluate[chromedp.Void](`window.toasts = []; new MutationObserver(() => {
		const t = document.querySelector(".toast"); if (t && t.textContent) window.toasts.push(t.textContent);
	}).observe(document.body, {subtree: true, childList: true, characterData: true})`))
	b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("auto-my-saas").click()`))
	b.mustUntil(`window.toasts.includes("Saved: create channels on first event is on.")`)
	b.screenshot("projects-toast")
	// The SDK hint says what to do only while the setting is off.
	b.mustUntil(`!document.querySelector(".sdk-hint").hidden`)
	b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("change-my-saas").click()`))
	b.mustUntil(`window.toasts.includes("Saved: a missing change means update is on.") && document.querySelector(".sdk-hint").hidden`)
	b.do(chromedp.SetValue(chromedp.CSS("#keep-my-saas"), "30"), chromedp.Evaluate[chromedp.Void](`document.getElementById("keep-my-saas").dispatchEvent(new Event("change", {bubbles: true}))`))
	b.mustUntil(`window.toasts.includes("Saved: keep events 30 days.")`)
	// A refused change goes back, and the toast says why.
	b.do(chromedp.Evaluate[chromedp.Void](`(f => { f.action = "/settings/projects/nope/gpc"; f.querySelector("input[type=checkbox]").click(); })(document.getElementById("gpc-my-saas").form)`))
	b.mustUntil(`document.querySelector(".toast.bad") && window.toasts.some(x => x.includes("Not saved: There is no project “nope”")) && document.getElementById("gpc-my-saas").checked`)
	// What was saved is what the page shows after a reload.
	b.do(chromedp.Navigate(m.URL() + "/settings/projects/my-saas"))
	if ok := get(b, chromedp.Evaluate[bool](`document.getElementById("auto-my-saas").checked && document.getElementById("change-my-saas").checked && document.getElementById("keep-my-saas").value === "30" && document.getElementById("gpc-my-saas").checked`)); !ok {
		t.Fatal("the switches' states were not saved")
	}
	// A new channel, made on the project's page, is listed there.
	b.submit("#ch-my-saas", "ops")
	b.mustUntil(`document.querySelector("#project-my-saas .channels").textContent.includes("#ops")`)

	// The danger zone: pick the channel; the confirmation names what goes and waits
	// for the name.
	b.do(chromedp.SetValue(chromedp.CSS("#del-channel-my-saas"), "payments"))
	b.click(`document.querySelector(".danger-zone form button").click()`)
	if loc := b.location(); loc != "/settings/projects/my-saas/channels/payments/delete" {
		t.Fatalf("the danger zone's channel leads to %s", loc)
	}
	if txt := b.text("main"); !strings.Contains(txt, "2 events") {
		t.Fatalf("the confirmation: %s", txt)
	}
	if !get(b, chromedp.Evaluate[bool](`document.querySelector(".confirm-delete button").disabled`)) {
		t.Fatal("the delete button is enabled before the name is typed")
	}
	pages := []struct{ path, name, prepare string }{
		{"/settings/projects", "projects-list", ""},
		{"/settings/projects/my-saas", "projects-detail", ""},
		{"/settings/projects/my-saas/channels/payments/delete", "projects-delete-channel", ""},
		{"/settings/projects/my-saas/delete", "projects-delete-project", `(i => { i.value = "my-saas"; i.dispatchEvent(new Event("input")); })(document.getElementById("confirm-name"))`},
	}
	for _, p := range pages {
		b.judge(m.URL()+p.path, p.name, p.prepare)
	}
	b.do(chromedp.Navigate(m.URL() + "/settings/projects/my-saas/channels/payments/delete"))
	b.do(chromedp.Focus(chromedp.CSS("#confirm-name")), chromedp.KeyEvent("payments"))
	b.mustUntil(`!document.querySelector(".confirm-delete button").disabled`)
	b.click(`document.querySelector(".confirm-delete button").click()`)
	b.mustUntil(`location.pathname === "/settings/projects/my-saas" && document.querySelector(".notice-ok").textContent.includes("Channel #payments deleted")`)
	if txt := b.text("#project-my-saas .channels"); strings.Contains(txt, "#payments") {
		t.Fatalf("the deleted channel is still listed: %q", txt)
	}

	// Without scripts: a Save button per setting; saving leads back with a notice.
	b.scripts(false)
	b.do(chromedp.Navigate(m.URL() + "/settings/projects/my-saas"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("gpc-my-saas").click()`)) // DevTools' own script still runs
	b.click(`document.getElementById("gpc-my-saas").form.querySelector("button").click()`)
	b.mustUntil(`location.pathname === "/settings/projects/my-saas" && document.querySelector(".notice-ok").textContent === "Saved: honour Global Privacy Control is off."`)
	b.screenshot("projects-detail-nojs")
	b.scripts(true)

	// A member sees the same rows and page, read-only: no forms, no danger zone.
	acme, err := m.store.FindAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	hash, err := m.Config.Passwords.Hash("member pass")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.store.CreateUser(t.Context(), &tidings.User{AccountID: acme.ID, Email: "bob@example.com", PasswordHash: hash, Role: tidings.UserMember}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(m.URL() + "/settings/projects"))
	b.click(`document.querySelector('form[action="/logout"] button').click()`)
	b.do(chromedp.Navigate(m.URL() + "/login"))
	b.submit("#email", "bob@example.com", "#password", "member pass")
	b.mustUntil(`location.pathname !== "/login"`)
	b.do(chromedp.Navigate(m.URL() + "/settings/projects/my-saas"))
	if n := get(b, chromedp.Evaluate[int](`document.querySelectorAll("main form, main .danger-zone").length`)); n != 0 {
		t.Fatalf("a member's view of the project has %d forms", n)
	}
	b.judge(m.URL()+"/settings/projects", "projects-list-member", "")
	b.judge(m.URL()+"/settings/projects/my-saas", "projects-detail-member", "")
}

// scripts turns the page's scripts on or off, as a browser without JavaScript.
func (b *browser) scripts(on bool) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled,
		emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		b.t.Fatal(err)
	}
}
