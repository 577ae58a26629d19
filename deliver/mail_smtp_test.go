package deliver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/inmem"
	"github.com/tidings-dev/tidings/internal/smtptest"
	tmail "github.com/tidings-dev/tidings/mail"
	webui "github.com/tidings-dev/tidings/web"
)

// smtpEnv is an env whose runner mails through a real SMTP server (STARTTLS and AUTH).
type smtpEnv struct {
	*env
	srv *smtptest.Server
	clk *clock
}

func newSMTPEnv(t *testing.T) *smtpEnv { return newSMTPEnvAt(t, publicURL) }

// newSMTPEnvAt is newSMTPEnv with the links of its mail on base.
func newSMTPEnvAt(t *testing.T, base string) *smtpEnv {
	e := &smtpEnv{env: newEnv(t), clk: &clock{}}
	e.srv = smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "tidings", Password: "s3cret"})
	sender, err := tmail.New(tmail.Config{URL: e.srv.URL(), From: "Tidings <tidings@example.com>", RootCAs: e.srv.CertPool()})
	e.must(err)
	e.env.run(deliver.Config{Mailer: sender, PublicURL: base, Now: e.clk.Now})
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
			// A refusal's record keeps the server's reply, as the event page shows it.
			rec := e.recordOf(ev.ID, tidings.MailTarget(ada.ID), func(*tidings.PushRecord) bool { return true })
			if want := map[bool]string{true: "", false: "550 5.1.1 no such mailbox"}[c.status == tidings.PushSent]; rec.Detail != want {
				t.Fatalf("the record's detail %q, want %q", rec.Detail, want)
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

// TestUnsubscribeRoundTrip: the List-Unsubscribe URL of a received mail, POSTed with
// List-Unsubscribe=One-Click as a mail provider does (RFC 8058) to a running dashboard,
// switches that member's email of the project off, and its digest; the next event
// mails the member nothing, while another member still gets it.
func TestUnsubscribeRoundTrip(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	e := newSMTPEnvAt(t, web.URL)
	dash, err := webui.New(webui.Config{Store: e.store, Broker: inmem.NewBroker(0), PublicURL: web.URL,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	e.must(err)
	dash.Register(mux)
	ctx := context.Background()
	ada := e.member("ada@example.com")
	e.must(e.store.SetDigest(ctx, e.account.ID, ada.ID, "my-saas", tidings.DigestDaily))

	e.publish(tidings.NewEvent{Event: "first", Notify: true})
	p := parse(t, e.srv.Wait(t, 1)[0])
	link := strings.TrimSuffix(strings.TrimPrefix(p.header.Get("List-Unsubscribe"), "<"), ">")
	if !strings.HasPrefix(link, web.URL+"/unsubscribe?") || p.header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("List-Unsubscribe %q, -Post %q", p.header.Get("List-Unsubscribe"), p.header.Get("List-Unsubscribe-Post"))
	}
	res, err := http.Post(link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	e.must(err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "You will no longer get email about my-saas") {
		t.Fatalf("one-click unsubscribe: %d\n%s", res.StatusCode, body)
	}
	routes, err := e.store.AccountRoutes(ctx, e.account.ID)
	e.must(err)
	if r := tidings.RoutesFor(routes, ada.ID, "my-saas", "payments"); r.Email {
		t.Fatalf("ada's routes after unsubscribing: %+v", r)
	}
	digests, err := e.store.MemberDigests(ctx, e.account.ID, ada.ID)
	e.must(err)
	if len(digests) != 0 {
		t.Fatalf("ada's digests after unsubscribing: %v", digests)
	}

	bob := e.member("bob@example.com")
	// The runner reads members and routes again after a second (its caches'): the
	// clock moves past that.
	e.clk.Advance(2 * time.Second)
	ev := e.publish(tidings.NewEvent{Event: "second", Notify: true})
	got := e.srv.Wait(t, 2)
	e.settled(0) // one expansion decided for both: bob's mail is sent, so is ada's, if any
	if n := len(e.srv.Messages()); n != 2 || got[1].To[0] != "bob@example.com" {
		t.Fatalf("%d mails, the second to %v: want one to bob only", n, got[1].To)
	}
	recs, err := e.store.EventPushes(ctx, e.account.ID, ev.ID)
	e.must(err)
	for _, r := range recs {
		if r.SubscriptionID == tidings.MailTarget(ada.ID) {
			t.Fatalf("a mail record for ada after she unsubscribed: %+v", r)
		}
	}
	if s := e.record(ev.ID, tidings.MailTarget(bob.ID)); s != tidings.PushSent {
		t.Fatalf("bob's record %q", s)
	}
}
