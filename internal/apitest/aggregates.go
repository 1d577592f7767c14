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

// aggregates keeps the trace and session aggregates up to date with what the API wrote, as
// RollupFunction does in a deployment a second or so after each write: before a request that
// follows a write, it applies the table's change stream to the aggregates (ddb.AggregateStore),
// so that a test reads counts as a client reads them a moment after its write. Its requests
// go through a client of their own (API.StreamDDB), neither counted with the API's nor faulted.
//
// Writes are counted as the API serves them (every request but GET and HEAD); a request waits
// for a drain under way, and a drain covers every write served before it began. What is
// written beside the API (a store of API.Env, a Lambda bootstrap, the gateway) is applied by
// the next request that follows a write through the API, or by ApplyAggregates.
type aggregates struct {
	t       testing.TB
	poller  *ddb.StreamPoller
	written atomic.Int64 // writes served
	mu      sync.Mutex   // held by a drain
	applied int64        // the writes the last drain covers (under mu)
}

func newAggregates(t testing.TB, p *ddb.StreamPoller) *aggregates {
	return &aggregates{t: t, poller: p}
}

// before applies the stream before next serves a request, when the API wrote since the last
// drain, and counts next's writes.
func (a *aggregates) before(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.written.Load() > a.appliedSoFar() {
			a.apply(false)
		}
		next.ServeHTTP(w, r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			a.written.Add(1)
		}
	})
}

func (a *aggregates) appliedSoFar() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied
}

// apply drains the stream into the aggregates, unless a drain that covers every write served
// so far ended while it waited (and force is false). It may run on a request's goroutine, so a
// failure is reported with Errorf, not FailNow.
func (a *aggregates) apply(force bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	covered := a.written.Load()
	if !force && a.applied >= covered {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.poller.Drain(ctx); err != nil {
		a.t.Errorf("apply the table's stream to the trace and session aggregates: %v", err)
		return
	}
	a.applied = max(a.applied, covered)
}

// Applying is h (a handler built from API.Env, such as one function's) with the trace and
// session aggregates kept up to date before its requests, as API.Handler keeps them: writes
// through either count for both.
func (api *API) Applying(h http.Handler) http.Handler { return api.aggregates.before(h) }

// ApplyAggregates applies what the table's stream holds so far to the trace and session
// aggregates: for a test that wrote beside the API (a store of Env, a bootstrap, the gateway)
// and reads the aggregates from a store rather than through the API.
func (api *API) ApplyAggregates(t testing.TB) {
	t.Helper()
	api.aggregates.apply(true)
}
