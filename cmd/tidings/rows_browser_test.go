package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings"
)

// tapTargets lists the visible links, buttons, summaries and fields of main smaller
// than 24×24 px (WCAG 2.2's target size), each as "tag 'text' w×h". A radio or check
// box is tapped through its label: the label's size counts.
const tapTargets = `[...document.querySelectorAll("main a, main button, main summary, main input, main select")].filter(el => {
  if (!el.checkVisibility()) return false;
  const r = (el.labels && el.labels.length && /^(radio|checkbox)$/.test(el.type) ? el.labels[0] : el).getBoundingClientRect();
  return r.width > 0 && r.height > 0 && (r.width < 24 || r.height < 24);
}).map(el => { const r = el.getBoundingClientRect(); return el.tagName.toLowerCase() + " '" + el.textContent.trim().slice(0, 30) + "' " + Math.round(r.width) + "x" + Math.round(r.height); })`

// TestRowsInChromium: Settings → API, Webhooks, Members and Devices as rows leading to
// a page each, and a project's users: in light and dark, readable contrast and no
// axe-core violation; at 390 and 320 px nothing wider than the screen and no tap
// target under 24 px; kept as screenshots (rows-*.png). A token made in the form
// starts on the project last looked at, and its card is fully below the sticky
// header; the webhook log folds a failing event's retries into one line.
func TestRowsInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	axe := axeSource(t)
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	post(t, m.URL()+"/v1/identify", token, `{"project":"my-saas","user_id":"user-42","properties":{"name":"Ada Lovelace","plan":"premium"}}`)
	status, resp := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Invoice paid","icon":"💰","user_id":"user-42"}`)
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}

	// The token form starts on the project just looked at; the new token's card is
	// fully visible below the sticky header, on a phone too.
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas"))
	b.do(chromedp.Navigate(m.URL() + "/settings/api"))
	if v := get(b, chromedp.Evaluate[string](`document.querySelector("#tok-project").value`)); v != "my-saas" {
		t.Fatalf("the token form starts on project %q, want my-saas", v)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("details.create").open = true`))
	b.do(chromedp.SetValue(chromedp.CSS("#tok-name"), "website"))
	b.click(`document.querySelector("#create-token button[type=submit]").click()`)
	b.mustUntil(`document.querySelector("#token-created") && document.activeElement === document.querySelector("#token-created")`)
	if !get(b, chromedp.Evaluate[bool](`(() => { const c = document.querySelector("#token-created").getBoundingClientRect();
		return c.top >= document.querySelector(".top").getBoundingClientRect().bottom; })()`)) {
		t.Error("the new token's card starts under the sticky header")
	}
	if txt := b.text("#curl-example"); !strings.Contains(txt, "export TIDINGS_TOKEN=tds_") || !strings.Contains(txt, "$TIDINGS_TOKEN") {
		t.Errorf("the curl example: %q", txt)
	}
	tokenID := get(b, chromedp.Evaluate[string](`document.querySelector(".rows.tokens li").id.replace("token-", "")`))
	b.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	b.screenshot("rows-token-created-phone")
	b.do(chromedp.EmulateViewport(1280, 900))

	// A webhook whose events failed and are retried, one delivered after retries.
	hook := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: "https://hooks.slack.com/services/T0/B0/XYZ",
		Format: tidings.FormatSlack, Events: tidings.WebhookAll, Name: "Deploys to Slack"}
	if err := m.store.CreateWebhook(ctx, acme.ID, hook); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := m.store.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverTest, AccountID: acme.ID, EventID: "test",
		Target: hook.ID, MessageID: "msg_retried", NextAt: now.Add(4 * time.Minute), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		m.store.RecordWebhookAttempt(ctx, &tidings.WebhookAttempt{WebhookID: hook.ID, MessageID: "msg_late", EventID: "test",
			Attempt: i, Status: map[bool]int{true: 200, false: 503}[i == 5], Error: map[bool]string{true: "", false: "503 Service Unavailable"}[i == 5],
			Duration: 120 * time.Millisecond, At: now.Add(time.Duration(i-30) * time.Minute)})
	}
	for i := 1; i <= 6; i++ {
		m.store.RecordWebhookAttempt(ctx, &tidings.WebhookAttempt{WebhookID: hook.ID, MessageID: "msg_retried", EventID: "test",
			Attempt: i, Error: "dial tcp: lookup hooks.slack.com: no such host", Duration: 3 * time.Millisecond, At: now.Add(time.Duration(i-10) * time.Minute)})
	}
	// A member, and a device of the owner's.
	if err := m.store.CreateUser(ctx, &tidings.User{AccountID: acme.ID, Email: "grace.hopper.with.a.long.address@example.com", PasswordHash: "x", Role: tidings.UserMember}); err != nil {
		t.Fatal(err)
	}
	users, _ := m.store.ListUsers(ctx, acme.ID)
	var memberID int64
	for _, u := range users {
		if u.Role == tidings.UserMember {
			memberID = u.ID
		}
	}
	var ada *tidings.User
	for _, u := range users {
		if u.Email == "ada@example.com" {
			ada = u
		}
	}
	if _, err := m.store.SavePushSubscription(ctx, &tidings.PushSubscription{ID: tidings.NewID("sub_"), AccountID: acme.ID, UserID: ada.ID,
		Endpoint: "https://fcm.googleapis.com/fcm/send/abc", P256dh: "p", Auth: "a", Name: "Pixel 8", Browser: "Chrome on Android"}); err != nil {
		t.Fatal(err)
	}
	subs, _ := m.store.ListPushSubscriptions(ctx, ada.ID)

	b.do(chromedp.Navigate(m.URL() + "/settings/webhooks/" + hook.ID))
	if txt := b.text("#deliveries + .deliveries"); !strings.Contains(txt, "failed 6 times: dial tcp: lookup hooks.slack.com: no such host, next retry in 4 min") ||
		!strings.Contains(txt, "delivered after 5 attempts") {
		t.Errorf("the delivery log: %q", txt)
	}
	if n := get(b, chromedp.Evaluate[int](`document.querySelectorAll(".deliveries > li").length`)); n != 2 {
		t.Errorf("%d lines in the delivery log, want 2 (one per message)", n)
	}
	if wraps := get(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".delivery time")].filter(t => t.getClientRects().length > 1).map(t => t.textContent)`)); len(wraps) > 0 {
		t.Errorf("times wrap: %v", wraps)
	}

	pages := []struct{ path, name, open string }{
		{"/settings/api", "api", `document.querySelectorAll("details.create").forEach(d => d.open = false)`},
		{"/settings/api/" + tokenID, "token", ""},
		{"/settings/webhooks", "webhooks", ""},
		{"/settings/webhooks/" + hook.ID, "webhook", `document.querySelectorAll(".deliveries details").forEach(d => d.open = true)`},
		{"/settings/members", "members", ""},
		{"/settings/members/" + strconv.FormatInt(memberID, 10), "member", ""},
		{"/settings/devices", "devices", ""},
		{"/settings/devices/" + subs[0].ID, "device", ""},
		{"/p/my-saas/users", "users", ""},
	}
	load := func(path, open string) {
		b.do(chromedp.Navigate(m.URL() + path))
		if open != "" {
			b.do(chromedp.Evaluate[chromedp.Void](open))
		}
	}
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		for _, p := range pages {
			load(p.path, p.open)
			b.assess(p.path, scheme, axe)
			if scheme == "light" {
				b.checkLabels(p.path)
			}
			b.screenshot("rows-" + p.name + "-" + scheme)
		}
	}
	b.colorScheme("light")
	for _, width := range []int64{390, 320} {
		b.do(chromedp.EmulateViewport(width, 844))
		for _, p := range pages {
			load(p.path, p.open)
			if w := get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
				t.Errorf("%s scrolls sideways by %d px at %d px", p.path, w, width)
			}
			if small := get(b, chromedp.Evaluate[[]string](tapTargets)); len(small) > 0 {
				t.Errorf("%s at %d px: tap targets under 24 px: %v", p.path, width, small)
			}
			if width == 390 {
				b.screenshot("rows-" + p.name + "-phone")
			}
		}
	}
	b.do(chromedp.EmulateViewport(1280, 900))

	// Without a script, the danger zone's form still posts: revoking from the token's
	// page lands on the list, which says so.
	b.do(chromedp.Navigate(m.URL() + "/settings/api/" + tokenID))
	b.click(`document.querySelector(".danger-zone button").click()`)
	b.mustUntil(`location.pathname === "/settings/api" && document.querySelector(".notice-ok") && document.querySelector(".notice-ok").textContent.includes("revoked")`)
}
