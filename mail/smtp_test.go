package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/smtptest"
	"github.com/tidings-dev/tidings/mail"
)

const from = "Tidings Alerts <alerts@tidings.example>"

func newSender(t *testing.T, cfg mail.Config) *mail.Sender {
	t.Helper()
	if cfg.From == "" {
		cfg.From = from
	}
	s, err := mail.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func message(to string) *tidings.MailMessage {
	return &tidings.MailMessage{To: to, Subject: "Test", Text: "hello\n"}
}

// parsed is a received message taken apart with the standard library.
type parsed struct {
	header netmail.Header
	parts  map[string]string // media type → decoded body
	raw    string
}

func parse(t *testing.T, data []byte) parsed {
	t.Helper()
	if bytes.Contains(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\n")) {
		t.Fatalf("a bare LF in the message:\n%s", data)
	}
	for _, line := range strings.Split(string(data), "\r\n") {
		if len(line) > 78 {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadMessage: %v\n%s", err, data)
	}
	p := parsed{header: m.Header, parts: map[string]string{}, raw: string(data)}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", m.Header.Get("Content-Type"), err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		p.parts[mt] = decode(t, m.Header.Get("Content-Transfer-Encoding"), m.Body, params)
		return p
	}
	if mt != "multipart/alternative" {
		t.Fatalf("Content-Type %s", mt)
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("NextPart: %v", err)
		}
		pt, pp, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			t.Fatal(err)
		}
		// multipart decodes quoted-printable itself (and drops the header).
		p.parts[pt] = decode(t, part.Header.Get("Content-Transfer-Encoding"), part, pp)
	}
	return p
}

func decode(t *testing.T, cte string, r io.Reader, params map[string]string) string {
	t.Helper()
	if cs := params["charset"]; !strings.EqualFold(cs, "utf-8") {
		t.Errorf("charset %q", cs)
	}
	switch strings.ToLower(cte) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r)
	case "", "7bit", "8bit":
	case "quoted-printable": // only outside multipart: multipart decodes it itself
		t.Fatalf("a quoted-printable body at the top: parse it")
	default:
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading a %s body: %v", cte, err)
	}
	return string(b)
}

func TestSendSTARTTLSAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "ada@tidings.example", Password: "s3cret p@ss"})
	s := newSender(t, mail.Config{URL: srv.URL()})
	date := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
	s.Now = func() time.Time { return date }

	subject := "💰 Zahlung erhalten für Bestellung #1042 von Müller & Söhne GmbH · #payments — ein sehr langer Betreff"
	text := "💰 Zahlung erhalten\nshop / #payments\n\nA line that is long enough to need a soft break in quoted-printable, as it runs past seventy-six characters.\nEnde.\n"
	html := `<!doctype html><p style="color:#1f2328">Zahlung <b>erhalten</b> — <a href="https://tidings.example/p/shop/events/7">öffnen</a></p>`
	m := &tidings.MailMessage{
		To: "Ada Lovelace <ada@example.com>", Subject: subject, Text: text, HTML: html,
		MessageID:       "<m.4f2a9c@tidings.example>",
		ListUnsubscribe: "https://tidings.example/unsubscribe?u=3&p=shop&t=abc_DEF-1",
	}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 1)[0]
	if !got.TLS || got.User != "ada@tidings.example" {
		t.Fatalf("TLS %v, user %q: want STARTTLS and AUTH", got.TLS, got.User)
	}
	if got.From != "alerts@tidings.example" || len(got.To) != 1 || got.To[0] != "ada@example.com" {
		t.Fatalf("envelope %q → %q", got.From, got.To)
	}
	p := parse(t, got.Data)
	h := p.header
	var dec mime.WordDecoder
	gotSubject, err := dec.DecodeHeader(h.Get("Subject"))
	if err != nil || gotSubject != subject {
		t.Errorf("Subject %q (%v), want %q", gotSubject, err, subject)
	}
	if !strings.Contains(p.raw, "Subject: =?utf-8?q?") {
		t.Errorf("Subject not RFC 2047 encoded:\n%s", p.raw)
	}
	if a, err := h.AddressList("From"); err != nil || len(a) != 1 || a[0].Name != "Tidings Alerts" || a[0].Address != "alerts@tidings.example" {
		t.Errorf("From %q: %v %v", h.Get("From"), a, err)
	}
	if a, err := h.AddressList("To"); err != nil || len(a) != 1 || a[0].Name != "Ada Lovelace" || a[0].Address != "ada@example.com" {
		t.Errorf("To %q: %v %v", h.Get("To"), a, err)
	}
	if d, err := h.Date(); err != nil || !d.Equal(date) {
		t.Errorf("Date %q: %v %v", h.Get("Date"), d, err)
	}
	for name, want := range map[string]string{
		"Message-ID":            "<m.4f2a9c@tidings.example>",
		"MIME-Version":          "1.0",
		"List-Unsubscribe":      "<https://tidings.example/unsubscribe?u=3&p=shop&t=abc_DEF-1>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		"Auto-Submitted":        "auto-generated",
	} {
		if v := h.Get(name); v != want {
			t.Errorf("%s: %q, want %q", name, v, want)
		}
	}
	if len(p.parts) != 2 {
		t.Fatalf("parts %v", p.parts)
	}
	// The CRLF before a boundary is the boundary's (RFC 2046, 5.1.1): a part's last
	// line break is not its own.
	if want := strings.TrimSuffix(strings.ReplaceAll(text, "\n", "\r\n"), "\r\n"); p.parts["text/plain"] != want {
		t.Errorf("text part %q, want %q", p.parts["text/plain"], want)
	}
	if p.parts["text/html"] != html {
		t.Errorf("html part %q", p.parts["text/html"])
	}
	if strings.Index(p.raw, "text/plain") > strings.Index(p.raw, "text/html") {
		t.Error("the HTML part comes before the text part")
	}
}

