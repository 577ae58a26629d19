package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/textproto"
	"os"
	"strings"
	"time"

	"github.com/wneessen/go-mail/smtp"

	"github.com/tidings-dev/tidings"
)

// DefaultTimeout bounds one Send or Probe, from the dial to the server's last reply,
// when the context has no earlier deadline.
const DefaultTimeout = 30 * time.Second

// ErrNoSTARTTLS is the error of a Send or Probe to an smtp:// server that is neither
// loopback nor allowed with --smtp-insecure and does not offer STARTTLS.
var ErrNoSTARTTLS = errors.New("the mail server does not offer STARTTLS")

// Sender sends mail through one SMTP server, a connection per message. It implements
// tidings.Mailer.
type Sender struct {
	e        *endpoint
	insecure bool
	tls      *tls.Config
	hello    string // our name in EHLO
	// Now dates the messages; time.Now when nil.
	Now func() time.Time
	// Timeout bounds each Send and Probe; DefaultTimeout when zero.
	Timeout time.Duration
}

var _ tidings.Mailer = (*Sender)(nil)

// New checks cfg and returns its Sender. It does not connect: see Probe.
func New(cfg Config) (*Sender, error) {
	e, err := cfg.endpoint()
	if err != nil {
		return nil, err
	}
	s := &Sender{e: e, insecure: cfg.Insecure, hello: helloName()}
	s.tls = &tls.Config{
		ServerName: e.host,
		RootCAs:    cfg.RootCAs,
		MinVersion: tls.VersionTLS12,
		// On loopback nothing can stand between us and the server; --smtp-insecure
		// is the operator saying the same of their network.
		InsecureSkipVerify: e.loopback || cfg.Insecure, //nolint:gosec // see above
	}
	return s, nil
}

// Addr is the server's HOST:PORT.
func (s *Sender) Addr() string { return s.e.addr() }

// Send sends m. The server's refusal (a 4xx or 5xx reply, at any step) is a
// *tidings.MailError; anything else (no connection, a TLS failure, the connection cut
// mid-message, the timeout) is a plain error: trying again later may work.
func (s *Sender) Send(ctx context.Context, m *tidings.MailMessage) error {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return fmt.Errorf("mail: %q is not an address: %w", m.To, err)
	}
	msgID := m.MessageID
	if msgID == "" {
		msgID = newMessageID(s.e.from)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	data, err := compose(s.e.from, m, to, msgID, now())
	if err != nil {
		return err
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	c, done, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Mail(s.e.from.Address); err != nil {
		return s.fail(ctx, "MAIL FROM", err)
	}
	if err := c.Rcpt(to.Address); err != nil {
		return s.fail(ctx, "RCPT TO", err)
	}
	w, err := c.Data()
	if err != nil {
		return s.fail(ctx, "DATA", err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return s.fail(ctx, "sending the message", err)
	}
	if err := w.Close(); err != nil {
		return s.fail(ctx, "the end of the message", err)
	}
	_ = c.Quit() // it is sent: a lost goodbye changes nothing
	return nil
}

// Probe connects, greets, applies the TLS rules and authenticates, then says goodbye:
// serve's check at start. A public smtp:// server without STARTTLS (and without
// --smtp-insecure) gives an error that wraps ErrNoSTARTTLS.
func (s *Sender) Probe(ctx context.Context) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	c, done, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Quit(); err != nil {
		return s.fail(ctx, "QUIT", err)
	}
	return nil
}

func (s *Sender) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	d := s.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// connect dials, reads the greeting, says EHLO, starts TLS as the rules say and
// authenticates. done closes the connection.
func (s *Sender) connect(ctx context.Context) (c *smtp.Client, done func(), err error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", s.e.addr())
	if err != nil {
		return nil, nil, fmt.Errorf("mail: connecting to %s: %w", s.e.addr(), err)
	}
	// Every read and write ends by the deadline, and a cancelled context cuts the
	// connection at once.
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	closeAll := func() {
		stop()
		_ = raw.Close()
	}
	conn := raw
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	if s.e.implicitTLS {
		tc := tls.Client(conn, s.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, nil, s.fail(ctx, "TLS", err)
		}
		conn = tc
	}
	c, err = smtp.NewClient(conn, s.e.host)
	if err != nil {
		return nil, nil, s.fail(ctx, "the greeting", err)
	}
	if err := c.Hello(s.hello); err != nil {
		return nil, nil, s.fail(ctx, "EHLO", err)
	}
	if !s.e.implicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tls); err != nil {
				return nil, nil, s.fail(ctx, "STARTTLS", err)
			}
		} else if !s.e.loopback && !s.insecure {
			return nil, nil, fmt.Errorf("mail: %s: %w, so the password and the mail would cross the network in the clear: "+
				"use smtps:// if it takes TLS on port 465, or --smtp-insecure if the network between is yours", s.e.addr(), ErrNoSTARTTLS)
		}
	}
	if s.e.hasAuth {
		if err := c.Auth(s.auth(c)); err != nil {
			return nil, nil, s.fail(ctx, "AUTH", err)
		}
	}
	return c, closeAll, nil
}

// auth picks PLAIN, else LOGIN (Office 365 and some relays offer only LOGIN). The
// TLS rules have been applied already: a clear connection here is a loopback one or
// one the operator allowed.
func (s *Sender) auth(c *smtp.Client) smtp.Auth {
	if ok, mechs := c.Extension("AUTH"); ok {
		ms := strings.Fields(strings.ToUpper(mechs))
		if !contains(ms, "PLAIN") && contains(ms, "LOGIN") {
			return smtp.LoginAuth(s.e.user, s.e.password, s.e.host, true)
		}
	}
	return smtp.PlainAuth("", s.e.user, s.e.password, s.e.host, true)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fail turns err, met at step, into what Send returns: a server's 4xx or 5xx reply a
// *tidings.MailError, anything else a plain error (the context's when it ended).
func (s *Sender) fail(ctx context.Context, step string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 400 && te.Code < 600 {
		return &tidings.MailError{Code: te.Code, Reply: strings.Join(strings.Fields(te.Msg), " ")}
	}
	cause := ctx.Err()
	if cause == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		cause = context.DeadlineExceeded // the connection's deadline is the context's, met first
	}
	if cause != nil {
		return fmt.Errorf("mail: %s at %s: %w (%v)", step, s.e.addr(), cause, err)
	}
	return fmt.Errorf("mail: %s at %s: %w", step, s.e.addr(), err)
}

// helloName is our name in EHLO: the machine's, when it is a domain name.
func helloName() string {
	h, err := os.Hostname()
	if err != nil || !strings.Contains(h, ".") || strings.ContainsAny(h, " \r\n") {
		return "localhost"
	}
	return h
}
