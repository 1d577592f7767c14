package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Defaults of the span writer (WriterConfig).
const (
	DefaultBatchSize     = 100
	DefaultFlushInterval = time.Second
	DefaultQueueSize     = 10_000
	DefaultQueueBytes    = 64 << 20
	// maxBatchSpans is the API's limit of spans per POST /spans (trace.MaxSpansPerBatch).
	maxBatchSpans = 1000
	// maxBatchBytes keeps a batch under the API's 5 MiB body limit (trace.MaxBatchBytes); a
	// single larger span is sent alone, and refused.
	maxBatchBytes = 4 << 20
)

// Why spans are dropped before they are sent (WriterStats.LastError).
var (
	errQueueFull    = errors.New("client: span queue full: span dropped")
	errWriterClosed = errors.New("client: span writer closed: span dropped")
)

// WriterConfig configures a Client's span writer (WithSpanWriter). Zero fields take the
// defaults.
type WriterConfig struct {
	// BatchSize is the most spans one POST /spans carries (DefaultBatchSize, at most 1,000).
	// A full batch is sent at once.
	BatchSize int
	// FlushInterval is how often the spans waiting are sent (DefaultFlushInterval).
	FlushInterval time.Duration
	// QueueSize and QueueBytes bound the spans waiting to be sent, in number and in encoded
	// size (DefaultQueueSize, DefaultQueueBytes): a span that does not fit is dropped and
	// counted, so that an API that is down costs the application no more memory than this.
	QueueSize  int
	QueueBytes int
}

func (cfg WriterConfig) withDefaults() WriterConfig {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	cfg.BatchSize = min(cfg.BatchSize, maxBatchSpans)
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	return cfg
}

// WithSpanWriter configures the client's span writer.
func WithSpanWriter(cfg WriterConfig) Option { return func(c *Client) { c.tracing.cfg = cfg } }

// withSpanTicks makes the span writer send on ticks instead of every FlushInterval (tests).
func withSpanTicks(ticks <-chan time.Time) Option {
	return func(c *Client) { c.tracing.ticks = ticks }
}

// tracing is a Client's span writer, started by the first span.
type tracing struct {
	cfg   WriterConfig
	ticks <-chan time.Time
	once  sync.Once
	w     *Writer
}

// SpanWriter returns the client's span writer, starting it on first use.
func (c *Client) SpanWriter() *Writer {
	c.tracing.once.Do(func() { c.tracing.w = newWriter(c, c.tracing.cfg, c.tracing.ticks) })
	return c.tracing.w
}

// Flush sends the spans ended so far (Writer.Flush).
func (c *Client) Flush(ctx context.Context) error { return c.SpanWriter().Flush(ctx) }

// Close sends the spans ended so far and stops the span writer (Writer.Close). A program calls
// it before it exits, or the spans of its last second are lost.
func (c *Client) Close(ctx context.Context) error { return c.SpanWriter().Close(ctx) }

// Writer sends ended spans to the API in the background, in batches (POST /spans): a batch
// leaves when it is full, every FlushInterval, on Flush and on Close. A batch that fails is
// retried as the client retries idempotent calls (the API merges a span sent twice), then
// dropped. Nothing blocks the application: when the queue is full, spans are dropped. Stats
// counts what happened to every span.
type Writer struct {
	c   *Client
	cfg WriterConfig
	// ctx bounds the sends; Close cancels it when its own context ends first.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	queue  [][]byte // encoded spans, oldest first
	bytes  int      // encoded size of queue
	closed bool
	stats  WriterStats

	full     chan struct{}   // a full batch is waiting (capacity 1)
	flushes  chan chan error // Flush's requests
	stop     chan struct{}   // closed by Close
	stopOnce sync.Once
	done     chan struct{} // closed when run returns
	closeErr error         // the last send's error, set before done is closed
}

// WriterStats counts the spans of a Writer since it started.
type WriterStats struct {
	// Queued spans wait to be sent.
	Queued int
	// Sent spans were stored by the API.
	Sent uint64
	// Rejected spans were refused by the API one by one (invalid: a name too long, ...)
	// while the rest of their batch was stored.
	Rejected uint64
	// Dropped spans were never stored because of the writer: the queue was full, the writer
	// was closed, the span could not be encoded, or its batch failed (those are also counted
	// in Failed).
	Dropped uint64
	// Failed spans were in batches that failed after the client's retries.
	Failed uint64
	// LastError is why the last span was dropped or the last batch failed, nil when none was.
	LastError error
}

// newWriter starts a writer of spans to c's API that sends on ticks, or every
// cfg.FlushInterval when ticks is nil.
func newWriter(c *Client, cfg WriterConfig, ticks <-chan time.Time) *Writer {
	w := &Writer{
		c: c, cfg: cfg.withDefaults(),
		full: make(chan struct{}, 1), flushes: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{}),
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	stopTicker := func() {}
	if ticks == nil {
		t := time.NewTicker(w.cfg.FlushInterval)
		ticks, stopTicker = t.C, t.Stop
	}
	go w.run(ticks, stopTicker)
	return w
}

