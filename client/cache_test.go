package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// proxyMode is how an apiProxy answers.
type proxyMode int

const (
	proxyPass        proxyMode = iota // to the API
	proxyUnavailable                  // 503, as a load balancer in trouble answers
	proxyHangUp                       // the connection closed without an answer
	proxyGone                         // the API's own 404: the request names a prompt that does not exist
	proxyBadKey                       // the API's own 401: the request carries a key that does not exist
)

// apiProxy stands between a client and the whole API: it counts the requests by method and
// URL, can be switched to fail them, and can hold them until released.
type apiProxy struct {
	api *apitest.API
	url string

	mu     sync.Mutex
	counts map[string]int
	mode   proxyMode
	hold   chan struct{} // when not nil, requests wait for it to be closed
}

// promptAPI runs the whole API (DynamoDB Local) behind an apiProxy and returns a client of
// tenant A through it, built with opts.
func promptAPI(t testing.TB, opts ...Option) (*apiProxy, *Client) {
	t.Helper()
	p := &apiProxy{api: apitest.New(t, apitest.Options{}), counts: map[string]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p, p.client(t, opts...)
}

// client is another client of tenant A through p, with a cache of its own.
func (p *apiProxy) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	base := []Option{WithBaseURL(p.url), WithAPIKey(p.api.A.Key), WithProject(p.api.A.ProjectID), WithEnv(func(string) string { return "" })}
	c, err := New(append(base, opts...)...)
	require.NoError(t, err)
	return c
}

func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.counts[r.Method+" "+r.URL.RequestURI()]++
	mode, hold := p.mode, p.hold
	p.mu.Unlock()
	if hold != nil {
		<-hold
	}
	switch mode {
	case proxyUnavailable:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try again","request_id":"proxy"}}`))
		return
	case proxyHangUp:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	case proxyGone:
		r = r.Clone(r.Context())
		r.URL.Path = "/v1/prompts/no-such-prompt"
		r.URL.RawPath = ""
	case proxyBadKey:
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer plm_not_a_key_at_all_0123456789")
	}
	p.api.Handler.ServeHTTP(w, r)
}

// setMode switches how p answers.
func (p *apiProxy) setMode(m proxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
}

// holdRequests makes the requests wait until the returned function is called (once).
func (p *apiProxy) holdRequests(t testing.TB) (release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hold := make(chan struct{})
	p.hold = hold
	once := sync.OnceFunc(func() {
		p.mu.Lock()
		p.hold = nil
		p.mu.Unlock()
		close(hold)
	})
	t.Cleanup(once)
	return once
}

// take returns the requests counted since the last take, and forgets them.
func (p *apiProxy) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.counts
	p.counts = map[string]int{}
	return out
}

