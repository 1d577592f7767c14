package judges

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// Body limits: a judge definition (template up to 32 KB, criteria) and a batch of evaluations
// (up to 100, reasons up to 16 KB each plus criteria).
const (
	maxJudgeBody       = 256 << 10
	maxEvaluationsBody = 5 << 20
)

// Limits of the evaluation listing (spec §8).
const (
	defaultEvaluationLimit = 100
	maxEvaluationLimit     = 500
)

type server struct {
	svc   *judge.Service
	store judge.Store
}

// readSpec reads a judge definition body.
func readSpec(w http.ResponseWriter, r *http.Request) (judge.Spec, error) {
	if err := web.RequireJSON(r); err != nil {
		return judge.Spec{}, err
	}
	body, err := web.ReadBody(w, r, maxJudgeBody)
	if err != nil {
		return judge.Spec{}, err
	}
	return parseSpec(body)
}

// create serves POST /projects/{project_id}/judges.
func (s *server) create(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	spec, err := readSpec(w, r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	p, _ := auth.FromContext(r.Context())
	j, err := s.svc.Create(r.Context(), pid, p.User.ID, spec)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toJudge(j))
}

// list serves GET /projects/{project_id}/judges, each with its evaluation count and pass rate,
// as many as fit one answer from ?offset= (web.List).
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	js, err := s.store.Judges(r.Context(), pid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]api.Judge, len(js))
	for i, j := range js {
		out[i] = toJudge(j)
	}
	web.List(w, r, out, func(out []api.Judge) any { return api.JudgeList{Judges: out, Count: len(out)} })
}

// judgeOfPath reads the judge of the path, writing the error response when there is none.
func (s *server) judgeOfPath(w http.ResponseWriter, r *http.Request) (judge.Judge, bool) {
	j, err := s.store.Judge(r.Context(), auth.ProjectID(r), r.PathValue("judge_id"))
	if err != nil {
		web.Error(w, r, err)
		return judge.Judge{}, false
	}
	return j, true
}

// get serves GET /projects/{project_id}/judges/{judge_id}.
func (s *server) get(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.judgeOfPath(w, r); ok {
		web.OK(w, toJudge(j))
	}
}

// patch serves PATCH /projects/{project_id}/judges/{judge_id}: the fields given change (null
// clears model, tag_filter, target_prompt and criteria); "paused": true pauses the judge.
func (s *server) patch(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	spec, err := readSpec(w, r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	p, _ := auth.FromContext(r.Context())
	j, err := s.svc.Update(r.Context(), pid, r.PathValue("judge_id"), p.User.ID, spec)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toJudge(j))
}

// criteria serves GET /projects/{project_id}/judges/{judge_id}/criteria (spec §2.10).
func (s *server) criteria(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.judgeOfPath(w, r); ok {
		web.OK(w, toJudgeCriteria(j))
	}
}

// record serves POST /projects/{project_id}/judges/{judge_id}/evaluations: a JSON array of
// evaluations computed elsewhere. Writing a span's evaluation again replaces it; the judge's
// counts never count it twice. Count is how many were recorded; the answer holds as many of
// them as fit api.MaxAnswerBytes and says how many it left out (web.Written).
func (s *server) record(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	var in []api.EvaluationRequest
	if err := web.Decode(w, r, &in, maxEvaluationsBody); err != nil {
		web.Error(w, r, err)
		return
	}
	evs, err := s.svc.Record(r.Context(), pid, r.PathValue("judge_id"), toEvaluationInputs(in))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.Written(w, r, toEvaluations(evs), func(answered []api.Evaluation) any {
		return api.RecordEvaluationsResult{Evaluations: answered, Count: len(evs)}
	})
}

