package mail_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/smtptest"
	"github.com/tidings-dev/tidings/mail"
)

// The account mails go through the Sender whole: both parts, the link in each, and the
// HTML escapes what a person typed.
func TestAccountMails(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{STARTTLS: true})
	s := newSender(t, mail.Config{URL: srv.URL()})
	expires := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	link := "https://tidings.example.com/invite/AbC123_-xyz"
	for _, m := range []*tidings.MailMessage{
		mail.InviteMessage("bob@example.com", "Acme <Shop> & Co", "ada@example.com", tidings.UserOwner, link, expires),
		mail.ResetMessage("bob@example.com", link, expires),
	} {
		if err := s.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Wait(t, 2)
	for i, subject := range []string{"Join Acme <Shop> & Co on Tidings", "Choose a new Tidings password"} {
		p := parse(t, got[i].Data)
		if p.header.Get("Subject") != subject {
			t.Errorf("Subject %q, want %q", p.header.Get("Subject"), subject)
		}
		if !strings.Contains(p.parts["text/plain"], "\r\n"+link+"\r\n") || !strings.Contains(p.parts["text/html"], `href="`+link+`"`) {
			t.Errorf("link missing:\n%v", p.parts)
		}
		if !strings.Contains(p.parts["text/plain"], "2 December 2026 09:00 UTC") {
			t.Errorf("expiry missing: %q", p.parts["text/plain"])
		}
	}
	if html := parse(t, got[0].Data).parts["text/html"]; !strings.Contains(html, "Acme &lt;Shop&gt; &amp; Co") || strings.Contains(html, "<Shop>") {
		t.Errorf("account name not escaped in HTML:\n%s", html)
	}
}
