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
// an array of SpanRead; spans that cannot be stored do not fail the batch: their count is in
// X-Plume-Rejected and their positions and reasons in X-Plume-Rejected-Spans (JSON, cut at
// 4 KB). A batch without one valid span is 400.
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
	stored, err := s.svc.Ingest(r.Context(), pid, spans)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	metrics.Emit(r.Context(), nil, s.svc.Now(), pid, metrics.Count(metrics.SpansIngested, len(stored)), metrics.Count(metrics.SpansRejected, len(rejected)))
	if len(rejected) > 0 {
		w.Header().Set("X-Plume-Rejected", strconv.Itoa(len(rejected)))
		w.Header().Set("X-Plume-Rejected-Spans", rejectedHeader(rejected))
	}
	web.OK(w, toSpans(stored))
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

// postTraces serves POST /traces: creates or updates traces, answers them as read.
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
	out, err := s.svc.PutTraces(r.Context(), pid, traces)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toTraces(out))
}

// postSessions serves POST /sessions. A session naming another project is 403.
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
	out, err := s.svc.PutSessions(r.Context(), auth.ProjectID(r), sessions)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toSessions(out))
}
