package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spanSink stands in for POST /spans where a test needs to see batches arrive or to make
// them fail: it hands every batch it receives to the test and answers as the API does.
type spanSink struct {
	batches chan []map[string]any
	// status, when set, is the answer to every batch (an error, as an API that is down).
	status atomic.Int32
	// keep, when positive, is how many spans of each batch are stored; the rest are
	// rejected.
	keep     atomic.Int32
	requests atomic.Int32
	// received, when set, hears of each request; the answer then waits for the request's
	// context to end (a hung API).
	received chan struct{}
}

func (s *spanSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/spans" {
		http.NotFound(w, r)
		return
	}
	if s.received != nil {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices when the client goes away
		s.received <- struct{}{}
		<-r.Context().Done()
		return
	}
	if st := s.status.Load(); st != 0 {
		w.WriteHeader(int(st))
		return
	}
	var batch []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.batches <- batch
	stored := batch
	if k := int(s.keep.Load()); k > 0 && k < len(batch) {
		stored = batch[:k]
	}
	out := make([]map[string]any, len(stored))
	for i, span := range stored {
		out[i] = map[string]any{"id": span["id"], "trace_id": span["trace_id"], "name": span["name"]}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// sunk returns a client whose spans go to a spanSink, and the sink. opts come after the
// client's own; the writer sends only when told unless opts give it ticks.
func sunk(t *testing.T, opts ...Option) (*Client, *spanSink) {
	t.Helper()
	sink := &spanSink{batches: make(chan []map[string]any, 100)}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	opts = append([]Option{WithBaseURL(srv.URL), WithAPIKey("k"), WithEnv(func(string) string { return "" }),
		withSpanTicks(make(chan time.Time))}, opts...)
	c, err := New(opts...)
	require.NoError(t, err)
	c.sleep = func(context.Context, time.Duration) error { return nil }
	t.Cleanup(func() { _ = c.Close(closed()) })
	return c, sink
}

// end starts and ends n spans named name-0, name-1, ...
func end(c *Client, name string, n int, opts ...SpanOption) {
	for i := range n {
		_, s := c.StartSpan(context.Background(), name+"-"+string(rune('0'+i)), opts...)
		s.End()
	}
}

// next is the next batch the sink receives; the timeout only keeps a broken writer from
// hanging the test.
func next(t *testing.T, sink *spanSink) []map[string]any {
	t.Helper()
	select {
	case b := <-sink.batches:
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no batch arrived")
		return nil
	}
}

func names(batch []map[string]any) []string {
	out := make([]string, len(batch))
	for i, s := range batch {
		out[i], _ = s["name"].(string)
	}
	return out
}

// TestWriterBatchesBySize: a full batch leaves at once, the rest waits for Close.
func TestWriterBatchesBySize(t *testing.T) {
	c, sink := sunk(t, WithSpanWriter(WriterConfig{BatchSize: 2}))
	end(c, "s", 5)
	assert.Equal(t, []string{"s-0", "s-1"}, names(next(t, sink)))
	assert.Equal(t, []string{"s-2", "s-3"}, names(next(t, sink)))
	require.NoError(t, c.Close(context.Background()))
	assert.Equal(t, []string{"s-4"}, names(next(t, sink)), "the rest is sent by Close")
	assert.Equal(t, WriterStats{Sent: 5}, c.SpanWriter().Stats())
}

// TestWriterSendsOnTick: spans wait for the interval's tick, then leave together.
func TestWriterSendsOnTick(t *testing.T) {
	ticks := make(chan time.Time)
	c, sink := sunk(t, withSpanTicks(ticks))
	end(c, "s", 3)
	assert.Equal(t, 3, c.SpanWriter().Stats().Queued, "nothing is due before the tick")
	assert.Empty(t, sink.batches)
	ticks <- time.Now()
	assert.Equal(t, []string{"s-0", "s-1", "s-2"}, names(next(t, sink)))
	end(c, "t", 1)
	require.NoError(t, c.Flush(context.Background()))
	assert.Equal(t, []string{"t-0"}, names(next(t, sink)))
	assert.Equal(t, WriterStats{Sent: 4}, c.SpanWriter().Stats())
}

// TestWriterClose: Close sends what waits, stops the writer and drops later spans; it can be
// called again.
func TestWriterClose(t *testing.T) {
	c, sink := sunk(t)
	end(c, "s", 2)
	require.NoError(t, c.Close(context.Background()))
	assert.Equal(t, []string{"s-0", "s-1"}, names(next(t, sink)))
	select {
	case <-c.SpanWriter().done:
	default:
		t.Fatal("the writer's goroutine still runs after Close")
	}
	require.NoError(t, c.Close(context.Background()), "Close again")
	require.NoError(t, c.Flush(context.Background()), "Flush after Close")
	end(c, "late", 1)
	assert.Equal(t, WriterStats{Sent: 2, Dropped: 1, LastError: errWriterClosed}, c.SpanWriter().Stats())
	assert.Empty(t, sink.batches)
}

// TestWriterDropsWhenFull: the queue is bounded in spans and in bytes; what does not fit is
// dropped and counted.
func TestWriterDropsWhenFull(t *testing.T) {
	tests := []struct {
		name string
		cfg  WriterConfig
		opts []SpanOption
	}{
		{name: "spans", cfg: WriterConfig{QueueSize: 3}},
		// Each span is a little more than 3,000 bytes: three fit.
		{name: "bytes", cfg: WriterConfig{QueueBytes: 10_500}, opts: []SpanOption{WithAttributes(map[string]any{"blob": strings.Repeat("x", 3000)})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, sink := sunk(t, WithSpanWriter(tt.cfg))
			end(c, "s", 5, tt.opts...)
			assert.Equal(t, WriterStats{Queued: 3, Dropped: 2, LastError: errQueueFull}, c.SpanWriter().Stats())
			require.NoError(t, c.Close(context.Background()))
			assert.Equal(t, []string{"s-0", "s-1", "s-2"}, names(next(t, sink)))
			assert.Equal(t, WriterStats{Sent: 3, Dropped: 2, LastError: errQueueFull}, c.SpanWriter().Stats())
		})
	}
}

// TestWriterCountsFailures: a batch that keeps failing is retried as the client retries,
// then dropped and counted; spans the API refuses one by one are counted apart.
func TestWriterCountsFailures(t *testing.T) {
	c, sink := sunk(t, WithRetries(1))
	sink.status.Store(http.StatusInternalServerError)
	end(c, "s", 3)
	err := c.Flush(context.Background())
	require.ErrorIs(t, err, ErrInternal)
	assert.Equal(t, int32(2), sink.requests.Load(), "sent, then retried once")
	st := c.SpanWriter().Stats()
	assert.Equal(t, WriterStats{Failed: 3, Dropped: 3, LastError: err}, st)

	sink.status.Store(0)
	sink.keep.Store(1)
	end(c, "t", 3)
	require.NoError(t, c.Flush(context.Background()))
	assert.Len(t, next(t, sink), 3)
	st = c.SpanWriter().Stats()
	assert.Equal(t, uint64(1), st.Sent)
	assert.Equal(t, uint64(2), st.Rejected)
	assert.Equal(t, uint64(3), st.Dropped, "rejected spans are not the writer's drops")
}

// TestWriterCloseCancels: when Close's context ends while a batch hangs, the send is
// cancelled, its spans are dropped, and the writer still stops.
func TestWriterCloseCancels(t *testing.T) {
	ticks := make(chan time.Time)
	c, sink := sunk(t, withSpanTicks(ticks), WithRetries(0))
	sink.received = make(chan struct{}, 1)
	end(c, "s", 1)
	ticks <- time.Now()
	<-sink.received // the batch hangs in the API
	err := c.Close(closed())
	require.ErrorIs(t, err, context.Canceled)
	<-c.SpanWriter().done
	st := c.SpanWriter().Stats()
	assert.Equal(t, uint64(1), st.Failed)
	assert.Equal(t, uint64(1), st.Dropped)
}
