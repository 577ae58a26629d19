package main

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/smtptest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// mailBrowser is signedInBrowser with the server's configuration changed by mod.
func mailBrowser(t *testing.T, mod func(*Config)) (*Main, *browser) {
	t.Helper()
	testbackend.Once(t)
	t.Parallel()
	loc := testbackend.Location(t)
	setupAccount(t, loc)
	if code, _, errs := runCLI(t, loc, "correct horse\n", "user", "create", "ada@example.com", "--role", "owner"); code != 0 {
		t.Fatal(errs)
	}
	m := startServer(t, loc, mod)
	b := newBrowser(t, m.URL())
	b.do(chromedp.Navigate(m.URL() + "/login"))
	b.submit("#email", "ada@example.com", "#password", "correct horse")
	b.mustUntil(`location.pathname !== "/login"`)
	return m, b
}

// TestMailPagesInChromium: the pages of members' routes, digests (and the time zone the
// browser fills in), the escalation order, who was notified, forgot password and
// unsubscribe (of a project, and of all), in light, dark and at phone width: readable
// contrast, labelled fields, no axe-core violation, no sideways scroll; kept as
// screenshots (mail-*.png). The server mails through a real SMTP server: the reset
// link asked for in the browser arrives and opens the page that sets a password.
func TestMailPagesInChromium(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	m, b := mailBrowser(t, func(c *Config) {
		c.PublicURL, c.SMTPURL, c.MailFrom = "https://tidings.example.com", srv.URL(), "Tidings <tidings@example.com>"
	})
	axe := axeSource(t)
	ctx := context.Background()
	acme, err := m.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"deploys", "signups", "support-tickets-from-the-enterprise-plan"} {
		if _, err := m.store.CreateChannel(ctx, acme.ID, "my-saas", c); err != nil {
			t.Fatal(err)
		}
	}
	ada, err := m.store.FindUserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]*tidings.User{"ada": ada}
	for _, name := range []string{"bob", "carol", "dan", "eve", "fay"} {
		u := &tidings.User{AccountID: acme.ID, Email: name + "@example.com", PasswordHash: "x", Role: tidings.UserMember}
		if err := m.store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		users[name] = u
	}
	if err := m.store.SetRecipients(ctx, acme.ID, "my-saas", "", &tidings.Recipients{Mode: tidings.NotifyMembers,
		Emails: []string{"ada@example.com", "carol@example.com", "dan@example.com", "eve@example.com", "fay@example.com"}}); err != nil {
		t.Fatal(err)
	}
	// Ada: push and email for the project, #signups by email only, a weekly digest;
	// eve: nothing; a project escalating after 10 minutes.
	set := func(name, channel, by string) {
		t.Helper()
		r, err := tidings.ParseRoutes(by)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.store.SetRoutes(ctx, acme.ID, users[name].ID, "my-saas", channel, &r); err != nil {
			t.Fatal(err)
		}
	}
	set("ada", "", "push,email")
	set("ada", "deploys", "none")
	set("ada", "signups", "email")
	if err := m.store.SetDigest(ctx, acme.ID, ada.ID, "my-saas", tidings.DigestWeekly); err != nil {
		t.Fatal(err)
	}
	set("eve", "", "none")
	if err := m.store.SetEscalation(ctx, acme.ID, "my-saas", 10*time.Minute); err != nil {
		t.Fatal(err)
	}

	// A notify event, expanded by the server while nobody has a device: ada, who
	// chose push and email, is mailed it. Then the records of the devices, as the
	// runner keeps them.
	ev, err := m.store.PublishEvent(ctx, acme.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Payment failed",
		Icon: "💳", Notify: true, Priority: "high", Parser: tidings.ParserText, Description: "Card declined for the Pro plan."})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, _, err := m.store.PendingDeliveries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending", n)
		}
	}
	var records []*tidings.PushRecord
	for _, d := range []struct{ name, status string }{{"ada", tidings.PushSent}, {"ada", tidings.PushSent}, {"bob", tidings.PushNotRecipient},
		{"carol", tidings.PushMuted}, {"dan", tidings.PushQuiet}} {
		sub := &tidings.PushSubscription{AccountID: acme.ID, UserID: users[d.name].ID, Endpoint: "https://fcm.googleapis.com/fcm/send/" + d.name + tidings.NewID(""),
			P256dh: "k", Auth: "a", Name: "Pixel 8"}
		if _, err := m.store.SavePushSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: sub.UserID, Status: d.status, At: time.Now()})
	}
	if err := m.store.RecordPushes(ctx, records); err != nil {
		t.Fatal(err)
	}

	key, err := tidings.MailKey(ctx, m.store)
	if err != nil {
		t.Fatal(err)
	}
	unsubscribe := strings.TrimPrefix(tidings.UnsubscribeURL("https://tidings.example.com", key, ada.ID, "my-saas"), "https://tidings.example.com")
	unsubscribeAll := strings.TrimPrefix(tidings.UnsubscribeURL("https://tidings.example.com", key, ada.ID, tidings.UnsubscribeAll), "https://tidings.example.com")

	signedIn := []struct{ path, name, ready string }{
		{"/settings/notifications", "settings-notifications", `document.querySelector("#routes-my-saas")`},
		{"/settings/projects/my-saas/notify", "project-notify", `document.querySelector("#escalate")`},
		{"/p/my-saas/events/" + ev.ID, "event", `document.querySelector(".notified")`},
		{"/settings/members", "members", `document.querySelector("#invite-email")`},
	}
	signedOut := []struct{ path, name, ready string }{
		{"/forgot", "forgot", `document.querySelector("h1")`},
		{unsubscribe, "unsubscribe", `document.querySelector("form[action^='/unsubscribe']")`},
		{unsubscribeAll, "unsubscribe-all", `document.querySelector("form[action^='/unsubscribe']")`},
	}
	check := func(path, name, ready string) {
		t.Helper()
		for _, size := range []struct {
			name          string
			width, height int64
		}{{"", 1280, 900}, {"-phone", 390, 844}} {
			b.do(chromedp.EmulateViewport(size.width, size.height))
			for _, scheme := range []string{"light", "dark"} {
				b.colorScheme(scheme)
				b.do(chromedp.Navigate(m.URL() + path))
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
				b.screenshot("mail-" + name + "-" + scheme + size.name)
			}
		}
		b.colorScheme("light")
		b.do(chromedp.EmulateViewport(1280, 900))
	}
	// The browser is in Tokyo: the page fills the time zone fields with its zone.
	if _, err := chromedp.Call(b.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range signedIn {
		check(p.path, p.name, p.ready)
	}
	// Saving a project's form saves that zone, the digest's.
	b.do(chromedp.Navigate(m.URL() + "/settings/notifications"))
	b.mustUntil(`document.querySelector("#routes-my-saas input[name=time_zone]").value === "Asia/Tokyo"`)
	b.click(`document.querySelector("#routes-my-saas button[type=submit]").click()`)
	b.mustUntil(`document.querySelector(".notice-ok") && document.querySelector(".notice-ok").textContent.includes("Your time zone: Asia/Tokyo.")`)
	if p, err := m.store.NotifyPrefs(ctx, ada.ID); err != nil || p.TimeZone != "Asia/Tokyo" {
		t.Fatalf("ada's time zone after saving the form: %+v, %v", p, err)
	}
	b.screenshot("mail-settings-notifications-zone-saved")
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/events/" + ev.ID))
	who := b.text(".notified")
	for _, line := range []string{"ada@example.com — push to 2 devices, email sent", "bob@example.com — not a recipient", "carol@example.com — muted",
		"dan@example.com — quiet hours (in the summary)", "eve@example.com — chose no notifications for this project",
		"fay@example.com — no device with notifications on"} {
		if !strings.Contains(who, line) {
			t.Errorf("the event page's lines lack %q:\n%s", line, who)
		}
	}
	// Signed out, as a person who lost their password or clicks a mail's link.
	if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range signedOut {
		check(p.path, p.name, p.ready)
	}
	// Forgot password: the answer, and the link that arrives by mail.
	before := len(srv.Messages()) // the event's mail to ada came before
	b.do(chromedp.Navigate(m.URL() + "/login"))
	b.click(`document.querySelector("a[href='/forgot']").click()`)
	b.submit("#email", "ada@example.com")
	b.mustUntil(`document.querySelector(".notice-ok") && document.querySelector(".notice-ok").textContent.includes("is on its way")`)
	for _, v := range b.axe(axe) {
		t.Errorf("forgot password's answer: axe-core: %s", v)
	}
	b.screenshot("mail-forgot-sent")
	reset := srv.Wait(t, before+1)[before]
	link := regexp.MustCompile(`https://tidings\.example\.com(/reset/[A-Za-z0-9_-]+)`).FindStringSubmatch(mailText(t, reset.Data))
	if len(link) < 2 || reset.To[0] != "ada@example.com" {
		t.Fatalf("the reset mail to %v:\n%s", reset.To, reset.Data)
	}
	b.do(chromedp.Navigate(m.URL() + link[1]))
	b.mustUntil(`document.querySelector("h1").textContent.includes("Choose a new password")`)

	// The unsubscribe button works in the browser and says so.
	b.do(chromedp.Navigate(m.URL() + unsubscribe))
	b.click(`document.querySelector("form[action^='/unsubscribe'] button").click()`)
	b.mustUntil(`document.querySelector("h1").textContent.includes("You will no longer get email about my-saas")`)
	b.screenshot("mail-unsubscribed")
}

// mailText returns the text/plain part of a raw multipart/alternative message, decoded.
func mailText(t *testing.T, raw []byte) string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no text/plain part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			b, err := io.ReadAll(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
}