func TestSendTextOnly(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	s := newSender(t, mail.Config{URL: srv.URL(), From: "tidings@example.com"})
	if err := s.Send(context.Background(), &tidings.MailMessage{To: "bob@example.com", Subject: "Plain ASCII", Text: "only text\n.\nafter a dot line"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), &tidings.MailMessage{To: "bob@example.com", Subject: "日本語", Text: "日本語のテキストです。通知が届きました。"}); err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 2)
	ids := map[string]bool{}
	for i, m := range got {
		if m.TLS || m.User != "" {
			t.Errorf("loopback plain server: TLS %v, user %q", m.TLS, m.User)
		}
		p := parse(t, m.Data)
		if len(p.parts) != 1 {
			t.Fatalf("parts %v", p.parts)
		}
		if v := p.header.Get("List-Unsubscribe"); v != "" {
			t.Errorf("List-Unsubscribe %q without ListUnsubscribe", v)
		}
		id := p.header.Get("Message-ID")
		if !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@example.com>") || ids[id] {
			t.Errorf("made Message-ID %q (seen: %v)", id, ids)
		}
		ids[id] = true
		want := []string{"only text\r\n.\r\nafter a dot line\r\n", "日本語のテキストです。通知が届きました。\r\n"}[i]
		if p.parts["text/plain"] != want {
			t.Errorf("text %q, want %q", p.parts["text/plain"], want)
		}
	}
	if cte := got[1].Data; !bytes.Contains(cte, []byte("Content-Transfer-Encoding: base64")) {
		t.Errorf("Japanese text not in base64:\n%s", cte)
	}
	if cte := got[0].Data; !bytes.Contains(cte, []byte("Content-Transfer-Encoding: 7bit")) {
		t.Errorf("short ASCII text not 7bit:\n%s", cte)
	}
}

func TestSendImplicitTLS(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{ImplicitTLS: true, User: "u", Password: "p"})
	s := newSender(t, mail.Config{URL: srv.URL()})
	if err := s.Send(context.Background(), message("a@example.com")); err != nil {
		t.Fatal(err)
	}
	if m := srv.Wait(t, 1)[0]; !m.TLS || m.User != "u" {
		t.Fatalf("TLS %v, user %q", m.TLS, m.User)
	}
	if err := s.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
}

func TestLoopbackPlainWithAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{User: "relay", Password: "pw"})
	for _, host := range []string{"127.0.0.1", "localhost"} {
		url := strings.Replace(srv.URL(), "127.0.0.1", host, 1)
		s := newSender(t, mail.Config{URL: url})
		if err := s.Probe(context.Background()); err != nil {
			t.Fatalf("%s: Probe: %v", host, err)
		}
		if err := s.Send(context.Background(), message("a@example.com")); err != nil {
			t.Fatalf("%s: %v", host, err)
		}
	}
	for _, m := range srv.Wait(t, 2) {
		if m.TLS || m.User != "relay" {
			t.Fatalf("TLS %v, user %q", m.TLS, m.User)
		}
	}
}

