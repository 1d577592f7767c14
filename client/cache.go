package client

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/plumehq/plume/api"
)

// Defaults of the prompt cache.
const (
	DefaultPromptCacheSize = 512
	DefaultPromptTTL       = 5 * time.Second
	DefaultPromptMaxStale  = time.Minute
)

// PromptCacheConfig configures the prompt cache that GetPrompt and Prompt read through. A
// zero field takes its default.
//
// The cache serves no prompt that may have changed for longer than these rules allow:
//
//   - A version selected by number or by content hash never changes: it is read from the API
//     once and cached until it is evicted (the least recently used entry goes first once Size
//     entries are held) or invalidated.
//   - A tag, or the latest version, moves. An answer fetched less than TTL ago is fresh: it is
//     served without asking the API. From TTL to MaxStale old it is stale: a read gets it and
//     starts a refresh in the background, and the reads after the refresh lands get the new
//     answer. From MaxStale on, a read waits for the API. So no read gets an answer older than
//     MaxStale (save in an outage, below), and under steady traffic a new pin reaches the
//     reads that start about TTL plus a refresh's round trip after it.
//   - At most one request per entry is in flight: concurrent reads of a missing or too old
//     entry, and a refresh, share one request.
//   - A 4xx answer (a 404: the prompt or tag is gone; a refused key) drops the entry, and the
//     read that waits for it, or the next one after a refresh, gets the error.
//   - The stale answer is served in place of an error only when the API cannot answer: a
//     network error, a timeout or a 5xx, after the client's retries. The entry then stays, and
//     until the API answers again reads get it at once, whatever its age, while it is
//     refreshed in the background at most once per TTL: an outage makes at most one read
//     wait.
//   - Client.InvalidatePrompt and Client.InvalidatePrompts drop entries at once; a request
//     in flight then fills nothing.
type PromptCacheConfig struct {
	// Size bounds the number of entries (DefaultPromptCacheSize).
	Size int
	// TTL is how long a tag's or the latest version's answer is fresh (DefaultPromptTTL).
	TTL time.Duration
	// MaxStale is the age of an answer from which a read waits for the API rather than
	// serving it and refreshing it in the background (DefaultPromptMaxStale; at least TTL).
	MaxStale time.Duration
}

// WithPromptCache configures the prompt cache.
func WithPromptCache(cfg PromptCacheConfig) Option { return func(c *Client) { c.prompt.cfg = cfg } }

// WithoutPromptCache turns the prompt cache off: every GetPrompt and Prompt asks the API.
func WithoutPromptCache() Option { return func(c *Client) { c.prompt.off = true } }

// withPromptClock sets the prompt cache's clock (tests).
func withPromptClock(now func() time.Time) Option { return func(c *Client) { c.prompt.now = now } }

// InvalidatePrompt drops every cached answer about prompt slug.
func (c *Client) InvalidatePrompt(slug string) { c.prompt.cache.invalidate(slug) }

// InvalidatePrompts drops every cached prompt.
func (c *Client) InvalidatePrompts() { c.prompt.cache.invalidate("") }

// promptState is the Client's prompt helper state (prompthelper.go, cache.go).
type promptState struct {
	cfg        PromptCacheConfig
	off        bool
	now        func() time.Time
	style      api.LinkageStyle
	defaultTag string
	cache      *promptCache
}

// initPrompts builds the prompt cache and reads the default tag, once, in New.
func (c *Client) initPrompts() {
	c.prompt.defaultTag = defaultPromptTag(c.getenv)
	now := c.prompt.now
	if now == nil {
		now = time.Now
	}
	cfg := c.prompt.cfg
	if cfg.Size <= 0 {
		cfg.Size = DefaultPromptCacheSize
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultPromptTTL
	}
	if cfg.MaxStale <= 0 {
		cfg.MaxStale = DefaultPromptMaxStale
	}
	cfg.MaxStale = max(cfg.MaxStale, cfg.TTL)
	c.prompt.cache = &promptCache{
		cfg: cfg, off: c.prompt.off, now: now, fetch: c.fetchPrompt,
		entries: map[promptKey]*list.Element{}, flights: map[promptKey]*promptFlight{},
	}
}

