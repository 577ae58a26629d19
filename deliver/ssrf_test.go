package deliver_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

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
