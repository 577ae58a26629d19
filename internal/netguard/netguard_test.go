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

// TestPrivateURL: a URL written with a non-public address or localhost is private; a
// public address, a name, or what does not parse is left to the connection's check.
func TestPrivateURL(t *testing.T) {
	t.Parallel()
	for raw, private := range map[string]bool{
		"http://192.168.1.5/message?token=x": true, "http://127.0.0.1:9/": true, "https://[::1]/x": true,
		"http://localhost:8081/bot1/sendMessage": true, "http://LOCALHOST/": true, "http://api.localhost/": true,
		"http://10.0.0.1/": true, "http://[fe80::1]/": true, "http://100.64.0.1/": true,
		"https://8.8.8.8/": false, "https://push.example.com/message?token=x": false, "::not a url": false,
	} {
		if got := netguard.PrivateURL(raw); got != private {
			t.Errorf("PrivateURL(%q) = %v, want %v", raw, got, private)
		}
	}
}