// promptKey names one cacheable read: a prompt and how its version is selected.
type promptKey struct {
	slug string
	kind promptKeyKind
	n    int    // kindVersion: the number
	s    string // kindTag: the tag; kindHash: the hash
	// session and user are kindTag's sticky ids: a split tag answers each its own version.
	session, user string
}

type promptKeyKind uint8

const (
	kindLatest  promptKeyKind = iota // GET /v1/tasks/{slug}/prompt/latest
	kindTag                          // GET /v1/prompts/{slug}?tag=
	kindVersion                      // GET /v1/prompts/{slug}?version=
	kindHash                         // GET /v1/tasks/{slug}/prompt/versions/by-hash/{hash}
)

// immutable reports whether the answer of k can never change.
func (k promptKey) immutable() bool { return k.kind == kindVersion || k.kind == kindHash }

func (k promptKey) String() string {
	switch k.kind {
	case kindTag:
		return fmt.Sprintf("tag %q of prompt %q", k.s, k.slug)
	case kindVersion:
		return "version " + strconv.Itoa(k.n) + " of prompt " + strconv.Quote(k.slug)
	case kindHash:
		return fmt.Sprintf("version %s of prompt %q", k.s, k.slug)
	}
	return fmt.Sprintf("latest version of prompt %q", k.slug)
}

// fetchPrompt asks the API for k.
func (c *Client) fetchPrompt(ctx context.Context, k promptKey) (api.PromptVersion, error) {
	switch k.kind {
	case kindTag:
		return c.PromptVersion(ctx, k.slug, PromptSelector{Tag: k.s, SessionID: k.session, UserID: k.user})
	case kindVersion:
		return c.PromptVersion(ctx, k.slug, PromptSelector{Version: k.n})
	case kindHash:
		return c.PromptVersionByHash(ctx, k.slug, k.s)
	}
	return c.LatestPromptVersion(ctx, k.slug)
}

// isFault reports whether err says that the API could not answer (a network error, a timeout,
// a 5xx, an unreadable answer) rather than answering no (a 4xx): only a fault lets a stale
// prompt, or GetPrompt's fallback, be served. A canceled call is neither.
func isFault(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status >= 500
	}
	return !errors.Is(err, context.Canceled)
}

// promptCache is a bounded LRU of API answers with the rules of PromptCacheConfig. Requests
// run in their own goroutine, detached from the reader's cancellation and bounded by the
// client's timeout, so that a reader who gives up does not fail the others sharing the
// request.
type promptCache struct {
	cfg   PromptCacheConfig
	off   bool
	now   func() time.Time
	fetch func(context.Context, promptKey) (api.PromptVersion, error)

	mu      sync.Mutex
	entries map[promptKey]*list.Element // of *promptEntry
	lru     list.List                   // most recently used first
	flights map[promptKey]*promptFlight
	// epoch counts invalidations: a request started before the last one fills nothing.
	epoch uint64
	// background counts the refreshes in flight, for tests to wait on.
	background sync.WaitGroup
	// joined, when set (tests), is called when a read joins a request in flight.
	joined func(promptKey)
}

type promptEntry struct {
	key     promptKey
	v       api.PromptVersion
	fetched time.Time
	// faulted is when a request for the entry last found the API unable to answer (zero:
	// the last one succeeded).
	faulted time.Time
}

// promptFlight is one request in flight; v and err are set before done is closed.
type promptFlight struct {
	done  chan struct{}
	epoch uint64
	v     api.PromptVersion
	err   error
}

