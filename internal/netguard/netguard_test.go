package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/tidings-dev/tidings/internal/netguard"
)

// TestNotPublicRanges: the ranges the audit found treated as public are not.
func TestNotPublicRanges(t *testing.T) {
	t.Parallel()
	for addr, public := range map[string]bool{
		"fec0::1": false, "feff::1": false, "64:ff9b:1::a00:1": false, "64:ff9b::a00:1": false,
		"10.0.0.1": false, "::ffff:127.0.0.1": false, "100.64.0.1": false,
		"8.8.8.8": true, "2606:4700:4700::1111": true,
	} {
		if got := netguard.Public(netip.MustParseAddr(addr)); got != public {
			t.Errorf("Public(%s) = %v, want %v", addr, got, public)
		}
	}
}
