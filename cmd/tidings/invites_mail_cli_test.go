package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/smtptest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// mailParts parses a received message: its header and its parts by media type,
// decoded (a text-only message has its one part under text/plain).
func mailParts(t *testing.T, raw []byte) (netmail.Header, map[string]string) {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%v:\n%s", err, raw)
	}
	decode := func(enc string, r io.Reader) string {
		switch strings.ToLower(enc) {
		case "quoted-printable":
			r = quotedprintable.NewReader(r)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, r)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	parts := map[string]string{}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", m.Header.Get("Content-Type"), err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		parts[mt] = decode(m.Header.Get("Content-Transfer-Encoding"), m.Body)
		return m.Header, parts
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return m.Header, parts
		}
		if err != nil {
			t.Fatal(err)
		}
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts[pt] = decode(p.Header.Get("Content-Transfer-Encoding"), p)
	}
}

// TestCLIInviteMailed: with SMTP, invite create mails the invitation (its link, the
// account, the role) to --email before it prints the link; a refusal (5xx or 4xx), a
// server that cannot be reached or one that hangs up mid-message exits 1 with the
// reason and revokes the invitation; wrong mail settings make no invitation and send
// nothing.
func TestCLIInviteMailed(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	c := cliCase{t, loc}
	c.ok("correct horse battery\n", "user", "create", "ada@example.com", "--role", "owner")
	srv := smtptest.Start(t, smtptest.Options{User: "tidings", Password: "s3cret pass"})
	mailArgs := []string{"--smtp-url", srv.URL(), "--mail-from", "Tidings <tidings@example.com>", "--public-url", "https://tidings.example.com"}
	pending := func() map[string]*tidings.Invite {
		t.Helper()
		invs, err := s.ListInvites(ctx, f.Account.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		byEmail := map[string]*tidings.Invite{}
		for _, inv := range invs {
			byEmail[inv.Email] = inv
		}
		return byEmail
	}

	// Mailed: the link on standard output, "mailed to" on standard error.
	code, out, errs := runCLI(t, loc, "", append([]string{"invite", "create", "--email", "carol@example.com", "--role", "owner"}, mailArgs...)...)
	if code != 0 || !strings.HasPrefix(out, "https://tidings.example.com/invite/") || strings.Count(out, "\n") != 1 || errs != "mailed to carol@example.com\n" {
		t.Fatalf("invite create: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	link := strings.TrimSpace(out)
	inv, err := s.FindInvite(ctx, tidings.HashSecret(inviteSecret(t, link)), time.Now())
	if err != nil || inv.Email != "carol@example.com" || inv.Role != tidings.UserOwner {
		t.Fatalf("stored %+v, %v", inv, err)
	}
	m := srv.Wait(t, 1)[0]
	if m.From != "tidings@example.com" || len(m.To) != 1 || m.To[0] != "carol@example.com" || m.User != "tidings" {
		t.Fatalf("envelope %+v", m)
	}
	h, parts := mailParts(t, m.Data)
	if h.Get("To") != "carol@example.com" && h.Get("To") != "<carol@example.com>" {
		t.Fatalf("To: %q", h.Get("To"))
	}
	if h.Get("Subject") != "Join acme on Tidings" {
		t.Fatalf("Subject: %q", h.Get("Subject"))
	}
	text, html := strings.ReplaceAll(parts["text/plain"], "\r\n", "\n"), parts["text/html"]
	if !strings.Contains(text, "\n"+link+"\n") || !strings.Contains(text, "join acme on Tidings as an owner") {
		t.Fatalf("text part:\n%s", text)
	}
	if !strings.Contains(html, `href="`+link+`"`) {
		t.Fatalf("html part:\n%s", html)
	}

	// Refused for good, refused for now, no server, a hang-up: exit 1, revoked.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := "smtp://" + closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name, email, want string
		before            func()
		url               string
	}{
		{"5xx", "dan@example.com", "tidings invite create: the mail server refused it: 550 5.1.1 <dan@example.com>: Recipient address rejected; the invitation is revoked\n",
			func() { srv.Refuse(1, 550, "5.1.1 <dan@example.com>: Recipient address rejected") }, ""},
		{"4xx", "erin@example.com", "tidings invite create: the mail server refused it: 451 4.7.1 Greylisted, try again later; the invitation is revoked\n",
			func() { srv.Refuse(1, 451, "4.7.1 Greylisted, try again later") }, ""},
		{"hang-up", "fay@example.com", "tidings invite create: could not mail it: ", func() { srv.HangUpDuringData(1) }, ""},
		{"no server", "gus@example.com", "tidings invite create: could not mail it: ", func() {}, nobody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.before()
			args := append([]string{"invite", "create", "--email", tc.email}, mailArgs...)
			if tc.url != "" {
				args = append(args, "--smtp-url", tc.url)
			}
			code, out, errs := runCLI(t, loc, "", args...)
			if code != 1 || out != "" || !strings.HasPrefix(errs, tc.want) || !strings.HasSuffix(errs, "; the invitation is revoked\n") || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errs, tc.want)
			}
			if inv := pending()[tc.email]; inv != nil {
				t.Fatalf("the invitation to %s is still pending: %+v", tc.email, inv)
			}
		})
	}
	attempts := len(srv.Attempts())

	// Wrong mail settings: no invitation, nothing sent.
	before := len(pending())
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"--public-url is needed to mail an invitation", []string{"--email", "hal@example.com", "--smtp-url", srv.URL(), "--mail-from", "tidings@example.com"}},
		{`--smtp-url: unknown scheme "imap"`, []string{"--email", "hal@example.com", "--smtp-url", "imap://mail.example.com", "--mail-from", "tidings@example.com", "--public-url", "https://t.example.com"}},
		{"--mail-from is missing", []string{"--email", "hal@example.com", "--smtp-url", srv.URL(), "--public-url", "https://t.example.com"}},
		{"ada@example.com is a member of account acme already", append([]string{"--email", "ada@example.com"}, mailArgs...)},
		{"--email must be an email address", append([]string{"--email", "hal"}, mailArgs...)},
	} {
		c.fails(1, tc.want, append([]string{"invite", "create"}, tc.args...)...)
	}
	if after := len(pending()); after != before {
		t.Fatalf("refused commands made %d invitations", after-before)
	}
	if n := len(srv.Attempts()); n != attempts {
		t.Fatalf("refused commands sent %d mails", n-attempts)
	}

	// SMTP without --email: the link, nothing mailed.
	code, out, errs = runCLI(t, loc, "", append([]string{"invite", "create"}, mailArgs...)...)
	if code != 0 || !strings.HasPrefix(out, "https://tidings.example.com/invite/") || errs != "" {
		t.Fatalf("invite create without --email: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if n := len(srv.Attempts()); n != attempts {
		t.Fatalf("an invitation without --email sent %d mails", n-attempts)
	}
}
