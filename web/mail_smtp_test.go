package web_test

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/smtptest"
	mailer "github.com/tidings-dev/tidings/mail"
	"github.com/tidings-dev/tidings/web"
)

// textOf parses a raw message and returns its header and its text/plain part.
func textOf(t *testing.T, raw []byte) (mail.Header, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no text/plain part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			b, err := io.ReadAll(p) // NextPart undoes quoted-printable
			if err != nil {
				t.Fatal(err)
			}
			return msg.Header, string(b)
		}
	}
}

// TestAccountMailOverSMTP: through a real SMTP server (STARTTLS and AUTH), "Forgot
// password?" delivers a reset link on the public URL that works, and an invitation
// typed on the members page arrives with its link; a refusal at DATA shows the
// server's words on the members page.
func TestAccountMailOverSMTP(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "tidings", Password: "s3cret"})
	sender, err := mailer.New(mailer.Config{URL: srv.URL(), From: "Tidings <tidings@example.com>", RootCAs: srv.CertPool()})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, web.Config{Mailer: sender, PublicURL: publicURL})
	e.runMail()
	ada := e.owner()

	e.client().post("/forgot", "email", "ada@example.com").want(t, 200, "a link to choose a new password is on its way")
	msgs := srv.Wait(t, 1)
	h, text := textOf(t, msgs[0].Data)
	if msgs[0].To[0] != "ada@example.com" || h.Get("Subject") != "Choose a new Tidings password" || !msgs[0].TLS {
		t.Fatalf("the reset mail: to %v, subject %q, TLS %v", msgs[0].To, h.Get("Subject"), msgs[0].TLS)
	}
	link := linkIn.FindString(text)
	if !strings.HasPrefix(link, publicURL+"/reset/") {
		t.Fatalf("the reset link %q in:\n%s", link, text)
	}
	e.client().get(strings.TrimPrefix(link, publicURL)).want(t, 200, "Choose a new password", "ada@example.com")

	ada.post("/settings/members/invite", "role", "member", "email", "bob@example.com").redirects(t, "/settings/members")
	msgs = srv.Wait(t, 2)
	h, text = textOf(t, msgs[1].Data)
	if msgs[1].To[0] != "bob@example.com" || h.Get("Subject") != "Join acme on Tidings" {
		t.Fatalf("the invitation: to %v, subject %q", msgs[1].To, h.Get("Subject"))
	}
	link = linkIn.FindString(text)
	e.client().get(strings.TrimPrefix(link, publicURL)).want(t, 200, "Join acme")
	ada.get("/settings/members").want(t, 200, "Invitation mailed to bob@example.com.", "Invitation (member) for bob@example.com")

	srv.Refuse(1, 550, "5.1.1 No such mailbox")
	ada.post("/settings/members/invite", "role", "member", "email", "nobody@example.com").redirects(t, "/settings/members#invite-link")
	ada.get("/settings/members").want(t, 200, "The invitation to nobody@example.com was not mailed: the mail server refused it: 550", "No such mailbox", `id="invite-link"`)
}
