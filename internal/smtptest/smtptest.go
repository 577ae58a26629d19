package smtptest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options says how the server behaves. The zero value is a plain server on 127.0.0.1
// without TLS or AUTH that accepts every message.
type Options struct {
	// STARTTLS offers STARTTLS with a self-signed certificate (trust it with CertPool).
	// AUTH is then offered only after STARTTLS, as real submission servers do.
	STARTTLS bool
	// ImplicitTLS speaks TLS from the first byte (smtps://, port 465 style).
	ImplicitTLS bool
	// User and Password, when User is set, make AUTH PLAIN and LOGIN required before
	// MAIL FROM; wrong credentials get 535. Without TLS, AUTH is offered in the clear.
	User, Password string
	// Domain is the name in the greeting; "smtptest.invalid" when empty.
	Domain string
	// Host is the IP address to listen on; 127.0.0.1 when empty. A non-loopback
	// address of the machine stands for a "public" server (the certificate names it).
	Host string
	// DataDelay holds each message this long after the end of its DATA before the
	// server keeps it and replies: a sender killed meanwhile never hears that its
	// message was taken, as when a real server's reply is lost.
	DataDelay time.Duration
}

// Message is one message the server accepted (or, in Attempts, was sent).
type Message struct {
	From string   // envelope MAIL FROM
	To   []string // envelope RCPT TO
	Data []byte   // the raw message as received (dot-unstuffed, CRLF line ends)
	TLS  bool     // the connection was encrypted (STARTTLS or implicit)
	User string   // the authenticated user, "" without AUTH
	// Outcome: "accepted", "refused" (Reply holds the reply) or "hung up".
	Outcome string
	Reply   string
	At      time.Time
}

// Server is a running SMTP server. Its methods are safe for concurrent use.
type Server struct {
	t     testing.TB
	opts  Options
	srv   *smtp.Server
	ln    *listener
	pool  *x509.CertPool
	cert  tls.Certificate
	serve chan struct{}

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every new attempt
	attempts []Message
	refuse   []smtp.SMTPError // replies for the next messages at DATA end
	hangUps  int              // how many next messages get a hang-up mid-DATA
	conns    int
	closed   bool
}

// Start starts a server on 127.0.0.1 (or Options.Host) and a random port; it is closed
// when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{t: t, opts: opts, changed: make(chan struct{}), serve: make(chan struct{})}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
		s.opts.Host = opts.Host
	}
	ip := net.ParseIP(opts.Host)
	if ip == nil {
		t.Fatalf("smtptest: Host %q is not an IP address", opts.Host)
	}
	if opts.STARTTLS || opts.ImplicitTLS {
		s.cert, s.pool = selfSigned(t, ip)
	}
	domain := opts.Domain
	if domain == "" {
		domain = "smtptest.invalid"
	}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = domain
	srv.MaxMessageBytes = 10 << 20
	srv.MaxRecipients = 100
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.ErrorLog = &logger{s: s}
	if s.pool != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{s.cert}, MinVersion: tls.VersionTLS12}
	}
	// A server without any TLS can only take AUTH in the clear.
	srv.AllowInsecureAuth = !opts.STARTTLS && !opts.ImplicitTLS
	raw, err := net.Listen("tcp", net.JoinHostPort(opts.Host, "0"))
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s.srv, s.ln = srv, &listener{Listener: raw, conns: map[net.Conn]struct{}{}}
	var ln net.Listener = s.ln
	if opts.ImplicitTLS {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go func() {
		defer close(s.serve)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(s.Close)
	return s
}

// Addr is the server's address, 127.0.0.1:PORT (or Options.Host's).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the server's port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// URL is a --smtp-url for the server: smtp://user:pass@127.0.0.1:PORT (smtps:// with
// ImplicitTLS; no user part without User).
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.Addr()}
	if s.opts.ImplicitTLS {
		u.Scheme = "smtps"
	}
	if s.opts.User != "" {
		u.User = url.UserPassword(s.opts.User, s.opts.Password)
	}
	return u.String()
}

// CertPool trusts the server's self-signed certificate (nil without TLS). The
// certificate is for 127.0.0.1, ::1, localhost and Options.Host.
func (s *Server) CertPool() *x509.CertPool { return s.pool }

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.attempts {
		if m.Outcome == "accepted" {
			out = append(out, m)
		}
	}
	return out
}

// Attempts returns every message that reached DATA, accepted, refused or hung up on,
// oldest first. A hung-up one holds the part received before the hang-up.
func (s *Server) Attempts() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.attempts...)
}

// Connections is how many connections the server has accepted (sessions begun).
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Wait waits until at least n messages have been accepted and returns them; it fails
// the test after a generous deadline (60 s).
func (s *Server) Wait(t testing.TB, n int) []Message {
	t.Helper()
	return s.wait(t, n, "accepted messages", s.Messages)
}

