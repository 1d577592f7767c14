package stack_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/otlp"
)

// What an element of a generated batch is.
const (
	elemValid  = iota // a new span, or one sent again to its own trace
	elemMoving        // a stored span (or one earlier in the batch) sent to another trace
	elemNumber        // a cost out of range
	elemTime          // an end before its start (OTLP) or a start that is no time (POST /spans)
)

// mixedSpan is one element of a generated batch.
type mixedSpan struct {
	kind           int
	span           [8]byte
	trace          [16]byte
	cost           float64
	failed         bool
	start, seconds int
}

// TestMixedBatches sends random batches over POST /spans, OTLP/JSON and OTLP/protobuf, from a
// small pool of span and trace ids so that ids repeat within and across batches: valid spans,
// spans moved to another trace, duplicate ids, costs out of range and bad times, mixed. For
// every batch, each invalid or moved span is reported alone (by position on POST /spans, by
// count and id in OTLP's partial success) and the rest is stored; at the end every valid span
// is stored once, under the trace it was first stored under, each trace counts its spans, cost
// and errors exactly as a model of the batches does, and every trace and the session equal a
// recount of what they are made of.
func TestMixedBatches(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	whole, err := stack.Handler(srv.Env)
	require.NoError(t, err)
	whole = srv.Applying(whole) // the aggregates follow its writes, as API.Handler's
	key := srv.A.Key
	session := "6f1d4c1e-2a7b-4c3d-9e8f-0a1b2c3d4e5f"
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)

	// The model: the trace each span id is stored under, and its last valid version.
	home := map[[8]byte][16]byte{}
	last := map[[8]byte]mixedSpan{}
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 25))
		var spans [12][8]byte
		var traces [3][16]byte
		for i := range spans {
			spans[i] = [8]byte{byte(seed + 1), 0xa, 0, 0, 0, 0, 0, byte(i + 1)}
		}
		for i := range traces {
			traces[i] = [16]byte{byte(seed + 1), 0xb, 15: byte(i + 1)}
		}
		for batch := range 5 {
			format := []string{"spans", "otlp-json", "otlp-protobuf"}[rng.IntN(3)]
			elems := generateBatch(rng, spans[:], traces[:], home)
			t.Run(fmt.Sprintf("seed %d batch %d %s", seed, batch, format), func(t *testing.T) {
				var want []int // positions refused
				inBatch := map[[8]byte][16]byte{}
				for i, e := range elems {
					if e.kind != elemValid && e.kind != elemMoving {
						want = append(want, i)
						continue
					}
					where, seen := inBatch[e.span]
					if !seen {
						where, seen = home[e.span]
					}
					if seen && where != e.trace {
						want = append(want, i)
						continue
					}
					inBatch[e.span] = e.trace
				}
				switch format {
				case "spans":
					sendSpans(t, whole, key, elems, session, base, want)
				default:
					sendOTLP(t, whole, key, format, elems, session, base, want)
				}
				for i, e := range elems {
					if !slices.Contains(want, i) {
						home[e.span] = e.trace
						last[e.span] = e
					}
				}
			})
		}
	}

	// Every valid span once, under its first trace, with its last version's cost: once the
	// change stream is applied to the aggregates (the whole stack's handler is not apitest's).
	srv.ApplyStream(t)
	traceSpans := map[string][]string{}
	for id, tr := range home {
		traceSpans[uuidOf(tr[:])] = append(traceSpans[uuidOf(tr[:])], otlp.SpanID(pcommon.SpanID(id)))
	}
	for traceID, ids := range traceSpans {
		var got []api.Span
		webtest.Do(t, whole, "GET", "/spans?trace_id="+traceID, key, nil).Decode(t, &got)
		var gotIDs []string
		for _, sp := range got {
			gotIDs = append(gotIDs, sp.ID)
		}
		assert.ElementsMatch(t, ids, gotIDs, "the spans of trace %s", traceID)

		var traces []api.Trace
		webtest.Do(t, whole, "GET", "/traces?id="+traceID, key, nil).Decode(t, &traces)
		require.Len(t, traces, 1, "trace %s", traceID)
		var cost float64
		errors := 0
		for id, tr := range home {
			if uuidOf(tr[:]) == traceID {
				cost += last[id].cost
				if last[id].failed {
					errors++
				}
			}
		}
		assert.Equal(t, len(ids), traces[0].SpanCount, "trace %s: span_count", traceID)
		assert.Equal(t, errors, traces[0].ErrorCount, "trace %s: error_count", traceID)
		assert.InDelta(t, cost, traces[0].Cost, 1e-9, "trace %s: cost", traceID)

		r, err := srv.Env.Traces().RecountTrace(t.Context(), srv.A.ProjectID, traceID)
		require.NoError(t, err)
		assert.True(t, r.Exact(), "trace %s: %+v", traceID, r)
	}
	r, err := srv.Env.Traces().RecountSession(t.Context(), srv.A.ProjectID, session)
	require.NoError(t, err)
	assert.True(t, r.Exact(), "the session: %+v", r)
	assert.Equal(t, len(traceSpans), r.Stored.Count, "the session's traces")
}

