package clientip

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	for _, c := range []struct {
		remote, xff, want string
		trusted           []netip.Prefix
	}{
		{"203.0.113.9:5000", "198.51.100.1", "203.0.113.9", trusted},                   // untrusted peer: header ignored
		{"127.0.0.1:5000", "198.51.100.1", "198.51.100.1", trusted},                    // trusted proxy
		{"127.0.0.1:5000", "6.6.6.6, 198.51.100.1, 10.1.2.3", "198.51.100.1", trusted}, // right-most untrusted hop
		{"127.0.0.1:5000", "198.51.100.1", "127.0.0.1", nil},                           // no trusted proxies configured
		{"127.0.0.1:5000", "garbage", "127.0.0.1", trusted},
		{"[::ffff:127.0.0.1]:5000", "198.51.100.7", "198.51.100.7", trusted},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := Of(r, c.trusted).String(); got != c.want {
			t.Errorf("remote %s xff %q: %s, want %s", c.remote, c.xff, got, c.want)
		}
	}
}
