package mail

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
)

// Config is the mail settings of serve and of the CLI's mail commands.
type Config struct {
	// URL is --smtp-url: smtp://[USER:PASSWORD@]HOST[:PORT] (STARTTLS, port 587) or
	// smtps://… (TLS from the first byte, port 465).
	URL string
	// From is --mail-from: the sender, "tidings@example.com" or "Tidings <tidings@example.com>".
	From string
	// Insecure is --smtp-insecure: an smtp:// server need not offer STARTTLS, and its
	// certificate is not verified.
	Insecure bool
	// RootCAs verifies the server's certificate; nil: the system's roots.
	RootCAs *x509.CertPool
}

// Schemes and their default ports.
const (
	SchemeSTARTTLS = "smtp"  // port 587, STARTTLS
	SchemeTLS      = "smtps" // port 465, implicit TLS
)

// endpoint is a checked Config.
type endpoint struct {
	host, port     string
	implicitTLS    bool
	user, password string
	hasAuth        bool
	loopback       bool
	from           *mail.Address
}

// Check validates the settings; each error names its flag.
func (c Config) Check() error {
	_, err := c.endpoint()
	return err
}

func (c Config) endpoint() (*endpoint, error) {
	if strings.TrimSpace(c.URL) == "" {
		return nil, errors.New("--smtp-url is missing: smtp://USER:PASSWORD@HOST:587 or smtps://USER:PASSWORD@HOST:465")
	}
	u, err := url.Parse(strings.TrimSpace(c.URL))
	if err != nil {
		// url.Parse's error repeats the URL, password and all: say less.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("--smtp-url is not a URL (%v): use smtp://USER:PASSWORD@HOST:587 or smtps://USER:PASSWORD@HOST:465", err)
	}
	e := &endpoint{}
	switch strings.ToLower(u.Scheme) {
	case SchemeSTARTTLS:
		e.port = "587"
	case SchemeTLS:
		e.port, e.implicitTLS = "465", true
	case "":
		return nil, errors.New("--smtp-url has no scheme: use smtp://HOST:587 (STARTTLS) or smtps://HOST:465 (TLS)")
	default:
		return nil, fmt.Errorf("--smtp-url: unknown scheme %q: use smtp:// (STARTTLS, port 587) or smtps:// (TLS, port 465)", u.Scheme)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, fmt.Errorf("--smtp-url has no host: %s://USER:PASSWORD@HOST:%s", u.Scheme, e.port)
	}
	e.host = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--smtp-url: port %q is not a port number", p)
		}
		e.port = p
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("--smtp-url takes no path or query: smtp://USER:PASSWORD@HOST:PORT")
	}
	if u.User != nil {
		e.user = u.User.Username()
		e.password, e.hasAuth = u.User.Password()
		if e.user == "" {
			return nil, errors.New("--smtp-url has a password but no user name")
		}
		e.hasAuth = true
	}
	e.loopback = isLoopback(e.host)

	from := strings.TrimSpace(c.From)
	if from == "" {
		return nil, errors.New("--mail-from is missing: the sender's address, like tidings@example.com or \"Tidings <tidings@example.com>\"")
	}
	a, err := mail.ParseAddress(from)
	if err != nil || !strings.Contains(a.Address, "@") {
		return nil, fmt.Errorf("--mail-from %q is not an address: use tidings@example.com or \"Tidings <tidings@example.com>\"", from)
	}
	e.from = a
	return e, nil
}

// addr is HOST:PORT.
func (e *endpoint) addr() string { return net.JoinHostPort(e.host, e.port) }

// isLoopback tells whether host is this machine: localhost (and its subdomains, RFC
// 6761) or a loopback address. Only such a server may skip STARTTLS without
// --smtp-insecure: nothing between us and it can read the password.
func isLoopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