// publicIP is an address of this machine that is not loopback: a server there stands
// for one across the network.
func publicIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no address but loopback: no server can stand for a public one")
	return ""
}

func TestPublicServerTLSRules(t *testing.T) {
	ip := publicIP(t)
	ctx := context.Background()

	t.Run("no STARTTLS", func(t *testing.T) {
		srv := smtptest.Start(t, smtptest.Options{Host: ip, User: "u", Password: "p"})
		s := newSender(t, mail.Config{URL: srv.URL()})
		for name, err := range map[string]error{"Probe": s.Probe(ctx), "Send": s.Send(ctx, message("a@example.com"))} {
			var me *tidings.MailError
			if !errors.Is(err, mail.ErrNoSTARTTLS) || errors.As(err, &me) {
				t.Errorf("%s: %v, want ErrNoSTARTTLS", name, err)
			}
			if err != nil && !strings.Contains(err.Error(), "--smtp-insecure") {
				t.Errorf("%s: %v does not name --smtp-insecure", name, err)
			}
		}
		if n := len(srv.Attempts()); n != 0 {
			t.Fatalf("%d messages sent in the clear", n)
		}
		insecure := newSender(t, mail.Config{URL: srv.URL(), Insecure: true})
		if err := insecure.Probe(ctx); err != nil {
			t.Fatalf("--smtp-insecure Probe: %v", err)
		}
		if err := insecure.Send(ctx, message("a@example.com")); err != nil {
			t.Fatalf("--smtp-insecure: %v", err)
		}
		if m := srv.Wait(t, 1)[0]; m.TLS || m.User != "u" {
			t.Fatalf("TLS %v, user %q", m.TLS, m.User)
		}
	})

	t.Run("STARTTLS verified", func(t *testing.T) {
		srv := smtptest.Start(t, smtptest.Options{Host: ip, STARTTLS: true, User: "u", Password: "p"})
		// The system's roots do not know the test's certificate: refused, temporarily.
		s := newSender(t, mail.Config{URL: srv.URL()})
		err := s.Send(ctx, message("a@example.com"))
		var ve *tls.CertificateVerificationError
		var me *tidings.MailError
		if !errors.As(err, &ve) || errors.As(err, &me) {
			t.Fatalf("unverified certificate: %v, want a certificate error", err)
		}
		if err := s.Probe(ctx); !errors.As(err, &ve) {
			t.Fatalf("Probe: %v, want a certificate error", err)
		}
		// --smtp-insecure: TLS still, unverified.
		if err := newSender(t, mail.Config{URL: srv.URL(), Insecure: true}).Send(ctx, message("a@example.com")); err != nil {
			t.Fatalf("--smtp-insecure: %v", err)
		}
		trusted := newSender(t, mail.Config{URL: srv.URL(), RootCAs: srv.CertPool()})
		if err := trusted.Probe(ctx); err != nil {
			t.Fatalf("Probe: %v", err)
		}
		if err := trusted.Send(ctx, message("a@example.com")); err != nil {
			t.Fatal(err)
		}
		for _, m := range srv.Wait(t, 2) {
			if !m.TLS || m.User != "u" {
				t.Fatalf("TLS %v, user %q", m.TLS, m.User)
			}
		}
	})

	t.Run("smtps verified", func(t *testing.T) {
		srv := smtptest.Start(t, smtptest.Options{Host: ip, ImplicitTLS: true})
		var ve *tls.CertificateVerificationError
		if err := newSender(t, mail.Config{URL: srv.URL()}).Send(ctx, message("a@example.com")); !errors.As(err, &ve) {
			t.Fatalf("unverified certificate: %v, want a certificate error", err)
		}
		if err := newSender(t, mail.Config{URL: srv.URL(), RootCAs: srv.CertPool()}).Send(ctx, message("a@example.com")); err != nil {
			t.Fatal(err)
		}
		if m := srv.Wait(t, 1)[0]; !m.TLS {
			t.Fatal("not TLS")
		}
	})
}

