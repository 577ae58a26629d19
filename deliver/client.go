package deliver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/tidings-dev/tidings/internal/netguard"
)

// Timeout bounds one outbound request, connection to last byte.
const Timeout = 10 * time.Second

// ErrPrivateTarget is returned when a target resolves to an address that is not public.
var ErrPrivateTarget = errors.New("refused: the address is loopback, private, link-local or otherwise not public (run the server with --allow-private-targets to allow it)")

// PublicError is a delivery's error as its owner may see it: it never names the
// server's own resolver or any other address the request did not go to (a DNS failure
// says "lookup example.com on 127.0.0.53:53: no such host"), nor the URL, whose path or
// query may hold a chat service's token (a Telegram bot's, a Gotify app's).
func PublicError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // "Post \"https://…\": …" names the URL
	}
	if errors.Is(err, ErrPrivateTarget) {
		return ErrPrivateTarget.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		switch {
		case dns.IsNotFound:
			return "the host " + dns.Name + " does not exist (DNS)"
		case dns.IsTimeout:
			return "looking up the host " + dns.Name + " timed out (DNS)"
		default:
			return "the host " + dns.Name + " could not be looked up (DNS)"
		}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "the connection was refused"
		}
		if op.Timeout() {
			return "the connection timed out"
		}
		return "the connection failed (" + op.Op + ")"
	}
	if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
		return "no answer within " + Timeout.String()
	}
	return err.Error()
}

// NewClient is the one outbound HTTP client: a timeout on every phase, no redirects,
// no proxy from the environment, and, unless allowPrivate, a check of the address at
// connect time — after DNS, so a public name cannot be pointed at a private address.
func NewClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refused: cannot read the address %q", address)
			}
			if !netguard.Public(ap.Addr()) {
				return ErrPrivateTarget
			}
			return nil
		}
	}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: Timeout,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       60 * time.Second,
	}
	return &http.Client{Transport: transport, Timeout: Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