// get returns the answer to k by the rules of PromptCacheConfig.
func (pc *promptCache) get(ctx context.Context, k promptKey) (api.PromptVersion, error) {
	if pc.off {
		return pc.fetch(ctx, k)
	}
	var stale api.PromptVersion
	var hasStale bool
	pc.mu.Lock()
	if el, ok := pc.entries[k]; ok {
		e := el.Value.(*promptEntry)
		pc.lru.MoveToFront(el)
		now := pc.now()
		v, age := e.v, now.Sub(e.fetched)
		switch {
		case k.immutable() || age < pc.cfg.TTL:
			pc.mu.Unlock()
			return v, nil
		case age < pc.cfg.MaxStale || !e.faulted.IsZero():
			if pc.flights[k] == nil && (e.faulted.IsZero() || now.Sub(e.faulted) >= pc.cfg.TTL) {
				pc.start(ctx, k, true)
			}
			pc.mu.Unlock()
			return v, nil
		}
		stale, hasStale = v, true
	}
	f := pc.flights[k]
	if f == nil {
		f = pc.start(ctx, k, false)
	} else if pc.joined != nil {
		pc.joined(k)
	}
	pc.mu.Unlock()

	err := error(nil)
	select {
	case <-f.done:
		if f.err == nil {
			return f.v, nil
		}
		err = f.err
	case <-ctx.Done():
		err = fmt.Errorf("client: read the %s: %w", k, context.Cause(ctx))
	}
	if hasStale && isFault(err) {
		return stale, nil
	}
	return api.PromptVersion{}, err
}

// start sends the request for k; pc.mu is held.
func (pc *promptCache) start(ctx context.Context, k promptKey, background bool) *promptFlight {
	f := &promptFlight{done: make(chan struct{}), epoch: pc.epoch}
	pc.flights[k] = f
	if background {
		pc.background.Add(1)
	}
	go func() {
		if background {
			defer pc.background.Done()
		}
		v, err := pc.fetch(context.WithoutCancel(ctx), k)
		pc.mu.Lock()
		f.v, f.err = v, err
		if pc.flights[k] == f {
			delete(pc.flights, k)
		}
		if f.epoch == pc.epoch {
			switch {
			case err == nil:
				pc.store(k, v)
			case !isFault(err):
				pc.drop(k)
			default:
				if el, ok := pc.entries[k]; ok {
					el.Value.(*promptEntry).faulted = pc.now()
				}
			}
		}
		pc.mu.Unlock()
		close(f.done)
	}()
	return f
}

// put caches v as the answer to k.
func (pc *promptCache) put(k promptKey, v api.PromptVersion) {
	if pc.off {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.store(k, v)
}

// store caches v as the answer to k, fetched now, evicting the least recently used entries
// beyond the size; pc.mu is held.
func (pc *promptCache) store(k promptKey, v api.PromptVersion) {
	now := pc.now()
	if el, ok := pc.entries[k]; ok {
		e := el.Value.(*promptEntry)
		e.v, e.fetched, e.faulted = v, now, time.Time{}
		pc.lru.MoveToFront(el)
		return
	}
	pc.entries[k] = pc.lru.PushFront(&promptEntry{key: k, v: v, fetched: now})
	for pc.lru.Len() > pc.cfg.Size {
		pc.drop(pc.lru.Back().Value.(*promptEntry).key)
	}
}

// drop forgets the answer to k; pc.mu is held.
func (pc *promptCache) drop(k promptKey) {
	if el, ok := pc.entries[k]; ok {
		pc.lru.Remove(el)
		delete(pc.entries, k)
	}
}

// invalidate drops the entries of prompt slug ("": all) and forgets their requests in flight,
// which then fill nothing.
func (pc *promptCache) invalidate(slug string) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.epoch++
	for k := range pc.entries {
		if slug == "" || k.slug == slug {
			pc.drop(k)
		}
	}
	for k := range pc.flights {
		if slug == "" || k.slug == slug {
			delete(pc.flights, k)
		}
	}
}
