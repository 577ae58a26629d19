package smtptest_test

import (
	"crypto/tls"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"go.uber.org/goleak"

	"github.com/tidings-dev/tidings/internal/smtptest"
)

const msg = "From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\n\r\nhello\r\n.dot line\r\n"

func send(c *smtp.Client, to ...string) error {
	if len(to) == 0 {
		to = []string{"b@example.com"}
	}
	return c.SendMail("a@example.com", to, strings.NewReader(msg))
}

func TestStartTLSAndAuth(t *testing.T) {
	s := smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "ada", Password: "p@ss/word"})
	u, err := url.Parse(s.URL())
	if err != nil || u.Scheme != "smtp" || u.Host != s.Addr() || u.User.Username() != "ada" {
		t.Fatalf("URL %q: %v", s.URL(), err)
	}
	if pw, _ := u.User.Password(); pw != "p@ss/word" {
		t.Fatalf("URL password %q", pw)
	}

	// Before STARTTLS: no AUTH, and MAIL FROM wants it.
	c, err := smtp.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered")
	}
	if ok, _ := c.Extension("AUTH"); ok {
		t.Fatal("AUTH offered in the clear on a STARTTLS server")
	}
	var se *smtp.SMTPError
	if err := send(c); !errors.As(err, &se) || se.Code != 530 {
		t.Fatalf("send without auth: %v, want 530", err)
	}
	c.Close()

	// An unknown certificate is refused by a verifying client (go-smtp shakes hands
	// at the first command after STARTTLS).
	c, err = smtp.DialStartTLS(s.Addr(), &tls.Config{ServerName: "127.0.0.1"})
	if err == nil {
		err = c.Noop()
		c.Close()
	}
	var ve *tls.CertificateVerificationError
	if !errors.As(err, &ve) {
		t.Fatalf("STARTTLS with the system roots: %v, want a certificate error", err)
	}

	for _, auth := range []sasl.Client{
		sasl.NewPlainClient("", "ada", "p@ss/word"),
		sasl.NewLoginClient("ada", "p@ss/word"),
	} {
		c, err := smtp.DialStartTLS(s.Addr(), &tls.Config{RootCAs: s.CertPool(), ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Auth(sasl.NewPlainClient("", "ada", "wrong")); !errors.As(err, &se) || se.Code != 535 {
			t.Fatalf("wrong password: %v, want 535", err)
		}
		if err := c.Auth(auth); err != nil {
			t.Fatal(err)
		}
		if err := send(c, "b@example.com", "c@example.com"); err != nil {
			t.Fatal(err)
		}
		c.Quit()
	}
	got := s.Wait(t, 2)
	for _, m := range got {
		if !m.TLS || m.User != "ada" || m.From != "a@example.com" || len(m.To) != 2 || m.To[1] != "c@example.com" {
			t.Fatalf("message %+v", m)
		}
		if string(m.Data) != msg {
			t.Fatalf("data %q, want %q", m.Data, msg)
		}
	}
	if n := s.Connections(); n < 3 {
		t.Fatalf("Connections %d", n)
	}
}

func TestImplicitTLS(t *testing.T) {
	s := smtptest.Start(t, smtptest.Options{ImplicitTLS: true, User: "u", Password: "p"})
	if !strings.HasPrefix(s.URL(), "smtps://u:p@127.0.0.1:") {
		t.Fatalf("URL %q", s.URL())
	}
	c, err := smtp.DialTLS(s.Addr(), &tls.Config{RootCAs: s.CertPool(), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Fatal("STARTTLS offered inside TLS")
	}
	if err := c.Auth(sasl.NewPlainClient("", "u", "p")); err != nil {
		t.Fatal(err)
	}
	if err := send(c); err != nil {
		t.Fatal(err)
	}
	c.Quit()
	if m := s.Wait(t, 1)[0]; !m.TLS || m.User != "u" {
		t.Fatalf("message %+v", m)
	}
}

func TestPlainRefuseAndHangUp(t *testing.T) {
	s := smtptest.Start(t, smtptest.Options{})
	if s.CertPool() != nil || !strings.HasPrefix(s.URL(), "smtp://127.0.0.1:") {
		t.Fatalf("URL %q, pool %v", s.URL(), s.CertPool())
	}
	s.Refuse(1, 451, "4.3.0 try later")
	s.Refuse(1, 550, "5.7.1 no such user")
	s.HangUpDuringData(1)

	dial := func() *smtp.Client {
		c, err := smtp.Dial(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := c.Extension("STARTTLS"); ok {
			t.Fatal("STARTTLS offered without TLS")
		}
		return c
	}
	c := dial()
	// The hang-up comes first: it is taken before refusals.
	err := send(c)
	var se *smtp.SMTPError
	if err == nil || errors.As(err, &se) {
		t.Fatalf("hang-up: %v, want a connection error", err)
	}
	c.Close()

	c = dial()
	for _, want := range []int{451, 550} {
		if err := send(c); !errors.As(err, &se) || se.Code != want {
			t.Fatalf("refused: %v, want %d", err, want)
		}
	}
	if err := send(c); err != nil {
		t.Fatal(err)
	}
	c.Quit()

	if got := s.Messages(); len(got) != 1 || string(got[0].Data) != msg || got[0].TLS {
		t.Fatalf("messages %+v", got)
	}
	at := s.WaitAttempts(t, 4)
	outcomes := []string{}
	for _, m := range at {
		outcomes = append(outcomes, m.Outcome+" "+m.Reply)
	}
	want := "hung up ,refused 451 4.3.0 try later,refused 550 5.7.1 no such user,accepted "
	if strings.Join(outcomes, ",") != want {
		t.Fatalf("attempts %q, want %q", strings.Join(outcomes, ","), want)
	}
	if string(at[2].Data) != msg {
		t.Fatalf("refused message kept as %q", at[2].Data)
	}

	s.Close()
	s.Close()
	if c, err := smtp.Dial(s.Addr()); err == nil {
		c.Close()
		t.Fatal("dial after Close worked")
	}
}

// Close waits for every connection's goroutine: nothing outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A server closed before it was ever used closes at once. Close once hung when Serve's
// goroutine had not yet given go-smtp its listener (seen on a loaded machine); this
// catches that only when the scheduler is slow to start the goroutine.
func TestCloseUnused(t *testing.T) {
	for range 50 {
		s := smtptest.Start(t, smtptest.Options{})
		s.Close()
	}
}
