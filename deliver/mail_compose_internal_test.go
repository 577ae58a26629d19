package deliver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestEventMailComposed: the subject is the icon, the event and the channel; the text
// part has the description as text, the tags and the links; the HTML part has the
// description rendered and sanitised, everything else escaped, inline styles only;
// without a public URL there is no link at all.
func TestEventMailComposed(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	ev := &tidings.Event{ID: "ev1", Project: "my-saas", Channel: "payments", Event: `New <b>Subscription</b> & "co"`, Icon: "💰",
		Parser: tidings.ParserMarkdown, Description: "A **premium** plan\n\n<script>alert(1)</script> [x](javascript:alert(1))",
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "<premium>"}}, Priority: tidings.PriorityHigh}
	l := mailLinks{base: "https://tidings.example.com", unsubscribe: "https://tidings.example.com/unsubscribe?u=1&p=my-saas&t=abc"}
	m := eventMail(ev, "ada@example.com", 0, l)
	if m.Subject != `💰 New <b>Subscription</b> & "co" · #payments` || m.To != "ada@example.com" || m.ListUnsubscribe != l.unsubscribe {
		t.Fatalf("subject %q to %q unsubscribe %q", m.Subject, m.To, m.ListUnsubscribe)
	}
	for _, want := range []string{"A premium plan", "plan: <premium>", "my-saas / #payments · high priority",
		"Open in Tidings: https://tidings.example.com/p/my-saas/events/ev1", "Stop email about my-saas: " + l.unsubscribe,
		"https://tidings.example.com/settings/notifications"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text part lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{"<strong>premium</strong>", "New &lt;b&gt;Subscription&lt;/b&gt; &amp; &#34;co&#34;", "&lt;premium&gt;",
		`href="https://tidings.example.com/p/my-saas/events/ev1"`, `href="https://tidings.example.com/unsubscribe?u=1&amp;p=my-saas&amp;t=abc"`,
		"You get this mail because you chose email for my-saas"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("HTML part lacks %q:\n%s", want, m.HTML)
		}
	}
	for _, bad := range []string{"<script", "javascript:", "<style", "<img", "class=", "<b>Subscription"} {
		if strings.Contains(m.HTML, bad) {
			t.Errorf("HTML part has %q:\n%s", bad, m.HTML)
		}
	}

	ev.Icon, ev.Event, ev.Priority = "", "Deploy\r\nBcc: eve@example.com", tidings.PriorityDefault
	m = eventMail(ev, "ada@example.com", 0, mailLinks{})
	if m.Subject != "Deploy Bcc: eve@example.com · #payments" {
		t.Fatalf("subject without an icon %q", m.Subject)
	}
	if m.ListUnsubscribe != "" || strings.Contains(m.Text, "http") || strings.Contains(m.HTML, "href=") || strings.Contains(m.Text, "priority") {
		t.Fatalf("links without a public URL:\n%s\n%s", m.Text, m.HTML)
	}

	m = eventMail(ev, "ada@example.com", 5, l)
	if !strings.HasSuffix(m.Subject, "· #payments and 4 more") || !strings.Contains(m.Text, "5 events beyond your limit of 10 mails a minute") ||
		!strings.Contains(m.Text, "https://tidings.example.com/p/my-saas/c/payments") || !strings.Contains(m.HTML, "See them all in #payments") {
		t.Fatalf("collapsed mail %q\n%s", m.Subject, m.Text)
	}
}

