// Package netguard tells public internet addresses from the others: the one outbound
// client connects to public addresses only, and the dashboard warns of a webhook
// that points elsewhere.
package netguard

import (
	"net/netip"
	"net/url"
	"strings"
)

// notPublic lists ranges that are not on the public internet beyond what netip's
// predicates say: shared address space (CGNAT), "this network", benchmarking, IETF
// protocol assignments, documentation, NAT64 (well-known and local-use), and the old
// IPv6 site-local range.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("240.0.0.0/4"), netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("fec0::/10"), netip.MustParsePrefix("64:ff9b:1::/48"),
}

// Public reports whether a is an address on the public internet.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// PrivateURL reports whether a URL's host is written as a non-public address or is
// localhost: a webhook target that webhook create (the CLI and the dashboard) refuses
// unless private targets are allowed. A name that resolves to such an address is
// refused by the outbound client when it connects (DNS may change meanwhile).
func PrivateURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && !Public(a)
}
