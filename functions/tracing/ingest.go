package tracing

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/metrics"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

type ingestServer struct {
	svc *trace.Service
}

// maxRejectedHeader caps the X-Plume-Rejected-Spans header, which lists rejected spans.
const maxRejectedHeader = 4096

// readBody reads a JSON body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if err := web.RequireJSON(r); err != nil {
		return nil, err
	}
	return web.ReadBody(w, r, limit)
}

// postSpans serves POST /spans: a JSON array of spans. Valid spans are stored and returned as
// an array of SpanRead; spans that cannot be stored (invalid, or stored under another trace)
// do not fail the batch: their count is in X-Plume-Rejected and their positions and reasons in
// X-Plume-Rejected-Spans (JSON, cut at 4 KB). A batch without one stored span is 400.
//
// A caller that may not read the project's spans (an ingest key) is answered the spans as it
// sent them, not as stored: a span id it re-sends must not read back what others stored.
//
// The answers of POST /spans, /traces and /sessions hold as many of the items as fit
// api.MaxAnswerBytes, in request order, and say how many they left out (web.Written): a
// re-sent span is answered as stored, with its stored input and output, so that a small
// request may name far more than one answer can hold.
func (s *ingestServer) postSpans(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, trace.MaxBatchBytes)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	pid := auth.ProjectID(r)
	spans, rejected, err := trace.DecodeBatch(body, pid, s.svc.Now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	res, err := s.svc.IngestBatch(r.Context(), pid, spans)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	rejected = trace.InRequest(rejected, res.Refused)
	metrics.Emit(r.Context(), nil, s.svc.Now(), pid, metrics.Count(metrics.SpansIngested, len(res.Stored)), metrics.Count(metrics.SpansRejected, len(rejected)))
	if len(res.Stored) == 0 {
		web.Error(w, r, trace.NoValidSpan(rejected))
		return
	}
	if len(rejected) > 0 {
		w.Header().Set("X-Plume-Rejected", strconv.Itoa(len(rejected)))
		w.Header().Set("X-Plume-Rejected-Spans", rejectedHeader(rejected))
	}
	answer := res.Stored
	if !auth.MayRead(r) {
		answer = res.Sent
	}
	web.Written(w, r, toSpans(answer), web.Array)
}

// rejectedHeader encodes as many rejections as fit the header cap, as ASCII-only JSON (reasons
// may quote client text; header values must stay ASCII).
func rejectedHeader(rejected []trace.Rejected) string {
	entries := make([]api.RejectedSpan, len(rejected))
	for i, r := range rejected {
		entries[i] = api.RejectedSpan{Index: r.Index, ID: r.ID, Error: r.Error}
	}
	for n := len(entries); n > 0; n-- {
		b, err := json.Marshal(entries[:n])
		if err != nil {
			break
		}
		if h := asciiJSON(b); len(h) <= maxRejectedHeader {
			return h
		}
	}
	return "[]"
}

// asciiJSON escapes every non-ASCII character and control byte of JSON text as \uXXXX.
func asciiJSON(b []byte) string {
	var sb strings.Builder
	for _, r := range string(b) {
		if r < 0x20 || r > 0x7e {
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&sb, "\\u%04x", u)
			}
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// postTraces serves POST /traces: creates or updates traces, answers them as read, or, to a
// caller that may not read the project's traces (an ingest key), as sent.
func (s *ingestServer) postTraces(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, web.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	traces, err := trace.DecodeTraces(body, s.svc.Now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	pid := auth.ProjectID(r)
	if err := s.svc.PutTraces(r.Context(), pid, traces); err != nil {
		web.Error(w, r, err)
		return
	}
	if !auth.MayRead(r) {
		web.Written(w, r, sentTraces(traces, pid, s.svc.Now().UTC()), web.Array)
		return
	}
	ids := make([]string, len(traces))
	for i, t := range traces {
		ids[i] = t.ID
	}
	out, err := s.svc.Traces(r.Context(), pid, ids)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.Written(w, r, toTraces(out), web.Array)
}

// postSessions serves POST /sessions. A session naming another project is 403. A caller that
// may not read the project's sessions (an ingest key) is answered the sessions as sent.
func (s *ingestServer) postSessions(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, web.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	sessions, err := trace.DecodeSessions(body)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	pid := auth.ProjectID(r)
	if err := s.svc.PutSessions(r.Context(), pid, sessions); err != nil {
		web.Error(w, r, err)
		return
	}
	if !auth.MayRead(r) {
		web.Written(w, r, sentSessions(sessions, s.svc.Now().UTC()), web.Array)
		return
	}
	ids := make([]string, len(sessions))
	for i, in := range sessions {
		ids[i] = in.ID
	}
	out, err := s.svc.Sessions(r.Context(), pid, ids)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.Written(w, r, toSessions(out), web.Array)
}
