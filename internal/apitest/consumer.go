package apitest

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plumehq/plume/shared/ddb"
)

// consumer keeps what the change stream's consumer keeps (app.Env.StreamConsumer: the trace and
// session aggregates, the rollups, the list index, the feedback index, the signals' join) up to
// date with what the API wrote, as RollupFunction does in a deployment a second or so after each
// write: before a request that follows a write, it applies the table's stream, so that a test
// reads lists and counts as a client reads them a moment after its write. Its requests go
// through clients of their own (API.StreamDDB, API.StreamS3), neither counted with the API's
// nor faulted.
//
// Writes are counted as the API serves them (every request but GET and HEAD); a request waits
// for a drain under way, and a drain covers every write served before it began. What is
// written beside the API (a store of API.Env, a Lambda bootstrap, the gateway) is applied by
// the next request that follows a write through the API, or by ApplyStream.
type consumer struct {
	t       testing.TB
	poller  *ddb.StreamPoller
	written atomic.Int64 // writes served
	mu      sync.Mutex   // held by a drain
	applied int64        // the writes the last drain covers (under mu)
}

func newConsumer(t testing.TB, p *ddb.StreamPoller) *consumer {
	return &consumer{t: t, poller: p}
}

// before applies the stream before next serves a request, when the API wrote since the last
// drain, and counts next's writes.
func (c *consumer) before(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.written.Load() > c.appliedSoFar() {
			c.apply(false)
		}
		next.ServeHTTP(w, r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.written.Add(1)
		}
	})
}

func (c *consumer) appliedSoFar() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied
}

// apply drains the stream into what its consumer keeps, unless a drain that covers every write
// served so far ended while it waited (and force is false). It may run on a request's
// goroutine, so a failure is reported with Errorf, not FailNow.
func (c *consumer) apply(force bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	covered := c.written.Load()
	if !force && c.applied >= covered {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.poller.Drain(ctx); err != nil {
		c.t.Errorf("apply the table's stream: %v", err)
		return
	}
	c.applied = max(c.applied, covered)
}

// Applying is h (a handler built from API.Env, such as one function's) with the stream applied
// before its requests, as API.Handler applies it: writes through either count for both.
func (api *API) Applying(h http.Handler) http.Handler { return api.consumer.before(h) }

// ApplyStream applies what the table's stream holds so far as its consumer does (not the
// events' fan-out: DrainStream): for a test that wrote beside the API (a store of Env, a
// bootstrap, the gateway) and reads what the consumer keeps from a store rather than through the
// API.
func (api *API) ApplyStream(t testing.TB) {
	t.Helper()
	api.consumer.apply(true)
}