// run sends batches when they are due, until Close.
func (w *Writer) run(ticks <-chan time.Time, stopTicker func()) {
	defer close(w.done)
	defer w.cancel()
	defer stopTicker()
	for {
		select {
		case <-ticks:
			_ = w.send(true) // counted in Stats
		case <-w.full:
			_ = w.send(false)
		case reply := <-w.flushes:
			reply <- w.send(true)
		case <-w.stop:
			w.closeErr = w.send(true)
			return
		}
	}
}

// Stats returns the writer's counts.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Queued = len(w.queue)
	return s
}

// Flush sends the spans ended before it was called and returns the error of the last batch
// that failed. When ctx ends first it returns ctx's error and the batches are still sent.
// After Close it does nothing.
func (w *Writer) Flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case w.flushes <- reply:
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close sends the spans waiting, stops the writer and waits for it: spans that end later are
// dropped. It returns the error of the last batch that failed. When ctx ends first, the sends
// are cancelled, the spans not sent are dropped, and Close returns ctx's error once the
// writer has stopped. Close may be called again: it returns the same error.
func (w *Writer) Close(ctx context.Context) error {
	w.stopOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.stop)
	})
	select {
	case <-w.done:
		return w.closeErr
	case <-ctx.Done():
		w.cancel()
		<-w.done
		return ctx.Err()
	}
}

// enqueue queues an encoded span, or drops it when the queue is full or the writer closed.
func (w *Writer) enqueue(span []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		w.dropLocked(1, errWriterClosed)
		return
	case len(w.queue) >= w.cfg.QueueSize || w.bytes+len(span) > w.cfg.QueueBytes:
		w.dropLocked(1, errQueueFull)
		return
	}
	w.queue = append(w.queue, span)
	w.bytes += len(span)
	if len(w.queue) >= w.cfg.BatchSize || w.bytes >= maxBatchBytes {
		select {
		case w.full <- struct{}{}:
		default: // the writer knows already
		}
	}
}

// drop counts n spans dropped because of err.
func (w *Writer) drop(n int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropLocked(n, err)
}

func (w *Writer) dropLocked(n int, err error) {
	w.stats.Dropped += uint64(n)
	w.stats.LastError = err
}

// send sends batches: all the spans queued when it starts (all), or only full batches. It
// returns the error of the last batch that failed.
func (w *Writer) send(all bool) error {
	budget := math.MaxInt
	if all {
		budget = w.Stats().Queued // not more: spans that keep coming must not keep Flush waiting
	}
	var last error
	for budget > 0 {
		w.mu.Lock()
		due := all || len(w.queue) >= w.cfg.BatchSize || w.bytes >= maxBatchBytes
		w.mu.Unlock()
		if !due {
			break
		}
		batch := w.take(min(w.cfg.BatchSize, budget))
		if len(batch) == 0 {
			break
		}
		budget -= len(batch)
		if err := w.post(batch); err != nil {
			last = err
		}
	}
	return last
}

// take removes the next batch from the head of the queue: at most limit spans and
// maxBatchBytes bytes, and at least one span when the queue has one.
func (w *Writer) take(limit int) [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, size := 0, 0
	for n < len(w.queue) && n < limit && (n == 0 || size+len(w.queue[n]) <= maxBatchBytes) {
		size += len(w.queue[n])
		n++
	}
	batch := slices.Clone(w.queue[:n])
	// Shift the rest to the front, so that the queue's array is reused and keeps no sent span.
	m := copy(w.queue, w.queue[n:])
	clear(w.queue[m:])
	w.queue = w.queue[:m]
	w.bytes -= size
	return batch
}

// post sends one batch and counts its spans.
func (w *Writer) post(batch [][]byte) error {
	if err := w.ctx.Err(); err != nil {
		err = fmt.Errorf("client: span writer stopped before sending %d spans: %w", len(batch), err)
		w.drop(len(batch), err)
		return err
	}
	size := len(batch) + 1
	for _, s := range batch {
		size += len(s)
	}
	body := make([]byte, 0, size)
	body = append(body, '[')
	for i, s := range batch {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, s...)
	}
	body = append(body, ']')
	stored, err := w.c.IngestSpans(w.ctx, json.RawMessage(body))
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("client: send %d spans: %w", len(batch), err)
		w.stats.Failed += uint64(len(batch))
		w.dropLocked(len(batch), err)
		return err
	}
	w.stats.Sent += uint64(len(stored))
	if len(batch) > len(stored) {
		w.stats.Rejected += uint64(len(batch) - len(stored))
	}
	return nil
}
