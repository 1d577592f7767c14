package safefetch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Defaults of Config.
const (
	DefaultMaxBytes     = 10 << 20
	DefaultTimeout      = 5 * time.Second
	DefaultMaxRedirects = 3
	defaultIdleConns    = 8
)

// Errors of Get, to be tested with errors.Is. A fetch may also fail with a StatusError, a
// timeout (context.DeadlineExceeded or a net.Error whose Timeout is true) or another network
// error.
var (
	ErrNotAllowed = errors.New("redirect to a host that is not allowed")
	ErrNotPublic  = errors.New("the host resolves to a non-public address")
	ErrTooLarge   = errors.New("too large")
)

// StatusError is a fetch answered with a status other than 2xx.
type StatusError int

func (e StatusError) Error() string { return fmt.Sprintf("status %d", int(e)) }

// Resolver resolves host names; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Fetcher. Zero values take the defaults.
type Config struct {
	// Hosts are the hosts URLs are fetched from: exact names or IP addresses
	// ("cdn.example.com", "127.0.0.1"), or "*.example.com" for any subdomain of example.com.
	// Empty: no URL is fetched. A name that resolves to a non-public address is refused
	// unless it is listed exactly (not by a wildcard).
	Hosts []string
	// AnyPublicHost also allows every other host (a name or an IP address) that resolves only
	// to public addresses: webhooks post to URLs their owners choose, and only the
	// non-public ones need listing (Hosts).
	AnyPublicHost bool
	// MaxBytes is the largest body fetched (DefaultMaxBytes).
	MaxBytes int64
	// Timeout bounds each fetch, redirects included (DefaultTimeout).
	Timeout time.Duration
	// MaxRedirects is how many redirects a fetch follows (DefaultMaxRedirects).
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string
	// Resolver resolves the hosts allowed by a wildcard (net.DefaultResolver).
	Resolver Resolver
	// DialContext connects to an address: an IP address and port for a host allowed by a
	// wildcard, once checked, or the address as it is for a host listed exactly. The default
	// is a net.Dialer whose Control refuses a non-public socket address for the former. Tests
	// replace it (and Resolver) to stand for the internet.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
}

// Fetcher fetches the URLs of allowed hosts (see the package documentation).
type Fetcher struct {
	exact        map[string]bool
	suffixes     []string // ".example.com" for "*.example.com"
	anyPublic    bool
	maxBytes     int64
	timeout      time.Duration
	maxRedirects int
	userAgent    string
	resolver     Resolver
	// dialExact dials a host listed exactly, dialChecked an address whose IP was checked.
	dialExact, dialChecked func(ctx context.Context, network, address string) (net.Conn, error)
	client                 *http.Client
}

// New returns a Fetcher with its own HTTP client, which dials only the addresses it has
// checked and uses no proxy from the environment (a proxy would dial past the checks). It
// returns an error for a host entry that is not a host name, an IP address or "*." followed
// by a host name (no scheme, port or path), or for negative limits.
func New(cfg Config) (*Fetcher, error) {
	if cfg.MaxBytes < 0 || cfg.Timeout < 0 || cfg.MaxRedirects < 0 {
		return nil, errors.New("fetch limits must not be negative")
	}
	f := &Fetcher{
		exact:        map[string]bool{},
		maxBytes:     cmp.Or(cfg.MaxBytes, DefaultMaxBytes),
		timeout:      cmp.Or(cfg.Timeout, DefaultTimeout),
		maxRedirects: cmp.Or(cfg.MaxRedirects, DefaultMaxRedirects),
		userAgent:    cfg.UserAgent,
		resolver:     cfg.Resolver,
		anyPublic:    cfg.AnyPublicHost,
	}
	for _, h := range cfg.Hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		host, wildcard := strings.CutPrefix(h, "*.")
		host, ok := normalizeHost(host)
		if !ok || wildcard && isIP(host) {
			return nil, fmt.Errorf("host %q: want a host name, an IP address or *.domain", h)
		}
		if wildcard {
			f.suffixes = append(f.suffixes, "."+host)
		} else {
			f.exact[host] = true
		}
	}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	f.dialExact, f.dialChecked = cfg.DialContext, cfg.DialContext
	if cfg.DialContext == nil {
		f.dialExact = (&net.Dialer{Timeout: f.timeout}).DialContext
		f.dialChecked = (&net.Dialer{Timeout: f.timeout, Control: controlPublic}).DialContext
	}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           f.dial,
			TLSHandshakeTimeout:   f.timeout,
			ResponseHeaderTimeout: f.timeout,
			MaxIdleConns:          defaultIdleConns,
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: f.checkRedirect,
	}
	return f, nil
}