// newPromptClock is the prompt cache's clock in tests: it moves only when told.
func newPromptClock() *apitest.Clock {
	return apitest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// waitRefreshes waits for the background refreshes started so far to land.
func (pc *promptCache) waitRefreshes() { pc.background.Wait() }

// publishPrompt ensures versions of prompt slug with contents, in order. EnsurePromptVersion
// does not go through the prompt cache.
func publishPrompt(t testing.TB, c *Client, slug string, contents ...string) []api.PromptVersion {
	t.Helper()
	var out []api.PromptVersion
	for _, content := range contents {
		v, err := c.EnsurePromptVersion(context.Background(), slug, api.EnsureVersionRequest{Content: &content})
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

// pinPrompt points tag of prompt slug at version.
func pinPrompt(t testing.TB, c *Client, slug, tag string, version int) {
	t.Helper()
	_, err := c.PinTag(context.Background(), slug, tag, version)
	require.NoError(t, err)
}

const (
	getLatest     = "GET /v1/prompts/support-bot?tag=latest"
	getProduction = "GET /v1/prompts/support-bot?tag=production"
)

// TestPromptCacheImmutable: a version by number or hash is read from the API once, however
// much time passes.
func TestPromptCacheImmutable(t *testing.T) {
	clock := newPromptClock()
	p, c := promptAPI(t, withPromptClock(clock.Now))
	vs := publishPrompt(t, c, "support-bot", "First.", "Second.")
	ctx := context.Background()
	p.take()

	for range 3 {
		got, err := c.GetPrompt(ctx, "support-bot", &GetPromptOptions{Version: 1})
		require.NoError(t, err)
		assert.Equal(t, "First.", got.Content)
		_, err = c.Prompt(ctx, PromptRequest{Name: "support-bot", From: vs[1].ContentHash})
		require.NoError(t, err)
		clock.Add(24 * time.Hour)
	}
	assert.Equal(t, map[string]int{
		"GET /v1/prompts/support-bot?version=1":                                  1,
		"GET /v1/tasks/support-bot/prompt/versions/by-hash/" + vs[1].ContentHash: 1,
	}, p.take())
}

// TestPromptCacheTagRefresh: a tag is served from the cache within the TTL; the first read
// after it serves the cached version and refreshes it in the background, so that the next
// read sees a new pin; past MaxStale a read waits for the API.
func TestPromptCacheTagRefresh(t *testing.T) {
	clock := newPromptClock()
	p, c := promptAPI(t, withPromptClock(clock.Now), WithPromptCache(PromptCacheConfig{TTL: 5 * time.Second, MaxStale: time.Minute}))
	publishPrompt(t, c, "support-bot", "First.", "Second.")
	pinPrompt(t, c, "support-bot", "production", 1)
	ctx := context.Background()
	read := func() int {
		t.Helper()
		got, err := c.GetPrompt(ctx, "support-bot", &GetPromptOptions{Tag: "production"})
		require.NoError(t, err)
		assert.Equal(t, "production", got.Tag)
		return got.Version
	}
	p.take()

	assert.Equal(t, 1, read())
	pinPrompt(t, c, "support-bot", "production", 2)
	clock.Add(5*time.Second - time.Nanosecond)
	assert.Equal(t, 1, read(), "within the TTL: the cached pin")
	assert.Equal(t, map[string]int{getProduction: 1}, requestsOf(p.take(), getProduction))

	clock.Add(time.Nanosecond)
	assert.Equal(t, 1, read(), "at the TTL: the cached pin, once, while it is refreshed")
	c.prompt.cache.waitRefreshes()
	assert.Equal(t, 2, read(), "the refreshed pin")
	assert.Equal(t, map[string]int{getProduction: 1}, requestsOf(p.take(), getProduction), "one refresh")

	pinPrompt(t, c, "support-bot", "production", 1)
	clock.Add(time.Minute)
	assert.Equal(t, 1, read(), "past MaxStale: read from the API at once")
	assert.Equal(t, map[string]int{getProduction: 1}, requestsOf(p.take(), getProduction))
}

// requestsOf keeps the counts of keys (the pins of the tests go through the proxy too).
func requestsOf(counts map[string]int, keys ...string) map[string]int {
	out := map[string]int{}
	for _, k := range keys {
		if n := counts[k]; n > 0 {
			out[k] = n
		}
	}
	return out
}

// TestPromptCacheNotFound: a 404 on a refresh drops the entry, and the next read gets the 404;
// past MaxStale the read gets it at once.
func TestPromptCacheNotFound(t *testing.T) {
	clock := newPromptClock()
	p, c := promptAPI(t, withPromptClock(clock.Now))
	publishPrompt(t, c, "support-bot", "First.")
	ctx := context.Background()
	_, err := c.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err)

	p.setMode(proxyGone)
	clock.Add(DefaultPromptTTL)
	got, err := c.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err, "served while refreshed")
	assert.Equal(t, "First.", got.Content)
	c.prompt.cache.waitRefreshes()
	_, err = c.GetPrompt(ctx, "support-bot", nil)
	assert.ErrorIs(t, err, ErrPromptNotFound, "the entry was dropped: the read asks the API")
	assert.ErrorIs(t, err, ErrNotFound)

	p.setMode(proxyPass)
	_, err = c.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err)
	p.setMode(proxyGone)
	clock.Add(DefaultPromptMaxStale)
	_, err = c.GetPrompt(ctx, "support-bot", nil)
	assert.ErrorIs(t, err, ErrPromptNotFound, "past MaxStale")
}