// TestSummaryAndDigestComposed: the quiet-hours summary counts and lists the first
// events, each with its link, and stops all email; the digest lists its
// period in the member's zone, events per channel, top events, insights and new users.
func TestSummaryAndDigestComposed(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	night := time.Date(2026, 11, 23, 23, 5, 0, 0, berlin)
	var held []*tidings.Event
	for i := range maxSummaryEvents {
		held = append(held, &tidings.Event{ID: fmt.Sprintf("ev%02d", i), Project: "my-saas", Channel: "payments", Icon: "💰",
			Event: fmt.Sprintf("Paid <%d>\r\nBcc: x", i), Timestamp: night.Add(time.Duration(i) * time.Minute).UTC()})
	}
	all := mailLinks{base: "https://t.example", unsubscribe: "https://t.example/unsubscribe?p=%2A"}
	m := summaryMessage(25, held, "ada@example.com", berlin, all)
	if m.Subject != "25 events arrived during your quiet hours" || m.ListUnsubscribe != all.unsubscribe {
		t.Fatalf("summary %q, List-Unsubscribe %q", m.Subject, m.ListUnsubscribe)
	}
	for _, want := range []string{"- 💰 Paid <0> Bcc: x\n  my-saas / #payments · Mon 23:05\n  https://t.example/p/my-saas/events/ev00\n",
		"https://t.example/p/my-saas/events/ev19", "… and 5 more.", "Open Tidings to see them all: https://t.example/",
		"Stop all email from Tidings: " + all.unsubscribe} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("summary text lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{"💰 Paid &lt;0&gt;", `href="https://t.example/p/my-saas/events/ev00"`, "Mon 23:05", "and 5 more",
		`href="https://t.example/unsubscribe?p=%2A"`, "Stop all email from Tidings"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("summary HTML lacks %q", want)
		}
	}
	if m := summaryMessage(1, held[:1], "ada@example.com", time.UTC, mailLinks{}); m.Subject != "1 event arrived during your quiet hours" ||
		strings.Contains(m.HTML, "href=") || m.ListUnsubscribe != "" || strings.Contains(m.Text, "more") || !strings.Contains(m.Text, "Mon 22:05") {
		t.Fatalf("a summary of one, without links: %q\n%s", m.Subject, m.Text)
	}
	to := time.Date(2026, 11, 24, 8, 0, 0, 0, berlin)
	c := &tidings.DigestContent{Project: "my-saas", From: to.AddDate(0, 0, -1).UTC(), To: to.UTC(), Events: 42,
		Channels:  []tidings.DigestCount{{Name: "payments", Count: 40}, {Name: "deploys", Count: 2}},
		TopEvents: []tidings.DigestCount{{Name: "New <Subscription>", Icon: "💰", Count: 30}},
		Insights:  []*tidings.Insight{{Title: "MRR", Value: "1200", Prefix: "$", UpdatedAt: to.Add(-time.Hour)}},
		NewUsers:  12, NewUserIDs: []string{"u1", "u2"}}
	l := mailLinks{base: "https://t.example", unsubscribe: "https://t.example/unsubscribe?x"}
	m = digestMessage(c, tidings.DigestDaily, "ada@example.com", berlin, l)
	if m.Subject != "Daily digest of my-saas: 42 events" || m.ListUnsubscribe != l.unsubscribe {
		t.Fatalf("digest subject %q", m.Subject)
	}
	for _, want := range []string{"Mon 23 Nov 08:00 – Tue 24 Nov 08:00 (Europe/Berlin)", "#payments: 40", "#deploys: 2",
		"💰 New <Subscription>: 30", "MRR: $1200 (Tue 07:00)", "12 new users: u1, u2, …", "daily digest of my-saas"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("digest text lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{"New &lt;Subscription&gt;", `href="https://t.example/p/my-saas/c/payments"`, "$1200", "12 new users"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("digest HTML lacks %q", want)
		}
	}
	if m := digestMessage(c, tidings.DigestWeekly, "ada@example.com", time.UTC, mailLinks{}); !strings.HasPrefix(m.Subject, "Weekly digest") ||
		strings.Contains(m.HTML, "href=") || m.ListUnsubscribe != "" {
		t.Fatalf("weekly digest without links %q", m.Subject)
	}
}

// TestMailHost: Message-IDs name the public URL's host, else an invalid one.
func TestMailHost(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	if h := mailHost("https://tidings.example.com:8443/x"); h != "tidings.example.com" {
		t.Fatal(h)
	}
	if h := mailHost(""); h != "tidings.invalid" {
		t.Fatal(h)
	}
	if id := newMailID("h.example"); !strings.HasPrefix(id, "<m.") || !strings.HasSuffix(id, "@h.example>") || len(id) != len("<m.@h.example>")+24 ||
		id == newMailID("h.example") {
		t.Fatal(id)
	}
}
