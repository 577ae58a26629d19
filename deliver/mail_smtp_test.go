package deliver_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/smtptest"
	tmail "github.com/tidings-dev/tidings/mail"
)

// smtpEnv is an env whose runner mails through a real SMTP server (STARTTLS and AUTH).
type smtpEnv struct {
	*env
	srv *smtptest.Server
	clk *clock
}

func newSMTPEnv(t *testing.T) *smtpEnv {
	e := &smtpEnv{env: newEnv(t), clk: &clock{}}
	e.srv = smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "tidings", Password: "s3cret"})
	sender, err := tmail.New(tmail.Config{URL: e.srv.URL(), From: "Tidings <tidings@example.com>", RootCAs: e.srv.CertPool()})
	e.must(err)
	e.env.run(deliver.Config{Mailer: sender, PublicURL: publicURL, Now: e.clk.Now})
	return e
}

func (e *smtpEnv) member(email string) *tidings.User {
	e.t.Helper()
	u := &tidings.User{AccountID: e.account.ID, Email: email, PasswordHash: "x", Role: tidings.UserMember}
	e.must(e.store.CreateUser(context.Background(), u))
	e.must(e.store.SetRoutes(context.Background(), e.account.ID, u.ID, "my-saas", "", &tidings.Routes{Email: true}))
	return u
}

// parsed is a received mail read as a mail client reads it.
type parsed struct {
	header     mail.Header
	subject    string
	text, html string
}

func parse(t *testing.T, m smtptest.Message) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("not a mail: %v\n%s", err, m.Data)
	}
	p := parsed{header: msg.Header}
	if p.subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q", msg.Header.Get("Content-Type"))
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := r.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var body io.Reader = part
		if part.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
			body = quotedprintable.NewReader(part)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		switch ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type")); ct {
		case "text/plain":
			p.text = string(b)
		case "text/html":
			p.html = string(b)
		default:
			t.Fatalf("a part of type %q", ct)
		}
	}
	if p.text == "" || p.html == "" {
		t.Fatalf("parts: text %d bytes, HTML %d bytes", len(p.text), len(p.html))
	}
	return p
}

// TestMailOverSMTP: a member whose route is email gets a MIME mail through a real SMTP
// server (STARTTLS, AUTH): the subject with its icon, both parts with the link to the
// event, the one-click unsubscribe headers, the Message-ID of the job.
func TestMailOverSMTP(t *testing.T) {
	t.Parallel()
	e := newSMTPEnv(t)
	ada := e.member("ada@example.com")
	ev := e.publish(tidings.NewEvent{Event: "Zahlung eingegangen", Icon: "💶", Notify: true, Parser: tidings.ParserMarkdown,
		Description: "Plan **Prämie** <script>x</script>"})
	got := e.srv.Wait(t, 1)[0]
	if !got.TLS || got.User != "tidings" || len(got.To) != 1 || got.To[0] != "ada@example.com" {
		t.Fatalf("envelope %+v", got)
	}
	p := parse(t, got)
	key, err := tidings.MailKey(context.Background(), e.store)
	e.must(err)
	link := publicURL + "/p/my-saas/events/" + ev.ID
	unsubscribe := tidings.UnsubscribeURL(publicURL, key, ada.ID, "my-saas")
	to, err := mail.ParseAddress(p.header.Get("To"))
	e.must(err)
	if p.subject != "💶 Zahlung eingegangen · #payments" || to.Address != "ada@example.com" ||
		!messageID.MatchString(p.header.Get("Message-ID")) ||
		p.header.Get("List-Unsubscribe") != "<"+unsubscribe+">" || p.header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("headers %v (subject %q)", p.header, p.subject)
	}
	if !strings.Contains(p.text, link) || !strings.Contains(p.text, "Plan Prämie") || !strings.Contains(p.html, `href="`+link+`"`) ||
		!strings.Contains(p.html, "<strong>Prämie</strong>") || strings.Contains(p.html, "<script") ||
		!strings.Contains(p.html, strings.ReplaceAll(unsubscribe, "&", "&amp;")) {
		t.Fatalf("parts:\n%s\n%s", p.text, p.html)
	}
	if s := e.record(ev.ID, tidings.MailTarget(ada.ID)); s != tidings.PushSent {
		t.Fatalf("record %q", s)
	}
}

// TestMailOverSMTPFailures: a 4xx reply, or the server hanging up in the middle of
// DATA, is tried again with the same Message-ID and delivered once; a 5xx reply is
// final: one attempt, the record says failed.
func TestMailOverSMTPFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		arrange  func(*smtptest.Server)
		attempts int
		status   string
	}{
		{"4xx then accepted", func(s *smtptest.Server) { s.Refuse(1, 451, "4.3.0 try again later") }, 2, tidings.PushSent},
		{"hang-up mid-DATA", func(s *smtptest.Server) { s.HangUpDuringData(1) }, 2, tidings.PushSent},
		{"5xx", func(s *smtptest.Server) { s.Refuse(1, 550, "5.1.1 no such mailbox") }, 1, tidings.PushFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newSMTPEnv(t)
			c.arrange(e.srv)
			ada := e.member("ada@example.com")
			ev := e.publish(tidings.NewEvent{Event: "x", Notify: true})
			if s := e.record(ev.ID, tidings.MailTarget(ada.ID)); s != c.status {
				t.Fatalf("record %q, want %q", s, c.status)
			}
			e.settled(0)
			attempts := e.srv.Attempts()
			if len(attempts) != c.attempts {
				t.Fatalf("%d attempts, want %d", len(attempts), c.attempts)
			}
			var ids []string
			answered := 0
			for _, a := range attempts {
				if a.Outcome == "hung up" {
					continue // what it holds may end before the headers do
				}
				answered++
				if i := bytes.Index(a.Data, []byte("Message-ID: ")); i >= 0 {
					ids = append(ids, strings.TrimSpace(strings.SplitN(string(a.Data[i+12:]), "\n", 2)[0]))
				}
			}
			if len(ids) != answered {
				t.Fatalf("Message-IDs %q in %d answered attempts", ids, answered)
			}
			for _, id := range ids {
				if id != ids[0] || !messageID.MatchString(id) {
					t.Fatalf("Message-IDs %q: every attempt must carry the first one", ids)
				}
			}
			if want := map[bool]int{true: 1, false: 0}[c.status == tidings.PushSent]; len(e.srv.Messages()) != want {
				t.Fatalf("%d messages accepted, want %d", len(e.srv.Messages()), want)
			}
		})
	}
}
