package tracing

import (
	"context"
	"net/http"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/signal"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// SignalReader reads the signals recorded on one entity (ddb.SignalStore.Signals: one GetItem
// of its record).
type SignalReader interface {
	Signals(ctx context.Context, projectID string, ref signal.EntityRef) ([]api.Signal, error)
}

// getSpan serves GET /spans/{span_id}: the span as GET /spans?id= answers it, with its
// signals. The span and its signal record are read at once; lists never read signals.
func (s *queryServer) getSpan(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("span_id")
	var spans []trace.Span
	read := func(ctx context.Context) (err error) {
		spans, _, err = s.q.Spans(ctx, auth.ProjectID(r), trace.SpanQuery{ID: id, Common: trace.Common{Limit: 1}})
		return err
	}
	sigs, err := s.withSignals(r, "span", id, read)
	if err == nil && len(spans) == 0 {
		err = errs.NotFound("span %q not found", id)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.SpanWithSignals{Span: toSpan(&spans[0]), Signals: sigs}
	fitSpan(&out.Span, maxSpanBytes-len(`,"signals":`)-encodedLen(sigs))
	web.OK(w, out)
}

// getTrace serves GET /traces/{trace_id}: the trace as GET /traces?id= answers it, with its
// signals.
func (s *queryServer) getTrace(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("trace_id")
	var traces []trace.Trace
	read := func(ctx context.Context) (err error) {
		traces, _, err = s.q.Traces(ctx, auth.ProjectID(r), trace.TraceQuery{ID: id, Common: trace.Common{Limit: 1}})
		return err
	}
	sigs, err := s.withSignals(r, "trace", id, read)
	if err == nil && len(traces) == 0 {
		err = errs.NotFound("trace %q not found", id)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.TraceWithSignals{Trace: toTraces(traces[:1])[0], Signals: sigs})
}

// getSession serves GET /sessions/{session_id}: the session as GET /sessions?id= answers it,
// with its signals. Sessions are stored under a UUID: an id of another form names the session
// of its uuid5, as ingestion derives it (trace.SessionIDOf), whose signals are shown.
func (s *queryServer) getSession(w http.ResponseWriter, r *http.Request) {
	id := trace.SessionIDOf(r.PathValue("session_id"))
	var sessions []trace.Session
	read := func(ctx context.Context) (err error) {
		sessions, _, err = s.q.Sessions(ctx, auth.ProjectID(r), trace.SessionQuery{ID: id, Common: trace.Common{Limit: 1}})
		return err
	}
	sigs, err := s.withSignals(r, "session", id, read)
	if err == nil && len(sessions) == 0 {
		err = errs.NotFound("session %q not found", id)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.SessionWithSignals{Session: toSessions(sessions[:1])[0], Signals: sigs})
}

// withSignals runs read and reads the signals of the entity (entityType, id) of the request's
// project at the same time. An id longer than any stored one (trace.MaxIDLen) is not found,
// with nothing read.
func (s *queryServer) withSignals(r *http.Request, entityType, id string, read func(context.Context) error) ([]api.Signal, error) {
	if len(id) > trace.MaxIDLen {
		return nil, errs.NotFound("%s not found: ids are at most %d bytes", entityType, trace.MaxIDLen)
	}
	var sigs []api.Signal
	g, ctx := errgroup.WithContext(r.Context())
	g.Go(func() error { return read(ctx) })
	g.Go(func() (err error) {
		sigs, err = s.signals.Signals(ctx, auth.ProjectID(r), signal.EntityRef{Type: entityType, ID: id})
		return err
	})
	return sigs, g.Wait()
}
