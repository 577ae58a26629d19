package web_test

import (
	"context"
	"html"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/web"
)

// mailbox is a mail server at the boundary: it keeps what it is given, or refuses it.
type mailbox struct {
	mu     sync.Mutex
	msgs   []*tidings.MailMessage
	refuse error
}

func (m *mailbox) Send(ctx context.Context, msg *tidings.MailMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refuse != nil {
		return m.refuse
	}
	m.msgs = append(m.msgs, msg)
	return nil
}

func (m *mailbox) all() []*tidings.MailMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*tidings.MailMessage(nil), m.msgs...)
}

// wait waits for n messages, with a generous deadline.
func (m *mailbox) wait(t *testing.T, n int) []*tidings.MailMessage {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got := m.all(); len(got) >= n {
			return got
		}
	}
	t.Fatalf("%d mails arrived, want %d", len(m.all()), n)
	return nil
}

// runMail runs the dashboard's background work (the mail sender) until the test ends.
func (e *env) runMail() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.dash.Run(ctx) }()
	e.t.Cleanup(func() { cancel(); <-done })
}

const publicURL = "https://tidings.example.com"

var linkIn = regexp.MustCompile(`https://tidings\.example\.com/(reset|invite)/[A-Za-z0-9_-]+`)

// TestForgotPassword: with SMTP and a public URL, "Forgot password?" mails a member a
// reset link on the public URL that works once; the answer is the same for an address
// that is no member, which gets nothing; bad input says so; without SMTP the sign-in
// page keeps "ask an owner" and /forgot sends nothing.
func TestForgotPassword(t *testing.T) {
	t.Parallel()
	box := &mailbox{}
	e := newEnvWith(t, web.Config{Mailer: box, PublicURL: publicURL + "/"})
	e.runMail()
	e.owner()
	e.member(e.account("acme"), "bob@example.com")
	c := e.client()
	c.get("/login").want(t, 200, `<a href="/forgot">Forgot password?</a>`)
	c.get("/forgot").want(t, 200, `action="/forgot"`, `name="email"`)

	member := c.post("/forgot", "email", " Ada@Example.com ")
	member.want(t, 200, "If <strong>Ada@Example.com</strong> is a member, a link to choose a new password is on its way; it works for 24 hours.")
	stranger := c.post("/forgot", "email", "eve@example.com")
	stranger.want(t, 200)
	if strings.ReplaceAll(member.body, "Ada@Example.com", "X") != strings.ReplaceAll(stranger.body, "eve@example.com", "X") {
		t.Fatalf("the answers differ:\n%s\n---\n%s", excerpt(member.body), excerpt(stranger.body))
	}
	// One sender, in order: once bob's mail is there, the stranger's would be too.
	c.post("/forgot", "email", "bob@example.com").want(t, 200)
	msgs := box.wait(t, 2)
	if got := box.all(); len(got) != 2 || msgs[0].To != "ada@example.com" || msgs[1].To != "bob@example.com" {
		t.Fatalf("mails: %d, to %q and %q", len(got), msgs[0].To, msgs[1].To)
	}
	link := linkIn.FindString(msgs[0].Text)
	if !strings.HasPrefix(link, publicURL+"/reset/") || !strings.Contains(msgs[0].HTML, link) {
		t.Fatalf("the mail's link %q on %s:\n%s", link, publicURL, msgs[0].Text)
	}
	path := strings.TrimPrefix(link, publicURL)
	c.get(path).want(t, 200, "Choose a new password", "ada@example.com")
	c.post(path, "password", "a new horse", "password2", "a new horse").redirects(t, "/")
	e.client().post(path, "password", "again horse", "password2", "again horse").want(t, 404)
	e.client().post("/login", "email", "ada@example.com", "password", "a new horse").redirects(t, "/")

	for _, bad := range []string{"", "not-an-email", strings.Repeat("a", 250) + "@example.com"} {
		e.client().post("/forgot", "email", bad).want(t, 400, "Enter a valid email address.")
	}

	off := newEnv(t, false)
	off.owner()
	oc := off.client()
	page := oc.get("/login")
	page.want(t, 200, "Ask an owner of your team for a reset link.")
	if strings.Contains(page.body, `href="/forgot"`) {
		t.Fatal("the sign-in page offers Forgot password? without SMTP")
	}
	oc.get("/forgot").want(t, 200, "This server does not send mail")
	oc.post("/forgot", "email", "ada@example.com").want(t, 404)
	// SMTP without a public URL: no links to mail.
	nourl := newEnvWith(t, web.Config{Mailer: box})
	nourl.client().post("/forgot", "email", "ada@example.com").want(t, 404)
}