// evaluations serves GET /projects/{project_id}/judges/{judge_id}/evaluations (spec §4.7),
// over judge.DefaultWindow without start_date. A page that would pass api.MaxAnswerBytes holds
// fewer evaluations (web.Cut), its limit their number. A read that stopped at its bound
// (judge.Page.Truncated, only with feedback_state) says so in api.ScanTruncatedHeader.
func (s *server) evaluations(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	q, err := parseQuery(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q = q.Windowed(time.Now())
	j, ok := s.judgeOfPath(w, r)
	if !ok {
		return
	}
	page, err := s.store.Evaluations(r.Context(), pid, j.ID, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	w.Header().Set(api.ScannedHeader, strconv.Itoa(page.Scanned))
	if page.Truncated {
		w.Header().Set(api.ScanTruncatedHeader, "true")
	}
	all := toEvaluations(page.Evaluations)
	evs, err := web.Cut(w, r, all, q.Offset)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	limit := q.Limit
	if len(evs) < len(all) {
		// A page cut to stay within api.MaxAnswerBytes says so in its limit too, so that a client
		// that stops at a page shorter than its limit (the spec's rule) reads on.
		limit = len(evs)
	}
	web.OK(w, api.EvaluationPage{Evaluations: evs, Total: page.Total, Limit: limit, Offset: q.Offset})
}

// parseQuery reads the parameters of the evaluation listing.
func parseQuery(r *http.Request) (judge.Query, error) {
	v := r.URL.Query()
	q := judge.Query{Limit: defaultEvaluationLimit}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), "limit", defaultEvaluationLimit, 1, maxEvaluationLimit); err != nil {
		return q, err
	}
	if q.Offset, err = intParam(v.Get("offset"), "offset", 0, 0, 1<<30); err != nil {
		return q, err
	}
	if q.Start, q.End, err = parseDates(v); err != nil {
		return q, err
	}
	if s := v.Get("evaluation_result"); s != "" {
		b, err := strconv.ParseBool(strings.ToLower(s))
		if err != nil {
			return q, errs.Invalid("evaluation_result must be true or false, got %q", s)
		}
		q.Result = &b
	}
	switch s := v.Get("feedback_state"); s {
	case "", judge.WithFeedback, judge.WithoutFeedback:
		q.FeedbackState = s
	default:
		return q, errs.Invalid("feedback_state must be %q or %q, got %q", judge.WithFeedback, judge.WithoutFeedback, s)
	}
	return q, nil
}

// parseDates reads the start_date and end_date parameters (zero when absent): an end before
// the start is invalid.
func parseDates(v url.Values) (start, end time.Time, err error) {
	for _, d := range []struct {
		name  string
		dst   *time.Time
		isEnd bool
	}{{"start_date", &start, false}, {"end_date", &end, true}} {
		if s := v.Get(d.name); s != "" {
			t, err := parseDate(s, d.isEnd)
			if err != nil {
				return time.Time{}, time.Time{}, errs.Invalid("%s must be an ISO 8601 date or time, got %q", d.name, s)
			}
			*d.dst = t
		}
	}
	if !start.IsZero() && !end.IsZero() && end.Before(start) {
		return time.Time{}, time.Time{}, errs.Invalid("end_date is before start_date")
	}
	return start, end, nil
}

// parseDate reads an ISO 8601 time, or a date: the start of that day (UTC) for a start bound,
// its last microsecond for an end bound, so that end_date=2026-11-21 includes the whole day.
func parseDate(s string, isEnd bool) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		if isEnd {
			return d.Add(24*time.Hour - time.Microsecond), nil
		}
		return d, nil
	}
	return trace.ParseTimeString(s)
}

func intParam(s, name string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("%s must be an integer from %d to %d, got %q", name, lo, hi, s)
	}
	return n, nil
}

// spanEvaluations serves GET /projects/{project_id}/spans/{span_id}/evaluations: every judge's
// evaluation of the span (spec §4.7), as many as fit one answer from ?offset= (web.List).
func (s *server) spanEvaluations(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	spanID := strings.ToLower(r.PathValue("span_id"))
	evs, err := s.store.SpanEvaluations(r.Context(), pid, spanID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.List(w, r, toEvaluations(evs), func(evs []api.Evaluation) any { return api.SpanEvaluations{SpanID: spanID, Evaluations: evs} })
}

// link serves PUT /projects/{project_id}/prompts/{slug}/judges/{judge_id}: the judge guides the
// prompt's optimization. Linking twice is harmless.
func (s *server) link(w http.ResponseWriter, r *http.Request) { s.setLink(w, r, true) }

// unlink serves DELETE /projects/{project_id}/prompts/{slug}/judges/{judge_id}.
func (s *server) unlink(w http.ResponseWriter, r *http.Request) { s.setLink(w, r, false) }

func (s *server) setLink(w http.ResponseWriter, r *http.Request, linked bool) {
	pid := auth.ProjectID(r)
	j, err := s.store.LinkPrompt(r.Context(), pid, r.PathValue("judge_id"), r.PathValue("slug"), linked)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toJudge(j))
}