// TestPromptCacheFaults: when the API cannot answer (a 5xx, a connection closed), the stale
// version is served, however old, and refreshed in the background at most once per TTL until
// the API answers again; a 4xx is never answered with it.
func TestPromptCacheFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault proxyMode
	}{
		{"503", proxyUnavailable},
		{"connection closed", proxyHangUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newPromptClock()
			p, c := promptAPI(t, withPromptClock(clock.Now), WithRetries(0))
			publishPrompt(t, c, "support-bot", "First.")
			ctx := context.Background()
			read := func(want, msg string) {
				t.Helper()
				got, err := c.GetPrompt(ctx, "support-bot", nil)
				require.NoError(t, err, msg)
				assert.Equal(t, want, got.Content, msg)
			}
			read("First.", "cached")

			p.setMode(tt.fault)
			clock.Add(DefaultPromptMaxStale)
			p.take()
			read("First.", "past MaxStale, the read waits for the API, which cannot answer: stale")
			assert.NotEmpty(t, p.take())
			read("First.", "served at once after the fault")
			assert.Empty(t, p.take(), "no request within the TTL after the fault")
			clock.Add(DefaultPromptTTL)
			read("First.", "a TTL after the fault: served, refreshed in the background")
			c.prompt.cache.waitRefreshes()
			assert.NotEmpty(t, p.take())

			_, err := c.GetPrompt(ctx, "support-bot", &GetPromptOptions{Version: 1})
			require.Error(t, err, "nothing cached: the fault is the answer")
			got, err := c.GetPrompt(ctx, "support-bot", &GetPromptOptions{Version: 1, Fallback: "Offline."})
			require.NoError(t, err)
			assert.Equal(t, ResolvedPrompt{Content: "Offline.", Source: SourceFallback}, got)

			p.setMode(proxyPass)
			publishPrompt(t, c, "support-bot", "Second.")
			read("First.", "the API back, within a TTL of the last fault")
			clock.Add(DefaultPromptTTL)
			read("First.", "refreshed in the background")
			c.prompt.cache.waitRefreshes()
			read("Second.", "refreshed")

			p.setMode(tt.fault)
			clock.Add(DefaultPromptTTL)
			read("Second.", "stale, the refresh fails")
			c.prompt.cache.waitRefreshes()
			read("Second.", "the failed refresh kept the entry")

			p.setMode(proxyPass)
			c.InvalidatePrompts()
			read("Second.", "read again, the API back")
			p.setMode(proxyBadKey)
			clock.Add(DefaultPromptMaxStale)
			_, err = c.GetPrompt(ctx, "support-bot", nil)
			assert.ErrorIs(t, err, ErrUnauthenticated, "a 4xx is never answered with the stale version")
			p.setMode(proxyPass)
		})
	}
}

// TestPromptCacheSingleflight: concurrent reads of a missing entry share one request, and
// stale reads start one refresh.
func TestPromptCacheSingleflight(t *testing.T) {
	clock := newPromptClock()
	p, c := promptAPI(t, withPromptClock(clock.Now))
	publishPrompt(t, c, "support-bot", "First.")
	joined := make(chan promptKey, 16)
	c.prompt.cache.joined = func(k promptKey) { joined <- k }
	ctx := context.Background()
	p.take()

	release := p.holdRequests(t)
	const readers = 8
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			got, err := c.GetPrompt(ctx, "support-bot", nil)
			assert.NoError(t, err)
			assert.Equal(t, "First.", got.Content)
		})
	}
	for range readers - 1 {
		<-joined
	}
	release()
	wg.Wait()
	assert.Equal(t, map[string]int{getLatest: 1}, p.take())

	release = p.holdRequests(t)
	clock.Add(DefaultPromptTTL)
	for range 3 {
		_, err := c.GetPrompt(ctx, "support-bot", nil)
		require.NoError(t, err, "stale, served at once while the refresh is held")
	}
	release()
	c.prompt.cache.waitRefreshes()
	assert.Equal(t, map[string]int{getLatest: 1}, p.take(), "one refresh")
}

