package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// request is one HTTP request a scenario wants sent. Building it is not timed.
type request struct {
	op          string // the row of the report
	method      string
	path        string
	body        []byte
	contentType string
	spans       int // spans the body carries
	// check, when set, inspects a 2xx answer's body; a non-empty result counts as an error.
	check func(body []byte) string
}

// scenario is one kind of load.
type scenario interface {
	// setup prepares what the requests need (a prompt and its tag); it runs once, untimed.
	setup(ctx context.Context, c *client) error
	// next builds worker w's next request.
	next(w *worker) request
	// describe names the scenario in the report.
	describe() string
}

// worker is the state one worker goroutine owns.
type worker struct {
	id  int
	n   int // requests built so far
	rng *rand.Rand
}

// client sends requests to the target with the key.
type client struct {
	base string
	key  string
	http *http.Client
}

func newClient(o options) *client {
	tr := &http.Transport{
		Proxy:               nil, // the target is local; never go through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        o.concurrency * 2,
		MaxIdleConnsPerHost: o.concurrency * 2,
		IdleConnTimeout:     90 * time.Second,
	}
	return &client{base: o.baseURL, key: o.key, http: &http.Client{Transport: tr, Timeout: o.timeout}}
}

// do sends r and returns the status, the response's X-Plume-Rejected count and body.
func (c *client) do(ctx context.Context, r request) (status, rejected int, body []byte, err error) {
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, rd)
	if err != nil {
		return 0, 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, 0, nil, err
	}
	rejected, _ = strconv.Atoi(resp.Header.Get("X-Plume-Rejected"))
	return resp.StatusCode, rejected, body, nil
}

// opStats are the figures of one operation, kept by one worker and merged at the end.
type opStats struct {
	latencies []time.Duration // successful and failed requests alike
	ok        int64
	errors    map[string]int64
	spans     int64 // spans stored: those of 2xx answers less the rejected ones
	rejected  int64
	bytesSent int64
}

func (s *opStats) merge(o *opStats) {
	s.latencies = append(s.latencies, o.latencies...)
	s.ok += o.ok
	s.spans += o.spans
	s.rejected += o.rejected
	s.bytesSent += o.bytesSent
	for k, v := range o.errors {
		s.errors[k] += v
	}
}

func newOpStats() *opStats { return &opStats{errors: map[string]int64{}} }

// drive runs the warmup and the measured phase and returns the report.
func drive(ctx context.Context, o options, sc scenario, c *client, stderr io.Writer) (*report, error) {
	if o.warmup > 0 {
		fmt.Fprintf(stderr, "plume-load: %s: warming up for %s\n", sc.describe(), o.warmup)
		phase(ctx, o, sc, c, o.warmup, 0, 1000)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	fmt.Fprintf(stderr, "plume-load: %s: measuring (%d workers, %s)\n", sc.describe(), o.concurrency, bounds(o))

	var prof *profileFetch
	if o.pprofURL != "" {
		prof = startProfile(ctx, c.http, o.pprofURL, o.profileOut, o.duration)
	}
	cpuBefore := sampleCPU(o.watch)
	selfBefore := selfCPU()
	start := time.Now()
	stats := phase(ctx, o, sc, c, o.duration, o.requests, 0)
	elapsed := time.Since(start)
	selfAfter := selfCPU()
	cpuAfter := sampleCPU(o.watch)

	rep := newReport(o, sc.describe(), elapsed, stats)
	rep.addCPU("plume-load", os.Getpid(), selfAfter-selfBefore)
	for i, p := range o.watch {
		if cpuBefore[i] >= 0 && cpuAfter[i] >= 0 {
			rep.addCPU(p.name, p.pid, cpuAfter[i]-cpuBefore[i])
		}
	}
	if prof != nil {
		if err := prof.wait(); err != nil {
			fmt.Fprintf(stderr, "plume-load: server CPU profile: %v\n", err)
		} else {
			rep.Profile = o.profileOut
		}
	}
	return rep, ctx.Err()
}

func bounds(o options) string {
	switch {
	case o.duration > 0 && o.requests > 0:
		return fmt.Sprintf("%s or %d requests", o.duration, o.requests)
	case o.duration > 0:
		return o.duration.String()
	default:
		return fmt.Sprintf("%d requests", o.requests)
	}
}

// phase runs o.concurrency workers until d has passed (d > 0) and limit requests have been
// started (limit > 0), whichever comes first, and returns the merged figures by operation.
// seedOffset keeps warmup and measured content apart. The deadline stops workers from starting
// requests; the one in flight finishes under its own timeout, so the end of the phase is not
// counted as errors.
func phase(ctx context.Context, o options, sc scenario, c *client, d time.Duration, limit int64, seedOffset uint64) map[string]*opStats {
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	var started atomic.Int64
	results := make([]map[string]*opStats, o.concurrency)
	var wg sync.WaitGroup
	for i := range o.concurrency {
		w := &worker{id: i, rng: rand.New(rand.NewPCG(o.seed+seedOffset, uint64(i)))}
		results[i] = map[string]*opStats{}
		wg.Go(func() {
			for ctx.Err() == nil {
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				if limit > 0 && started.Add(1) > limit {
					return
				}
				r := sc.next(w)
				st := results[w.id][r.op]
				if st == nil {
					st = newOpStats()
					results[w.id][r.op] = st
				}
				record(ctx, c, r, st)
			}
		})
	}
	wg.Wait()
	merged := map[string]*opStats{}
	for _, res := range results {
		for op, st := range res {
			if merged[op] == nil {
				merged[op] = newOpStats()
			}
			merged[op].merge(st)
		}
	}
	return merged
}

// record sends r, timing the round trip (headers and the whole body), into st.
func record(ctx context.Context, c *client, r request, st *opStats) {
	t0 := time.Now()
	status, rejected, body, err := c.do(ctx, r)
	st.latencies = append(st.latencies, time.Since(t0))
	st.bytesSent += int64(len(r.body))
	switch {
	case err != nil:
		st.errors[transportError(err)]++
	case status < 200 || status > 299:
		st.errors["HTTP "+strconv.Itoa(status)]++
	default:
		if r.check != nil {
			if msg := r.check(body); msg != "" {
				st.errors[msg]++
				return
			}
		}
		st.ok++
		st.rejected += int64(rejected)
		st.spans += int64(r.spans - rejected)
	}
}

// transportError names a failure that has no HTTP status.
func transportError(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection reset"
	default:
		return "transport error"
	}
}

// percentile returns the p-th percentile (0-100) of sorted samples, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// sortedCopy returns the samples in ascending order.
func sortedCopy(d []time.Duration) []time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}