// AllowsHost reports whether URLs of host may be fetched.
func (f *Fetcher) AllowsHost(host string) bool {
	ok, _ := f.allowed(host)
	return ok
}

// Allows reports whether u is an http(s) URL of an allowed host, without credentials.
func (f *Fetcher) Allows(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Host == "" {
		return false
	}
	return f.AllowsHost(u.Hostname())
}

// Get fetches rawURL within the time and size limits and returns the body and its
// Content-Type. The URL need not be checked with Allows first: a URL of a host that is not
// allowed is refused with ErrNotAllowed. A status other than 2xx is a StatusError, a body
// larger than MaxBytes ErrTooLarge, an empty body an error.
func (f *Fetcher) Get(ctx context.Context, rawURL string) (body []byte, contentType string, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, "", err
	}
	if !f.Allows(req.URL) {
		return nil, "", ErrNotAllowed
	}
	if f.userAgent != "" {
		req.Header.Set("User-Agent", f.userAgent)
	}
	res, err := f.client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, "", StatusError(res.StatusCode)
	}
	if res.ContentLength > f.maxBytes {
		return nil, "", ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, f.maxBytes+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > f.maxBytes {
		return nil, "", ErrTooLarge
	}
	if len(data) == 0 {
		return nil, "", errors.New("empty")
	}
	return data, res.Header.Get("Content-Type"), nil
}

// Post posts body to rawURL with header, within the time limit, following no redirect (a
// webhook's receiver answers where it is), and returns the status it was answered. A URL of a
// host that is not allowed is refused with ErrNotAllowed, as Get refuses it; the answer's body
// is read up to MaxBytes and dropped.
func (f *Fetcher) Post(ctx context.Context, rawURL string, header http.Header, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if !f.Allows(req.URL) {
		return 0, ErrNotAllowed
	}
	req.Header = header.Clone()
	if f.userAgent != "" {
		req.Header.Set("User-Agent", f.userAgent)
	}
	res, err := f.client.Transport.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, f.maxBytes))
	return res.StatusCode, nil
}

// normalizeHost lowercases a host name or IP address (brackets and a final dot dropped) and
// reports whether it is one.
func normalizeHost(h string) (string, bool) {
	h = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), "."))
	if isIP(h) {
		return h, true
	}
	if h == "" || len(h) > 253 {
		return "", false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
		for _, c := range label {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return h, true
}

func isIP(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// allowed reports whether URLs of host may be fetched, and whether host is listed exactly.
func (f *Fetcher) allowed(host string) (ok, exact bool) {
	host, valid := normalizeHost(host)
	if !valid {
		return false, false
	}
	if f.exact[host] {
		return true, true
	}
	if f.anyPublic {
		return true, false // checked when dialled, as a wildcard's hosts are
	}
	if isIP(host) {
		return false, false
	}
	for _, s := range f.suffixes {
		if strings.HasSuffix(host, s) {
			return true, false
		}
	}
	return false, false
}

// dial connects to addr after checking its addresses: a host listed exactly may be anything,
// any other must resolve only to public addresses, and the connection goes to one of the
// addresses checked, as an IP address (not to a second resolution, which could differ).
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ok, exact := f.allowed(host)
	if !ok {
		return nil, ErrNotAllowed
	}
	if exact {
		return f.dialExact(ctx, network, addr)
	}
	ips, err := f.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	for _, ip := range ips {
		if !PublicAddr(ip) {
			return nil, ErrNotPublic
		}
	}
	var lastErr error
	for _, ip := range ips {
		conn, err := f.dialChecked(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// controlPublic is the Control of the dialer of checked addresses: it refuses to connect a
// socket to a non-public address, whatever the address given to the dialer was.
func controlPublic(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	if !PublicAddr(ap.Addr()) {
		return ErrNotPublic
	}
	return nil
}

// checkRedirect follows at most maxRedirects redirects, each to an allowed http(s) URL.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.maxRedirects {
		return fmt.Errorf("more than %d redirects", f.maxRedirects)
	}
	if !f.Allows(req.URL) {
		return ErrNotAllowed
	}
	return nil
}