// TestInvalidatePrompt: invalidation drops the entries of a prompt, or all, at once, and a
// refresh in flight then fills nothing.
func TestInvalidatePrompt(t *testing.T) {
	clock := newPromptClock()
	p, c := promptAPI(t, withPromptClock(clock.Now))
	publishPrompt(t, c, "support-bot", "First.")
	publishPrompt(t, c, "other-bot", "Other.")
	ctx := context.Background()
	readAll := func() {
		t.Helper()
		for _, o := range []GetPromptOptions{{}, {Version: 1}} {
			for _, slug := range []string{"support-bot", "other-bot"} {
				_, err := c.GetPrompt(ctx, slug, &o)
				require.NoError(t, err)
			}
		}
	}
	readAll()
	p.take()

	publishPrompt(t, c, "support-bot", "Second.")
	c.InvalidatePrompt("support-bot")
	got, err := c.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err)
	assert.Equal(t, "Second.", got.Content, "read again at once")
	readAll()
	assert.Equal(t, map[string]int{getLatest: 1, "GET /v1/prompts/support-bot?version=1": 1}, requestsOf(p.take(),
		getLatest, "GET /v1/prompts/support-bot?version=1", "GET /v1/prompts/other-bot?tag=latest", "GET /v1/prompts/other-bot?version=1"))

	c.InvalidatePrompts()
	readAll()
	assert.Len(t, requestsOf(p.take(), getLatest, "GET /v1/prompts/support-bot?version=1",
		"GET /v1/prompts/other-bot?tag=latest", "GET /v1/prompts/other-bot?version=1"), 4, "every entry read again")

	release := p.holdRequests(t)
	clock.Add(DefaultPromptTTL)
	_, err = c.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err)
	c.InvalidatePrompt("support-bot")
	release()
	c.prompt.cache.waitRefreshes()
	p.take()
	_, err = c.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{getLatest: 1}, p.take(), "the refresh in flight at the invalidation filled nothing")
}

// TestPromptCacheLRU: beyond Size entries the least recently used goes first.
func TestPromptCacheLRU(t *testing.T) {
	p, c := promptAPI(t, WithPromptCache(PromptCacheConfig{Size: 2}))
	publishPrompt(t, c, "support-bot", "One.", "Two.", "Three.")
	ctx := context.Background()
	p.take()
	steps := []struct {
		version int
		fetched bool
	}{
		{1, true}, {2, true}, {3, true}, // 1 evicted
		{3, false}, {2, false}, // 3 is now the least recently used
		{1, true}, // 3 evicted
		{2, false}, {3, true},
	}
	for i, s := range steps {
		_, err := c.GetPrompt(ctx, "support-bot", &GetPromptOptions{Version: s.version})
		require.NoError(t, err)
		n := p.take()["GET /v1/prompts/support-bot?version="+strconv.Itoa(s.version)]
		assert.Equal(t, s.fetched, n == 1, "step %d: version %d", i, s.version)
	}
}

// TestPromptCacheOff: without the cache, or with NoCache, every read asks the API.
func TestPromptCacheOff(t *testing.T) {
	p, c := promptAPI(t, WithoutPromptCache())
	publishPrompt(t, c, "support-bot", "First.")
	cached := p.client(t)
	ctx := context.Background()
	p.take()
	for range 2 {
		_, err := c.GetPrompt(ctx, "support-bot", nil)
		require.NoError(t, err)
		_, err = cached.GetPrompt(ctx, "support-bot", &GetPromptOptions{NoCache: true})
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]int{getLatest: 4}, p.take())
	_, err := cached.GetPrompt(ctx, "support-bot", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{getLatest: 1}, p.take(), "NoCache filled nothing")
}

// BenchmarkGetPromptCached is a cache hit: no request, and no allocation.
func BenchmarkGetPromptCached(b *testing.B) {
	_, c := promptAPI(b, WithPromptCache(PromptCacheConfig{TTL: time.Hour, MaxStale: time.Hour}))
	publishPrompt(b, c, "support-bot", "You help with {{product}}.")
	ctx := context.Background()
	for _, bb := range []struct {
		name string
		opts *GetPromptOptions
	}{
		{"tag", nil},
		{"version", &GetPromptOptions{Version: 1}},
	} {
		_, err := c.GetPrompt(ctx, "support-bot", bb.opts)
		require.NoError(b, err)
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.GetPrompt(ctx, "support-bot", bb.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("prompt", func(b *testing.B) {
		req := PromptRequest{Name: "support-bot", From: FromLatest, Variables: map[string]string{"product": "Plume"}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Prompt(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
