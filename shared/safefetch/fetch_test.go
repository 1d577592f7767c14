package safefetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		name   string
		ips    []string
		public bool
	}{
		{"public", []string{"93.184.216.34", "2606:4700::1111", "8.8.8.8", "::ffff:93.184.216.34", "1.1.1.1"}, true},
		{"private", []string{"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255", "fc00::1", "fd12:3456::1"}, false},
		{"loopback", []string{"127.0.0.1", "127.5.6.7", "127.255.255.254", "::1"}, false},
		{"link-local", []string{"169.254.0.1", "169.254.255.255", "fe80::1", "febf::1"}, false},
		{"cloud metadata", []string{"169.254.169.254", "fd00:ec2::254", "100.100.100.200", "168.63.129.16", "169.254.170.2"}, false},
		{"unspecified", []string{"0.0.0.0", "::", "0.1.2.3"}, false},
		{"IPv4-mapped IPv6", []string{"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.168.1.1", "::ffff:0.0.0.0", "::ffff:100.100.100.200"}, false},
		{"IPv4 embedded in IPv6", []string{"64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::7f00:1", "2001::1"}, false},
		{"multicast and broadcast", []string{"224.0.0.1", "239.1.2.3", "ff02::1", "255.255.255.255"}, false},
		{"special purpose", []string{"100.64.0.1", "198.18.0.1", "192.0.0.8", "240.0.0.1", "2001:db8::1", "fec0::1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ip := range tt.ips {
				assert.Equal(t, tt.public, PublicAddr(netip.MustParseAddr(ip)), ip)
			}
		})
	}
}

// internet stands for the network outside: a resolver with fixed answers (in order, one per
// lookup, the last one repeated) and a dialer that records the address it is asked to dial and
// connects to the one real target, a loopback test server.
type internet struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups map[string]int
	dialled []string
	target  string // host:port of the test server
}

func newInternet(t *testing.T, h http.Handler) *internet {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &internet{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}, target: strings.TrimPrefix(srv.URL, "http://")}
}

func (n *internet) answer(host string, ips ...string) {
	var a []netip.Addr
	for _, ip := range ips {
		a = append(a, netip.MustParseAddr(ip))
	}
	n.answers[host] = append(n.answers[host], a)
}

func (n *internet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.answers[host]
	if len(a) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(n.lookups[host], len(a)-1)
	n.lookups[host]++
	return a[i], nil
}

func (n *internet) dial(ctx context.Context, network, address string) (net.Conn, error) {
	n.mu.Lock()
	n.dialled = append(n.dialled, address)
	n.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, n.target)
}

func (n *internet) fetcher(t *testing.T, hosts ...string) *Fetcher {
	f, err := New(Config{Hosts: hosts, MaxBytes: 64, Resolver: n, DialContext: n.dial})
	require.NoError(t, err)
	return f
}

// files answers /ok with a small body on a connection that is closed after each response (so
// that every fetch dials), and /redirect?to=URL&n=N with N redirects ending at URL.
func files() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "image/png")
		fmt.Fprint(w, "png bytes")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, strings.Repeat("x", 65)) })
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		to := r.URL.Query().Get("to")
		if n := r.URL.Query().Get("n"); n != "" && n != "1" {
			var k int
			fmt.Sscan(n, &k)
			to = "/redirect?n=" + fmt.Sprint(k-1) + "&to=" + url.QueryEscape(to)
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	return mux
}