func TestRefusals(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "u", Password: "p"})
	s := newSender(t, mail.Config{URL: srv.URL()})
	ctx := context.Background()

	srv.Refuse(1, 451, "4.3.0 Mailbox busy, try later")
	srv.Refuse(1, 550, "5.7.1 Relaying denied")
	var me *tidings.MailError
	err := s.Send(ctx, message("a@example.com"))
	if !errors.As(err, &me) || me.Code != 451 || me.Reply != "4.3.0 Mailbox busy, try later" || !me.Temporary() {
		t.Fatalf("4xx: %#v (%v)", me, err)
	}
	err = s.Send(ctx, message("a@example.com"))
	if !errors.As(err, &me) || me.Code != 550 || me.Temporary() {
		t.Fatalf("5xx: %#v (%v)", me, err)
	}
	if want := "the mail server refused it: 550 5.7.1 Relaying denied"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if err := s.Send(ctx, message("a@example.com")); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
	if n := len(srv.Wait(t, 1)); n != 1 {
		t.Fatalf("%d accepted", n)
	}

	// A wrong password is the server's refusal too.
	bad := strings.Replace(srv.URL(), "u:p@", "u:wrong@", 1)
	err = newSender(t, mail.Config{URL: bad}).Send(ctx, message("a@example.com"))
	if !errors.As(err, &me) || me.Code != 535 || me.Temporary() {
		t.Fatalf("wrong password: %v", err)
	}
	// AUTH is required by this server: none at all is refused at MAIL FROM.
	none := strings.Replace(srv.URL(), "u:p@", "", 1)
	err = newSender(t, mail.Config{URL: none}).Send(ctx, message("a@example.com"))
	if !errors.As(err, &me) || me.Code != 530 {
		t.Fatalf("no AUTH: %v", err)
	}
}

func TestHangUpDuringData(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{STARTTLS: true})
	s := newSender(t, mail.Config{URL: srv.URL()})
	srv.HangUpDuringData(1)
	big := &tidings.MailMessage{To: "a@example.com", Subject: "big", Text: strings.Repeat("a line of the message\n", 20000)}
	err := s.Send(context.Background(), big)
	var me *tidings.MailError
	if err == nil || errors.As(err, &me) {
		t.Fatalf("hang-up: %v, want a plain (temporary) error", err)
	}
	if at := srv.WaitAttempts(t, 1); at[0].Outcome != "hung up" || len(srv.Messages()) != 0 {
		t.Fatalf("attempts %+v", at)
	}
	if err := s.Send(context.Background(), big); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	srv.Wait(t, 1)
}

func TestTimeoutAndUnreachable(t *testing.T) {
	// A server that takes the connection and never says a word.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(held)
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for c := range held {
			c.Close()
		}
	})
	s := newSender(t, mail.Config{URL: "smtp://" + ln.Addr().String()})
	s.Timeout = 200 * time.Millisecond
	var me *tidings.MailError
	if err := s.Send(context.Background(), message("a@example.com")); !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &me) {
		t.Fatalf("silent server: %v, want the deadline", err)
	}
	s.Timeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := s.Probe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}

	// Nothing listens.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	err = newSender(t, mail.Config{URL: "smtp://" + addr}).Send(context.Background(), message("a@example.com"))
	if err == nil || errors.As(err, &me) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestBadMessage(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	s := newSender(t, mail.Config{URL: srv.URL()})
	for _, m := range []*tidings.MailMessage{
		{To: "not an address", Subject: "x", Text: "x"},
		{To: "a@example.com", Subject: "x", Text: ""},
		{To: "a@example.com", Subject: "x", Text: "x", ListUnsubscribe: "https://x.example/u>\r\nBcc: evil@example.com"},
		{To: "a@example.com", Subject: "x", Text: "x", MessageID: "<a@b.example>\r\nBcc: evil@example.com"},
		{To: "a@example.com", Subject: "x", Text: "x", MessageID: "no-brackets@example.com"},
	} {
		if err := s.Send(context.Background(), m); err == nil {
			t.Errorf("%+v sent", m)
		}
	}
	// A subject cannot add headers.
	if err := s.Send(context.Background(), &tidings.MailMessage{To: "a@example.com", Subject: "hi\r\nBcc: evil@example.com", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	p := parse(t, srv.Wait(t, 1)[0].Data)
	if p.header.Get("Bcc") != "" || p.header.Get("Subject") != "hi Bcc: evil@example.com" {
		t.Fatalf("headers %v", p.header)
	}
	if n := len(srv.Attempts()); n != 1 {
		t.Fatalf("%d messages reached the server", n)
	}
}
