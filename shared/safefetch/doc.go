// Package safefetch fetches URLs that untrusted input names (an attachment URL in a span)
// without letting that input reach the network the service runs in (server-side request
// forgery).
//
// A Fetcher fetches only http(s) URLs of an allow-list of hosts, follows a few redirects,
// each to an allowed URL, and bounds the time and the bytes of a fetch. A host allowed by a
// wildcard ("*.example.com") must resolve only to public addresses: the name is resolved
// once per connection, every address checked, and the connection made to a checked address
// literally, so that a second resolution answering otherwise (DNS rebinding) is never used.
// The dialer checks the address of the socket itself once more before connecting. A host
// listed exactly (a name or an IP address) may be anything, loopback included: listing it is
// the operator's decision.
//
// Non-public addresses: loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7),
// link-local (169.254/16, fe80::/10, where cloud metadata services answer), multicast,
// unspecified, carrier-grade NAT (100.64/10, Alibaba Cloud's metadata at 100.100.100.200),
// the special-purpose ranges of RFC 6890, IPv6 forms that embed an IPv4 address (NAT64,
// 6to4, Teredo, IPv4-compatible) and IPv4-mapped IPv6 forms of all of these (PublicAddr).
package safefetch