// WaitAttempts is Wait for Attempts: accepted, refused and hung-up messages.
func (s *Server) WaitAttempts(t testing.TB, n int) []Message {
	t.Helper()
	return s.wait(t, n, "attempts", s.Attempts)
}

func (s *Server) wait(t testing.TB, n int, what string, get func() []Message) []Message {
	t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if got := get(); len(got) >= n {
			return got
		}
		select {
		case <-changed:
		case <-deadline.C:
			got := get()
			t.Fatalf("smtptest: waited 60 s for %d %s, have %d", n, what, len(got))
			return got
		}
	}
}

// Refuse makes the next n messages get the reply "code text" at the end of DATA (the
// message is read in full first, and kept in Attempts). code is 4xx or 5xx.
func (s *Server) Refuse(n, code int, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.refuse = append(s.refuse, smtp.SMTPError{Code: code, EnhancedCode: smtp.NoEnhancedCode, Message: text})
	}
}

// HangUpDuringData makes the server close the connection in the middle of the next n
// messages' DATA, without a reply, as a killed server would.
func (s *Server) HangUpDuringData(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hangUps += n
}

// Close stops the server and waits for its connections to end. Safe to call twice.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	// go-smtp's Close does not wait for the connections' goroutines, and its Shutdown
	// does not end them: stop the listener and cut every connection here (Serve may not
	// have registered the listener with go-smtp yet), then Shutdown waits for them.
	s.ln.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
		s.t.Logf("smtptest: shutdown: %v", err)
	}
	<-s.serve
}

func (s *Server) record(m Message) {
	m.At = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts = append(s.attempts, m)
	close(s.changed)
	s.changed = make(chan struct{})
}

// session is one SMTP session (one connection, reset after STARTTLS).
type session struct {
	s    *Server
	c    *smtp.Conn
	user string
	from string
	to   []string
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	s.mu.Lock()
	s.conns++
	s.mu.Unlock()
	return &session{s: s, c: c}, nil
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.opts.User == "" {
		return nil
	}
	return []string{sasl.Plain, sasl.Login}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if user != ss.s.opts.User || pass != ss.s.opts.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		ss.user = user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, pass string) error {
			if identity != "" && identity != user {
				return errors.New("identity differs from user")
			}
			return check(user, pass)
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.User != "" && ss.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	_, isTLS := ss.c.TLSConnectionState()
	m := Message{From: ss.from, To: append([]string(nil), ss.to...), TLS: isTLS, User: ss.user}
	ss.s.mu.Lock()
	hangUp := ss.s.hangUps > 0
	if hangUp {
		ss.s.hangUps--
	}
	var refuse *smtp.SMTPError
	if !hangUp && len(ss.s.refuse) > 0 {
		e := ss.s.refuse[0]
		ss.s.refuse = ss.s.refuse[1:]
		refuse = &e
	}
	ss.s.mu.Unlock()

	if hangUp {
		// Read a little of the message, then cut the TCP connection without a word.
		buf := make([]byte, 64)
		n, _ := io.ReadAtLeast(r, buf, 1)
		m.Data, m.Outcome = buf[:n], "hung up"
		ss.s.record(m)
		conn := ss.c.Conn()
		if tc, ok := conn.(*tls.Conn); ok {
			conn = tc.NetConn()
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0) // a reset, as a killed process gives
		}
		_ = conn.Close()
		return errors.New("smtptest: hung up during DATA")
	}

	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	time.Sleep(ss.s.opts.DataDelay)
	m.Data = b.Bytes()
	if refuse != nil {
		m.Outcome, m.Reply = "refused", strconv.Itoa(refuse.Code)+" "+refuse.Message
		ss.s.record(m)
		return refuse
	}
	m.Outcome = "accepted"
	ss.s.record(m)
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// loginServer is SASL LOGIN (draft-murchison-sasl-login), which go-sasl has only as a
// client: "Username:", then "Password:".
type loginServer struct {
	check func(user, pass string) error
	step  int
	user  string
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if response != nil { // an initial response is the user name
			l.user, l.step = string(response), 2
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 1:
		l.user, l.step = string(response), 2
		return []byte("Password:"), false, nil
	default:
		return nil, true, l.check(l.user, string(response))
	}
}

// selfSigned makes a certificate for the loopback addresses and its pool.
func selfSigned(t testing.TB, host net.IP) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("smtptest: key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, host},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// logger sends go-smtp's error log to the test log while the server runs.
type logger struct{ s *Server }

func (l *logger) Printf(format string, v ...any) { l.log(fmt.Sprintf(format, v...)) }
func (l *logger) Println(v ...any)               { l.log(fmt.Sprintln(v...)) }

func (l *logger) log(msg string) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if !l.s.closed {
		l.s.t.Logf("smtptest: %s", msg)
	}
}

// listener keeps the accepted connections, so that Close can cut them all.
type listener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = struct{}{}
	return c, nil
}

func (l *listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.Listener.Close()
	for c := range l.conns {
		c.Close()
	}
}
