package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// Proxy is a reverse proxy on 127.0.0.1 to one loopback target, failing the requests its
// rules fire on. It is safe for concurrent use.
type Proxy struct {
	t   testing.TB
	srv *httptest.Server
	// forward passes a request to the target and its answer back; forwardThenDrop passes the
	// request and drops the answer.
	forward, forwardThenDrop *httputil.ReverseProxy

	mu     sync.Mutex
	rules  []*activeRule // in the order added
	counts map[string]int
	log    []string
}

// activeRule is a rule with the number of requests it has matched since Fail added it.
type activeRule struct {
	Rule
	seen int
	// firedOn are the invocation ids of the requests the rule fired on (Rule.Retries).
	firedOn map[string]bool
}

// errDropped is how forwardThenDrop tells its error handler to drop the connection.
var errDropped = errors.New("faultproxy: answer dropped")

// New starts a proxy to target, the http URL of a server on the loopback interface (DynamoDB
// Local, the embedded S3 server), and closes it when t ends. A target that is not such a URL
// fails t.
//
// Requests are forwarded with their method, path, query, body and headers unchanged, Host
// included, so a request signed (AWS Signature Version 4) for the proxy's URL still verifies
// at the target. The hop-by-hop headers of RFC 9110 section 7.6.1 (Connection, Keep-Alive,
// Transfer-Encoding ...), which the AWS SDK does not sign, belong to each connection and are
// not forwarded as such.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := checkTarget(target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	transport := &http.Transport{
		Proxy:       nil, // never through HTTP_PROXY
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		// Pass bodies through as the target encoded them: no transparent gzip.
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		// Give idle connections up well before a target would: a POST sent on a connection the
		// target has just closed fails, and http.Transport does not send a POST again.
		IdleConnTimeout: 10 * time.Second,
	}
	rewrite := func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme = u.Scheme
		pr.Out.URL.Host = u.Host
		// SigV4 signs the Host header and the client signed the proxy's: keep it. (SetURL
		// would set the target's, and the S3 server would answer SignatureDoesNotMatch.)
		pr.Out.Host = pr.In.Host
	}
	p := &Proxy{t: t, counts: map[string]int{}}
	p.forward = &httputil.ReverseProxy{
		Rewrite:      rewrite,
		Transport:    transport,
		ErrorHandler: p.forwardFailed,
	}
	p.forwardThenDrop = &httputil.ReverseProxy{
		Rewrite:   rewrite,
		Transport: transport,
		ModifyResponse: func(res *http.Response) error {
			drain(res.Body) // the target has answered: the request took effect
			return errDropped
		},
		ErrorHandler: p.forwardFailed,
	}

	// Every request's context ends when the proxy closes, so that a delayed request does not
	// hold Close up.
	ctx, cancel := context.WithCancel(context.Background())
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	p.srv.Start()
	t.Cleanup(func() {
		cancel()
		p.srv.Close()
		transport.CloseIdleConnections()
	})
	return p
}

// checkTarget parses target and checks that it is an http URL of a loopback host with no path.
func checkTarget(target string) (*url.URL, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	if u.Scheme != "http" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("target %q: want http://host:port", target)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		return nil, fmt.Errorf("target %q: not a loopback address", target)
	}
	return u, nil
}

// URL returns the proxy's endpoint, such as "http://127.0.0.1:41234", for a DynamoDB client's
// BaseEndpoint or an S3 client's.
func (p *Proxy) URL() string { return p.srv.URL }

// Fail adds rule after the rules already there. An unusable rule (a negative Nth, a Following
// below Forever, no Fault, a negative Delay) fails the test and is not added.
func (p *Proxy) Fail(rule Rule) {
	p.t.Helper()
	if err := rule.check(); err != nil {
		p.t.Errorf("faultproxy: %v", err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &activeRule{Rule: rule})
}

// Reset removes every rule and forgets every request counted and logged.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
	clear(p.counts)
	p.log = nil
}

// Count returns the number of requests of op (as Op names it) the proxy received since New or
// the last Reset, failed or forwarded; Count(Any) counts them all.
func (p *Proxy) Count(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if op == Any {
		return len(p.log)
	}
	return p.counts[op]
}

// Log returns the operations of the requests the proxy received since New or the last Reset,
// in the order they arrived.
func (p *Proxy) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log)
}

// record counts a request of op, an attempt of the SDK's invocation (its
// Amz-Sdk-Invocation-Id, "" when it has none), and returns the fault of the first rule that
// fires on it.
func (p *Proxy) record(op, invocation string) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[op]++
	p.log = append(p.log, op)
	var fault Fault
	fired := false
	for _, r := range p.rules {
		if r.Op != Any && r.Op != op {
			continue
		}
		if r.Retries && invocation != "" && r.firedOn[invocation] {
			if !fired {
				fault, fired = r.Fault, true
			}
			continue
		}
		r.seen++
		if !fired && r.fires(r.seen) {
			fault, fired = r.Fault, true
			if r.Retries && invocation != "" {
				if r.firedOn == nil {
					r.firedOn = map[string]bool{}
				}
				r.firedOn[invocation] = true
			}
		}
	}
	return fault, fired
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	fault, fired := p.record(Op(r), r.Header.Get("Amz-Sdk-Invocation-Id"))
	if !fired {
		p.forward.ServeHTTP(w, r)
		return
	}
	dynamo := r.Header.Get("X-Amz-Target") != ""
	switch fault.kind {
	case kindThrottle, kindServerError:
		drain(r.Body)
		e := errorFor(fault.kind, dynamo)
		if dynamo {
			e.writeDynamoDB(w)
		} else {
			e.writeS3(w)
		}
	case kindDelay:
		timer := time.NewTimer(fault.delay)
		defer timer.Stop()
		select {
		case <-r.Context().Done(): // the client gave up or the proxy is closing
			drop(w)
		case <-timer.C:
			p.forward.ServeHTTP(w, r)
		}
	case kindDrop:
		drain(r.Body)
		drop(w)
	case kindDropAfterForward:
		p.forwardThenDrop.ServeHTTP(w, r)
	}
}

// forwardFailed answers a request that could not be forwarded, or drops it after forwarding.
func (p *Proxy) forwardFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errDropped) || r.Context().Err() != nil {
		drop(w)
		return
	}
	http.Error(w, "faultproxy: forward to target: "+err.Error(), http.StatusBadGateway)
}

// drop closes the client's connection without an answer.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not an HTTP/1 connection; the proxy's own server only speaks HTTP/1.
		http.Error(w, "faultproxy: cannot drop the connection: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_ = conn.Close()
}
