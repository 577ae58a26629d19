package deliver_test

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestNotPublicRanges: the ranges the audit found treated as public are not.
func TestNotPublicRanges(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for addr, public := range map[string]bool{
		"fec0::1": false, "feff::1": false, "64:ff9b:1::a00:1": false, "64:ff9b::a00:1": false,
		"10.0.0.1": false, "::ffff:127.0.0.1": false, "100.64.0.1": false,
		"8.8.8.8": true, "2606:4700:4700::1111": true,
	} {
		if got := deliver.Public(netip.MustParseAddr(addr)); got != public {
			t.Errorf("Public(%s) = %v, want %v", addr, got, public)
		}
	}
}

// TestPublicError: what an owner sees of a failed delivery never names the server's
// resolver (the audit saw "lookup … on 127.0.0.53:53").
func TestPublicError(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for _, err := range []error{
		fmt.Errorf("Post: %w", &net.DNSError{Err: "no such host", Name: "hooks.example.com", Server: "127.0.0.53:53", IsNotFound: true}),
		fmt.Errorf("Post: %w", &net.DNSError{Err: "i/o timeout", Name: "hooks.example.com", Server: "10.0.0.2:53", IsTimeout: true}),
		&net.DNSError{Err: "server misbehaving", Name: "hooks.example.com", Server: "[fd00::53]:53"},
	} {
		got := deliver.PublicError(err)
		if strings.Contains(got, "127.0.0.53") || strings.Contains(got, "10.0.0.2") || strings.Contains(got, "fd00") || !strings.Contains(got, "hooks.example.com") {
			t.Errorf("%v shown as %q", err, got)
		}
	}
}
