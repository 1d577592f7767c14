package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
)

// calibrate serves POST /ui/judges/{judge_id}/calibrate: a person's verdict on one evaluation,
// sent as calibration feedback (feedback on the span's completion with judge_id): agree or
// disagree, and for a scored judge the expected score.
func (s *server) calibrate(w http.ResponseWriter, r *http.Request) {
	j, err := s.readJudge(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := r.PostForm
	back := ""
	if q := p.Get("back"); strings.HasPrefix(q, "?") && !strings.ContainsAny(q, "\r\n#") {
		back = q
	}
	in := calibrationInput{SpanID: p.Get("span_id"), Verdict: p.Get("verdict"), Expected: p.Get("expected_score"), Reason: p.Get("reason")}
	slug := p.Get("slug")
	switch {
	case validID("span", in.SpanID) != nil:
		err = errs.Invalid("Choose an evaluation to calibrate.")
	case slug == "":
		err = errs.Invalid("This evaluation's span belongs to no prompt: link the judge to a prompt to calibrate it.")
	case in.Verdict != "agree" && in.Verdict != "disagree":
		err = errs.Invalid("Say whether you agree with the verdict.")
	}
	agree := in.Verdict == "agree"
	var expected *float64
	if err == nil {
		expected, err = optionalNumber("Expected score", in.Expected)
	}
	if err == nil {
		req := api.FeedbackRequest{ThumbsUp: &agree, JudgeID: &j.ID, ExpectedScore: expected}
		if reason := strings.TrimSpace(in.Reason); reason != "" {
			req.Reason = &reason
		}
		c, ctx := s.api(r)
		if _, err = c.SendFeedback(ctx, slug, in.SpanID, req); err == nil {
			http.Redirect(w, r, judgeURL(j.ID)+back+"#performance", http.StatusSeeOther)
			return
		}
	}
	status, msg, ok := formError(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	// The page again, with the message at the evaluation and what was typed kept.
	q, _ := url.ParseQuery(strings.TrimPrefix(back, "?"))
	d, perr := s.judgePage(r, j, q)
	if perr != nil {
		s.fail(w, r, perr)
		return
	}
	in.Error = msg
	d.Calibration = in
	if !slices.ContainsFunc(d.Evaluations, func(e evaluationRow) bool { return e.SpanID == in.SpanID }) {
		d.FormError = msg
	}
	s.render(w, r, status, "judge", page{Title: "Judge " + j.Name, Nav: "judges", Data: d})
}

// calibrationInput is a calibration form as posted, kept when it fails.
type calibrationInput struct {
	SpanID, Verdict, Expected, Reason, Error string
}

// Paging of the judge page's evaluations.
const (
	evaluationsPerPage = 25
	// evaluationScan is how many of the newest evaluations matching the API's filters (verdict,
	// time, calibrated) the page reads to filter by score or prompt, which the API does not.
	evaluationScan = 500
)

// evaluationFilter is the filter form of the judge page.
type evaluationFilter struct {
	Result, Calibrated, MinScore, MaxScore, Prompt, From, To string
	Page                                                     int
}

func (f evaluationFilter) query(page int) url.Values {
	v := url.Values{}
	for _, p := range []struct{ k, v string }{
		{"result", f.Result}, {"calibrated", f.Calibrated}, {"min_score", f.MinScore}, {"max_score", f.MaxScore},
		{"prompt", f.Prompt}, {"from", f.From}, {"to", f.To},
	} {
		if p.v != "" {
			v.Set(p.k, p.v)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v
}

// evaluationRow is one evaluation as the judge page lists it.
type evaluationRow struct {
	api.Evaluation
	Verdict, Score, Confidence string
	// SpanURL is the span's page; "" when the span is not (yet) ingested.
	SpanURL    string
	PromptSlug string
	// CalibrateSlug is the prompt the calibration feedback is sent under: the span's, else the
	// judge's target or first linked prompt; "" when there is none.
	CalibrateSlug string
}

// localFilter is what the page filters itself: score range and prompt.
type localFilter struct {
	Min, Max *float64
	Prompt   string
}

func (l localFilter) any() bool { return l.Min != nil || l.Max != nil || l.Prompt != "" }

// readEvaluationFilter reads the filters of the judge page.
func readEvaluationFilter(q url.Values) (evaluationFilter, judgeQuery, localFilter, error) {
	f := evaluationFilter{
		Result: q.Get("result"), Calibrated: q.Get("calibrated"), MinScore: strings.TrimSpace(q.Get("min_score")),
		MaxScore: strings.TrimSpace(q.Get("max_score")), Prompt: strings.TrimSpace(q.Get("prompt")),
		From: q.Get("from"), To: q.Get("to"), Page: 1,
	}
	var aq judgeQuery
	var lf localFilter
	switch f.Result {
	case "":
	case "pass", "fail":
		pass := f.Result == "pass"
		aq.Result = &pass
	default:
		return f, aq, lf, errs.Invalid("The verdict filter is pass or fail.")
	}
	switch f.Calibrated {
	case "":
	case "yes", "no":
		yes := f.Calibrated == "yes"
		aq.WithUserFeedback = &yes
	default:
		return f, aq, lf, errs.Invalid("The calibrated filter is yes or no.")
	}
	var err error
	if lf.Min, err = optionalNumber("The lowest score", f.MinScore); err != nil {
		return f, aq, lf, err
	}
	if lf.Max, err = optionalNumber("The highest score", f.MaxScore); err != nil {
		return f, aq, lf, err
	}
	lf.Prompt = f.Prompt
	for _, d := range []struct {
		text string
		dst  *time.Time
		end  bool
	}{{f.From, &aq.Start, false}, {f.To, &aq.End, true}} {
		if d.text == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.text)
		if err != nil {
			return f, aq, lf, errs.Invalid("Dates are written 2025-01-31 (%q is not).", d.text)
		}
		if d.end {
			t = t.Add(24*time.Hour - time.Microsecond)
		}
		*d.dst = t
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 1_000_000 {
			return f, aq, lf, errs.Invalid("The page is a number from 1.")
		}
		f.Page = n
	}
	return f, aq, lf, nil
}

// judgeQuery is the part of the filters the API applies.
type judgeQuery = client.EvaluationQuery

// judgeEvaluations fills d's evaluations: one page from the API, or, when filtering by score or
// prompt, a page of those among the newest evaluationScan that match.
func (s *server) judgeEvaluations(r *http.Request, j api.Judge, f evaluationFilter, q judgeQuery, local localFilter, d *judgePageData) error {
	c, ctx := s.api(r)
	offset := (f.Page - 1) * evaluationsPerPage
	var evs []api.Evaluation
	if local.any() {
		q.Limit = evaluationScan
		res, err := c.Evaluations(ctx, j.ID, q)
		if err != nil {
			return err
		}
		d.Scanned = res.Total > len(res.Evaluations)
		d.Truncated = res.Truncated
		evs = res.Evaluations
	} else {
		q.Limit, q.Offset = evaluationsPerPage, offset
		res, err := c.Evaluations(ctx, j.ID, q)
		if err != nil {
			return err
		}
		d.Total, evs, d.Truncated = res.Total, res.Evaluations, res.Truncated
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.SpanID
	}
	spans, err := spansByID(ctx, c, ids)
	if err != nil {
		return err
	}
	fallback := deref(j.TargetPrompt)
	if fallback == "" && len(j.LinkedPrompts) > 0 {
		fallback = j.LinkedPrompts[0]
	}
	var rows []evaluationRow
	for _, e := range evs {
		row := evaluationRow{Evaluation: e, Verdict: "fail", Score: "–", Confidence: "–", CalibrateSlug: fallback}
		if e.EvaluationResult {
			row.Verdict = "pass"
		}
		if e.Score != nil {
			row.Score = num(*e.Score)
		}
		if e.ConfidenceScore != nil {
			row.Confidence = num(*e.ConfidenceScore)
		}
		if sp, ok := spans[e.SpanID]; ok {
			row.SpanURL = spanURL(sp.TraceID, sp.ID)
			row.PromptSlug = sp.PromptSlug
			if sp.PromptSlug != "" {
				row.CalibrateSlug = sp.PromptSlug
			}
		}
		if local.any() && !local.matches(row) {
			continue
		}
		rows = append(rows, row)
	}
	if local.any() {
		d.Total = len(rows)
		rows = rows[min(offset, len(rows)):min(offset+evaluationsPerPage, len(rows))]
	}
	d.Evaluations = rows
	if f.Page > 1 {
		d.Prev = "?" + f.query(f.Page-1).Encode()
	}
	if offset+evaluationsPerPage < d.Total {
		d.Next = "?" + f.query(f.Page+1).Encode()
	}
	return nil
}

func (l localFilter) matches(row evaluationRow) bool {
	s := row.Evaluation.Score
	switch {
	case l.Min != nil && (s == nil || *s < *l.Min), l.Max != nil && (s == nil || *s > *l.Max):
		return false
	case l.Prompt != "" && row.PromptSlug != l.Prompt:
		return false
	}
	return true
}