func TestGet(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string
		dns   map[string][]string // host -> its addresses
		url   string
		// want is the body fetched, or wantErr the error.
		want    string
		wantErr error
		// wantMsg is a part of the error message when wantErr is nil and an error is wanted.
		wantMsg string
		// dialled are the addresses dialled, the port left out.
		dialled []string
	}{
		{name: "public address of a wildcard host", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/ok", want: "png bytes", dialled: []string{"93.184.216.34"}},
		{name: "exact host: not resolved by the fetcher", hosts: []string{"files.internal"},
			url: "http://files.internal/ok", want: "png bytes", dialled: []string{"files.internal"}},
		{name: "host not allowed", hosts: []string{"*.example.com"}, url: "http://evil.com/ok", wantErr: ErrNotAllowed},
		{name: "subdomain of an exact host not allowed", hosts: []string{"example.com"}, url: "http://a.example.com/ok", wantErr: ErrNotAllowed},
		{name: "IP address not listed", hosts: []string{"*.example.com"}, url: "http://10.0.0.1/ok", wantErr: ErrNotAllowed},
		{name: "credentials in the URL", hosts: []string{"*.example.com"}, url: "http://u:p@cdn.example.com/ok", wantErr: ErrNotAllowed},
		{name: "scheme other than http(s)", hosts: []string{"*.example.com"}, url: "file://cdn.example.com/etc/passwd", wantErr: ErrNotAllowed},
		{name: "loopback", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"127.0.0.1"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "private", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"10.1.2.3"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "IPv6 unique local", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"fd00::7"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "AWS metadata", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"169.254.169.254"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "AWS metadata over IPv6", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"fd00:ec2::254"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "Alibaba metadata", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"100.100.100.200"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "IPv4-mapped loopback", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"::ffff:127.0.0.1"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "IPv4-mapped metadata", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"::ffff:169.254.169.254"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "unspecified", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"0.0.0.0"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "one private address among public ones", hosts: []string{"*.example.com"}, dns: map[string][]string{"a.example.com": {"93.184.216.34", "192.168.1.1"}}, url: "http://a.example.com/ok", wantErr: ErrNotPublic},
		{name: "redirect to a host not allowed", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/redirect?to=" + url.QueryEscape("http://evil.com/ok"), wantErr: ErrNotAllowed, dialled: []string{"93.184.216.34"}},
		{name: "redirect to a private IP address", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/redirect?to=" + url.QueryEscape("http://169.254.169.254/latest/meta-data/"), wantErr: ErrNotAllowed, dialled: []string{"93.184.216.34"}},
		{name: "redirect to an allowed host with a private address", hosts: []string{"*.example.com"},
			dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}, "internal.example.com": {"10.0.0.5"}},
			url: "http://cdn.example.com/redirect?to=" + url.QueryEscape("http://internal.example.com/ok"), wantErr: ErrNotPublic, dialled: []string{"93.184.216.34"}},
		{name: "redirects within the limit", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/redirect?n=3&to=%2Fok", want: "png bytes", dialled: []string{"93.184.216.34", "93.184.216.34", "93.184.216.34", "93.184.216.34"}},
		{name: "too many redirects", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/redirect?n=4&to=%2Fok", wantMsg: "more than 3 redirects"},
		{name: "status", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/missing", wantErr: StatusError(404), dialled: []string{"93.184.216.34"}},
		{name: "too large", hosts: []string{"*.example.com"}, dns: map[string][]string{"cdn.example.com": {"93.184.216.34"}},
			url: "http://cdn.example.com/big", wantErr: ErrTooLarge, dialled: []string{"93.184.216.34"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newInternet(t, files())
			for host, ips := range tt.dns {
				n.answer(host, ips...)
			}
			body, _, err := n.fetcher(t, tt.hosts...).Get(context.Background(), tt.url)
			switch {
			case tt.wantErr != nil:
				assert.ErrorIs(t, err, tt.wantErr)
			case tt.wantMsg != "":
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantMsg)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, string(body))
			}
			var dialled []string
			for _, a := range n.dialled {
				host, _, err := net.SplitHostPort(a)
				require.NoError(t, err)
				dialled = append(dialled, host)
			}
			if tt.wantMsg == "" {
				assert.Equal(t, tt.dialled, dialled, "addresses dialled")
			}
			for _, host := range dialled {
				if ip, err := netip.ParseAddr(host); err == nil {
					assert.True(t, PublicAddr(ip), "dialled %s", ip)
				}
			}
		})
	}
}

// TestGetDNSRebinding: a name that resolves to a public address and then, on the next lookup,
// to a private one (DNS rebinding) is fetched the first time and refused the second, and no
// connection goes to the private address: the connection is made to the address checked, not
// to a second resolution.
func TestGetDNSRebinding(t *testing.T) {
	n := newInternet(t, files())
	n.answer("rebind.example.com", "93.184.216.34")
	n.answer("rebind.example.com", "127.0.0.1")
	f := n.fetcher(t, "*.example.com")

	body, _, err := f.Get(context.Background(), "http://rebind.example.com/ok")
	require.NoError(t, err)
	assert.Equal(t, "png bytes", string(body))
	_, _, err = f.Get(context.Background(), "http://rebind.example.com/ok")
	assert.ErrorIs(t, err, ErrNotPublic)

	require.Len(t, n.dialled, 1)
	host, _, _ := net.SplitHostPort(n.dialled[0])
	assert.Equal(t, "93.184.216.34", host, "the only address dialled is the public one, as an IP address")
	assert.Equal(t, 2, n.lookups["rebind.example.com"], "one lookup per connection")
}

// TestControlPublic: the default dialer checks the address of the socket itself, so that even
// an address that escaped the checks before it is never connected to.
func TestControlPublic(t *testing.T) {
	tests := []struct {
		address string
		wantErr error
	}{
		{"93.184.216.34:443", nil},
		{"[2606:4700::1111]:443", nil},
		{"127.0.0.1:80", ErrNotPublic},
		{"[::1]:80", ErrNotPublic},
		{"169.254.169.254:80", ErrNotPublic},
		{"[::ffff:169.254.169.254]:80", ErrNotPublic},
		{"[fd00:ec2::254]:80", ErrNotPublic},
		{"10.0.0.1:80", ErrNotPublic},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			err := controlPublic("tcp", tt.address, nil)
			if tt.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
	assert.Error(t, controlPublic("tcp", "not an address", nil))
}

// TestDefaultDialerRefusesLoopback: with the default dialer, a wildcard host resolving to the
// loopback test server is refused before any connection, and a host listed exactly reaches it.
func TestDefaultDialerRefusesLoopback(t *testing.T) {
	srv := httptest.NewServer(files())
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	n := &internet{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
	n.answer("local.example.com", "127.0.0.1")

	f, err := New(Config{Hosts: []string{"*.example.com", "127.0.0.1"}, Resolver: n})
	require.NoError(t, err)
	_, _, err = f.Get(context.Background(), "http://local.example.com:"+port+"/ok")
	assert.ErrorIs(t, err, ErrNotPublic)
	body, _, err := f.Get(context.Background(), srv.URL+"/ok")
	require.NoError(t, err)
	assert.Equal(t, "png bytes", string(body))
}

func TestNewHosts(t *testing.T) {
	tests := []struct {
		name    string
		hosts   []string
		ok      bool
		allowed map[string]bool
	}{
		{name: "valid", hosts: []string{"cdn.example.com", " *.Images.Example.org ", "127.0.0.1", "[::1]", ""}, ok: true, allowed: map[string]bool{
			"cdn.example.com": true, "CDN.example.com.": true, "example.com": false, "a.images.example.org": true,
			"images.example.org": false, "127.0.0.1": true, "::1": true, "127.0.0.2": false, "evil.com": false,
		}},
		{name: "scheme", hosts: []string{"https://cdn.example.com"}},
		{name: "port", hosts: []string{"cdn.example.com:443"}},
		{name: "path", hosts: []string{"cdn.example.com/x"}},
		{name: "bare wildcard", hosts: []string{"*"}},
		{name: "wildcard IP", hosts: []string{"*.10.0.0.1"}},
		{name: "empty label", hosts: []string{"a..b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(Config{Hosts: tt.hosts})
			if !tt.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			for host, want := range tt.allowed {
				assert.Equal(t, want, f.AllowsHost(host), host)
			}
		})
	}
	_, err := New(Config{MaxBytes: -1})
	assert.True(t, err != nil && !errors.Is(err, ErrNotAllowed))
}
