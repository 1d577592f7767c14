package safefetch

import "net/netip"

// nonPublic are the ranges besides loopback, private, link-local, multicast and unspecified
// addresses that a fetch never reaches unless its host is listed exactly.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),        // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),    // carrier-grade NAT; Alibaba Cloud metadata (100.100.100.200)
	netip.MustParsePrefix("168.63.129.16/32"), // Azure platform services (wire server)
	netip.MustParsePrefix("192.0.0.0/24"),     // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),    // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),      // reserved, broadcast
	netip.MustParsePrefix("::/96"),            // IPv4-compatible (deprecated): embeds any IPv4 address
	netip.MustParsePrefix("64:ff9b::/96"),     // NAT64: may reach any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),   // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),    // documentation
	netip.MustParsePrefix("fec0::/10"),        // site-local (deprecated)
	netip.MustParsePrefix("2002::/16"),        // 6to4: embeds any IPv4 address
	netip.MustParsePrefix("2001::/32"),        // Teredo
	netip.MustParsePrefix("100::/64"),         // discard
	netip.MustParsePrefix("192.88.99.0/24"),   // 6to4 relay anycast
	netip.MustParsePrefix("198.51.100.0/24"),  // documentation
}

// PublicAddr reports whether ip is a public unicast address: not loopback, private
// (fc00::/7, where AWS's fd00:ec2::254 metadata address is, included), link-local
// (169.254.169.254 included), multicast, unspecified or in one of the special-purpose ranges
// listed above; an IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
