package dashboard

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// sessionRoutes registers the sessions pages: GET /ui/sessions and GET /ui/sessions/{session_id}.
func (s *server) sessionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/sessions", s.sessions)
	mux.HandleFunc("GET /ui/sessions/{session_id}", s.sessionPage)
}

const (
	sessionsPerPage      = 50
	sessionTracesPerPage = 200
)

// sessionsPage is the sessions page's filter: the list filter (filter.go) with has_error and
// the sessions' sorts (keys of api.SessionList.Sorts).
var sessionsPage = filterPage{
	Path: "/ui/sessions", Noun: "sessions", One: "session",
	Own: choice{Key: "has_error", Label: "Errors", Options: []option{
		{Value: "", Label: "Any"},
		{Value: "true", Label: "With errors", Summary: "with errors"},
		{Value: "false", Label: "Without errors", Summary: "without errors"},
	}},
	Sorts: []listSort{
		{Key: "newest", Label: "Newest first"},
		{Key: "oldest", Label: "Oldest first", ascending: true},
		{Key: "traces", Label: "Most traces first", by: "trace_count"},
		{Key: "cost", Label: "Most expensive first", by: "cost"},
		{Key: "duration", Label: "Longest first", by: "duration"},
		{Key: "name", Label: "Name A to Z", by: "name", ascending: true},
	},
}

type sessionsData struct {
	Filter   listFilter
	Sessions []api.Session
	pager
	Truncated bool
	// Traces, Errors and Cost are the totals of the sessions on the page.
	Traces, Errors int
	Cost           float64
}

// sessions serves GET /ui/sessions: the project's sessions, 50 a page, filtered by name,
// errors, tags, creation time, duration and cost and sorted as chosen, through the query GET
// /sessions answers (one index walk, session items only), paged by its cursors.
func (s *server) sessions(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(sessionsPage, r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := f.query(sessionsPerPage)
	if f.Own.Value != "" {
		hasError := f.Own.Value == "true"
		q.HasError = &hasError
	}
	c, ctx := s.api(r)
	ss, info, err := c.SessionsPage(ctx, api.SessionQuery{ListQuery: q})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := sessionsData{Filter: f, Sessions: ss, Truncated: info.Partial(), pager: f.At.paging(len(ss), info.NextCursor, f.link)}
	for _, x := range ss {
		d.Traces += x.TraceCount
		d.Errors += x.ErrorCount
		d.Cost += x.Cost
	}
	s.render(w, r, http.StatusOK, "sessions", page{Title: "Sessions", Nav: "sessions", Data: d})
}

type sessionData struct {
	Session api.Session
	Signals []api.Signal
	Traces  []api.Trace
	pager
	// Spans, Errors and Cost are the totals of the session's traces on the page; the
	// session's own totals (all its traces) are in Session.
	Spans, Errors int
	Cost          float64
}

// sessionPage serves GET /ui/sessions/{session_id} (?cursor=): the session and its traces in
// the order they started, 200 a page, paged by the cursors of GET /traces?session_id=. Two
// reads: the session item, then its traces (the session's trace list and one batch read of
// trace items).
func (s *server) sessionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session_id")
	if err := validID("session", id); err != nil {
		s.fail(w, r, err)
		return
	}
	// Sessions are stored under a UUID: an SDK's session id of another form is named by its
	// uuid5, as the API derives it, so that the id an application uses finds its session.
	at, err := listPageOf(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if canonical := trace.SessionIDOf(id); canonical != id {
		http.Redirect(w, r, pageURL("/ui/sessions/"+url.PathEscape(canonical), r.URL.Query(), at.Offset), http.StatusSeeOther)
		return
	}
	c, ctx := s.api(r)
	// The session with its signals (GET /sessions/{session_id}).
	sess, err := c.Session(ctx, id)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
		err = errs.NotFound("There is no such session.")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ts, info, err := c.TracesPage(ctx, api.TraceQuery{SessionID: id, ListQuery: api.ListQuery{SortBy: "started_at", SortOrder: api.SortAsc,
		Limit: sessionTracesPerPage, Offset: at.Offset, Cursor: at.Cursor}})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// A page the API cut at api.MaxAnswerBytes ends where it was cut: its cursor reads on.
	d := sessionData{Session: sess.Session, Signals: sess.Signals, Traces: ts, pager: at.paging(len(ts), info.NextCursor, func(cursor string, row int) string {
		return cursorURL("/ui/sessions/"+url.PathEscape(id), nil, cursor, row)
	})}
	for _, t := range ts {
		d.Spans += t.SpanCount
		d.Errors += t.ErrorCount
		d.Cost += t.Cost
	}
	title := id
	if n := deref(sess.Name); n != "" {
		title = n
	}
	s.render(w, r, http.StatusOK, "session", page{Title: title, Nav: "sessions", Data: d})
}