// generateBatch is a batch of 1 to 12 elements: mostly valid spans (new, or sent again to their
// trace), with moved spans, repeated ids, costs out of range and bad times among them.
func generateBatch(rng *rand.Rand, spans [][8]byte, traces [][16]byte, home map[[8]byte][16]byte) []mixedSpan {
	n := 1 + rng.IntN(12)
	out := make([]mixedSpan, 0, n)
	inBatch := map[[8]byte][16]byte{}
	for range n {
		// A re-send changes a span's times too: a span may start later or end earlier than
		// before, narrowing its trace and its session.
		e := mixedSpan{span: spans[rng.IntN(len(spans))], start: rng.IntN(600), seconds: 1 + rng.IntN(30),
			cost: float64(1+rng.IntN(1000)) / 1e4, failed: rng.IntN(5) == 0}
		where, known := inBatch[e.span]
		if !known {
			where, known = home[e.span]
		}
		switch p := rng.IntN(10); {
		case p < 6:
			e.kind = elemValid
			e.trace = traces[rng.IntN(len(traces))]
			if known {
				e.trace = where
			}
		case p < 8 && known:
			e.kind = elemMoving
			for e.trace = where; e.trace == where; {
				e.trace = traces[rng.IntN(len(traces))]
			}
		case p < 9:
			e.kind, e.trace = elemNumber, traces[rng.IntN(len(traces))]
		default:
			e.kind, e.trace = elemTime, traces[rng.IntN(len(traces))]
		}
		if e.kind == elemValid {
			inBatch[e.span] = e.trace
		}
		out = append(out, e)
	}
	return out
}

// sendSpans posts elems to POST /spans and checks that the refused positions are want.
func sendSpans(t *testing.T, h http.Handler, key string, elems []mixedSpan, session string, base time.Time, want []int) {
	t.Helper()
	body := make([]any, len(elems))
	for i, e := range elems {
		start := base.Add(time.Duration(e.start) * time.Second)
		sp := map[string]any{
			"id": otlp.SpanID(pcommon.SpanID(e.span)), "trace_id": uuidOf(e.trace[:]), "session_id": session, "name": "step",
			"started_at": start.Format(time.RFC3339Nano), "ended_at": start.Add(time.Duration(e.seconds) * time.Second).Format(time.RFC3339Nano),
			"cost": e.cost, "status": "ok",
		}
		if e.failed {
			sp["status"] = "error"
		}
		switch e.kind {
		case elemNumber:
			sp["cost"] = 1e200
		case elemTime:
			sp["started_at"] = "yesterday"
		}
		body[i] = sp
	}
	res := webtest.Do(t, h, "POST", "/spans", key, body)
	if len(want) == len(elems) {
		assert.Equal(t, http.StatusBadRequest, res.Status, "nothing to store: %s", res.Body)
		return
	}
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	var got []int
	if len(want) > 0 {
		var rejected []api.RejectedSpan
		require.NoError(t, json.Unmarshal([]byte(res.Header.Get("X-Plume-Rejected-Spans")), &rejected))
		for _, r := range rejected {
			got = append(got, r.Index)
			assert.Equal(t, otlp.SpanID(pcommon.SpanID(elems[r.Index].span)), r.ID, "the id of refused span %d", r.Index)
		}
	}
	assert.Equal(t, want, got, "refused positions")
	var stored []api.Span
	res.Decode(t, &stored)
	var storedIDs, wantIDs []string
	for _, sp := range stored {
		storedIDs = append(storedIDs, sp.ID)
	}
	for i, e := range elems {
		if id := otlp.SpanID(pcommon.SpanID(e.span)); !slices.Contains(want, i) && !slices.Contains(wantIDs, id) {
			wantIDs = append(wantIDs, id)
		}
	}
	assert.Equal(t, wantIDs, storedIDs, "the spans answered: each stored one once, in request order")
}

// sendOTLP exports elems as OTLP (format "otlp-json" or "otlp-protobuf") and checks that the
// partial success counts want and names the spans moved.
func sendOTLP(t *testing.T, h http.Handler, key, format string, elems []mixedSpan, session string, base time.Time, want []int) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "mixed")
	ss := rs.ScopeSpans().AppendEmpty()
	for _, e := range elems {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID(e.trace))
		sp.SetSpanID(pcommon.SpanID(e.span))
		sp.SetName("step")
		start := base.Add(time.Duration(e.start) * time.Second)
		end := start.Add(time.Duration(e.seconds) * time.Second)
		if e.kind == elemTime {
			end = start.Add(-time.Second)
		}
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		sp.Attributes().PutStr("session.id", session)
		sp.Attributes().PutDouble("gen_ai.usage.cost", e.cost)
		if e.kind == elemNumber {
			sp.Attributes().PutDouble("gen_ai.usage.cost", 1e200)
		}
		sp.Status().SetCode(ptrace.StatusCodeOk)
		if e.failed {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	req := ptraceotlp.NewExportRequestFromTraces(td)
	var body []byte
	var err error
	contentType := "application/json"
	if format == "otlp-protobuf" {
		body, err = req.MarshalProto()
		contentType = "application/x-protobuf"
	} else {
		body, err = req.MarshalJSON()
	}
	require.NoError(t, err)
	r := webtest.NewRequest(t, "POST", "/v1/traces", key, body)
	r.Header.Set("Content-Type", contentType)
	res := webtest.Serve(h, r)
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	resp := ptraceotlp.NewExportResponse()
	if format == "otlp-protobuf" {
		require.NoError(t, resp.UnmarshalProto(res.Body))
	} else {
		require.NoError(t, resp.UnmarshalJSON(res.Body))
	}
	assert.Equal(t, int64(len(want)), resp.PartialSuccess().RejectedSpans(), "refused spans: %s", resp.PartialSuccess().ErrorMessage())
	for _, i := range want {
		if len(want) <= 10 && (elems[i].kind == elemMoving || elems[i].kind == elemValid) { // the reasons named are bounded
			assert.Contains(t, resp.PartialSuccess().ErrorMessage(), otlp.SpanID(pcommon.SpanID(elems[i].span)), "the moved span named")
		}
	}
}

// uuidOf is the UUID form of 16 bytes.
func uuidOf(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