// TestForgotRateLimit: an email may be asked for three times at once, then 429; one
// client address ten times in all (forgot_limit_test.go has the limiter's own test).
func TestForgotRateLimit(t *testing.T) {
	t.Parallel()
	box := &mailbox{}
	e := newEnvWith(t, web.Config{Mailer: box, PublicURL: publicURL})
	c := e.client()
	for range 3 {
		c.post("/forgot", "email", "ada@example.com").want(t, 200)
	}
	c.post("/forgot", "email", "ada@example.com").want(t, 429, "Too many reset requests")
	for i := range 6 { // the address's tenth
		c.post("/forgot", "email", "other"+string(rune('a'+i))+"@example.com").want(t, 200)
	}
	c.post("/forgot", "email", "bob@example.com").want(t, 429)
}

// TestInviteByMail: with SMTP and a public URL, an invitation with an email is mailed
// (its link on the public URL, working), listed as pending with the address; a refusal
// shows the server's reply and the link to copy; without SMTP the link is shown, as
// before, and the email is kept on the invitation.
func TestInviteByMail(t *testing.T) {
	t.Parallel()
	box := &mailbox{}
	e := newEnvWith(t, web.Config{Mailer: box, PublicURL: publicURL})
	ada := e.owner()
	ada.get("/settings/members").want(t, 200, `name="email"`, "The invitation is mailed to this address")
	ada.post("/settings/members/invite", "role", "member", "email", "bob@example.com").redirects(t, "/settings/members")
	ada.get("/settings/members").want(t, 200, "Invitation mailed to bob@example.com.")
	msgs := box.wait(t, 1)
	m := msgs[0]
	if m.To != "bob@example.com" || m.Subject != "Join acme on Tidings" || !strings.Contains(m.Text, "ada@example.com invites you to join acme on Tidings as a member.") {
		t.Fatalf("the invitation: to %q, %q\n%s", m.To, m.Subject, m.Text)
	}
	link := linkIn.FindString(m.Text)
	if !strings.HasPrefix(link, publicURL+"/invite/") {
		t.Fatalf("the link %q", link)
	}
	e.client().get(strings.TrimPrefix(link, publicURL)).want(t, 200, "Join acme")

	box.mu.Lock()
	box.refuse = &tidings.MailError{Code: 550, Reply: "5.1.1 <carol@example.com>: mailbox unavailable"}
	box.mu.Unlock()
	ada.post("/settings/members/invite", "role", "owner", "email", "carol@example.com").redirects(t, "/settings/members#invite-link")
	page := ada.get("/settings/members")
	page.want(t, 200, "The invitation to carol@example.com was not mailed: the mail server refused it: 550 5.1.1",
		`id="invite-link"`, "Send this link to carol@example.com")
	copied := linkIn.FindString(html.UnescapeString(page.body))
	if !strings.HasPrefix(copied, publicURL+"/invite/") {
		t.Fatalf("the link to copy: %q", copied)
	}
	e.client().get(strings.TrimPrefix(copied, publicURL)).want(t, 200, "Join acme")

	ada.post("/settings/members/invite", "email", "not an email").want(t, 400, "Email: enter a valid address")

	off := newEnv(t, false)
	oa := off.owner()
	oa.get("/settings/members").want(t, 200, "Create an invitation link", "this server sends no mail")
	oa.post("/settings/members/invite", "role", "member", "email", "dan@example.com").redirects(t, "/settings/members#invite-link")
	oa.get("/settings/members").want(t, 200, `id="invite-link"`, "Send this link to the person you invite", "Invitation (member) for dan@example.com")
}
