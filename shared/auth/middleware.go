package auth

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// MaxCacheTTL is the longest an Authenticator trusts a key it has already resolved.
const MaxCacheTTL = 60 * time.Second

// maxCacheEntries bounds the cache; past it the cache is cleared rather than grown.
const maxCacheEntries = 10_000

// KeyFinder finds keys by the SHA-256 of their secret.
type KeyFinder interface {
	// KeyByHash returns the key whose secret hashes to hash, or an errs.CodeNotFound error.
	KeyByHash(ctx context.Context, hash string) (Key, error)
}

// Authenticator resolves bearer keys to principals, with a short in-memory cache.
type Authenticator struct {
	keys KeyFinder
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]cachedKey
	// forgets counts Forget calls: a lookup that read its key before a Forget does not cache
	// it after, where it would trust a revoked key again for a ttl.
	forgets uint64
}

type cachedKey struct {
	key     Key
	fetched time.Time
}

// Option configures an Authenticator.
type Option func(*Authenticator)

// WithClock makes the Authenticator read the time from now instead of time.Now.
func WithClock(now func() time.Time) Option { return func(a *Authenticator) { a.now = now } }

// NewAuthenticator returns an Authenticator that caches keys for ttl, capped at MaxCacheTTL;
// a ttl of zero disables the cache.
func NewAuthenticator(keys KeyFinder, ttl time.Duration, opts ...Option) *Authenticator {
	a := &Authenticator{keys: keys, ttl: min(max(ttl, 0), MaxCacheTTL), now: time.Now, cache: map[string]cachedKey{}}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Authenticate resolves the value of an Authorization header. It returns an errs.CodeUnauthenticated
// error for a missing, malformed, unknown, expired or revoked key.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (Principal, error) {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return Principal{}, errs.Unauthenticated("send the API key as \"Authorization: Bearer <key>\"")
	}
	key, err := a.lookup(ctx, HashKey(strings.TrimSpace(secret)))
	if err != nil {
		return Principal{}, err
	}
	if err := key.Usable(a.now()); err != nil {
		return Principal{}, err
	}
	// A key stored before roles existed has none: it keeps working as DefaultRole.
	role := cmp.Or(key.Role, DefaultRole)
	return Principal{ProjectID: key.ProjectID, KeyID: key.ID, User: key.User, Role: role}, nil
}

// Key returns the key whose secret hashes to hash as Authenticate finds it (from the cache while
// fresh), without checking that it is usable: for a server that checks later requests against a
// key it authenticated earlier (a dashboard session), so that Forget ends that key's use in this
// process too. An unknown key is an errs.CodeUnauthenticated error.
func (a *Authenticator) Key(ctx context.Context, hash string) (Key, error) {
	return a.lookup(ctx, hash)
}

func (a *Authenticator) lookup(ctx context.Context, hash string) (Key, error) {
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[hash]
	forgets := a.forgets
	a.mu.Unlock()
	if ok && now.Sub(c.fetched) < a.ttl {
		return c.key, nil
	}
	key, err := a.keys.KeyByHash(ctx, hash)
	if errs.Is(err, errs.CodeNotFound) {
		return Key{}, errs.Unauthenticated("unknown API key")
	}
	if err != nil {
		return Key{}, err
	}
	if a.ttl > 0 {
		a.mu.Lock()
		if len(a.cache) >= maxCacheEntries {
			clear(a.cache)
		}
		if a.forgets == forgets {
			a.cache[hash] = cachedKey{key: key, fetched: now}
		}
		a.mu.Unlock()
	}
	return key, nil
}

// Forget drops the key whose secret hashes to hash from the cache, so that a key revoked in
// this process is refused here at once. Other processes refuse it when their cached copy is
// older than their ttl.
func (a *Authenticator) Forget(hash string) {
	a.mu.Lock()
	delete(a.cache, hash)
	a.forgets++
	a.mu.Unlock()
}

// Challenge is the WWW-Authenticate header of every 401 (RFC 9110 §11.6.1): a bearer key.
const Challenge = `Bearer realm="plume"`

// Middleware authenticates every request it passes on; others get the 401 error answer. A
// request made in-process on behalf of a caller by a.Delegate is that caller's.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := r.Context().Value(delegatedKey{}).(delegation); ok && d.by == a {
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), d.p)))
			return
		}
		p, err := a.Authenticate(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			if errs.Is(err, errs.CodeUnauthenticated) {
				w.Header().Set("WWW-Authenticate", Challenge)
			}
			web.Error(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}
