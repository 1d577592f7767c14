package dashboard

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// judgeRoutes registers the judges pages: GET /ui/judges, GET /ui/judges/{judge_id} and their forms.
// Every read and write goes through the judges REST API (c.Judges, c.CreateJudge, ...), so its
// validation, roles and project scope apply; the one thing computed here is the criteria preview,
// with the function the API infers criteria with (judge.InferCriteria).
func (s *server) judgeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/judges", s.judges)
	mux.HandleFunc("GET /ui/judges/new", s.newJudge)
	mux.HandleFunc("POST /ui/judges", s.createJudge)
	mux.HandleFunc("GET /ui/judges/criteria-preview", s.criteriaPreview)
	mux.HandleFunc("GET /ui/judges/{judge_id}", s.judge)
	mux.HandleFunc("GET /ui/judges/{judge_id}/edit", s.editJudge)
	mux.HandleFunc("POST /ui/judges/{judge_id}/edit", s.updateJudge)
	mux.HandleFunc("POST /ui/judges/{judge_id}/links", s.linkJudge)
	mux.HandleFunc("POST /ui/judges/{judge_id}/calibrate", s.calibrate)
	mux.HandleFunc("POST /ui/judges/{judge_id}/backfill", s.backfill)
	mux.HandleFunc("POST /ui/judges/{judge_id}/optimize", s.optimizeJudge)
}

// judgeRow is one judge as the list shows it.
type judgeRow struct {
	ID, Name, Status, Kind, Target, Evaluations, PassRate string
	Linked                                                []string
	URL                                                   string
}

// judges serves GET /ui/judges: the project's judges, oldest first, or how to create one.
func (s *server) judges(w http.ResponseWriter, r *http.Request) {
	c, ctx := s.api(r)
	list, err := c.Judges(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := make([]judgeRow, len(list))
	for i, j := range list {
		rows[i] = judgeRow{
			ID: j.ID, Name: j.Name, Status: j.Status, Kind: kindOf(j), Target: deref(j.TargetPrompt),
			Evaluations: strconv.FormatInt(j.EvaluationCount, 10), PassRate: percent(j.PassRate),
			Linked: j.LinkedPrompts, URL: judgeURL(j.ID),
		}
	}
	s.render(w, r, http.StatusOK, "judges", page{Title: "Judges", Nav: "judges", Data: rows})
}

func judgeURL(id string) string { return "/ui/judges/" + url.PathEscape(id) }

// kindOf words a judge's scoring: "pass/fail" or "score 1–10, passes at 7".
func kindOf(j api.Judge) string {
	if j.EvaluationType != api.EvaluationScored || j.ScoreMin == nil || j.ScoreMax == nil {
		return "pass/fail"
	}
	k := "score " + num(*j.ScoreMin) + "–" + num(*j.ScoreMax)
	if j.PassThreshold != nil {
		k += ", passes at " + num(*j.PassThreshold)
	}
	return k
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// percent is a rate of 0 to 1 as a percentage, "–" when unknown.
func percent(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}

// judgeForm is the create and edit form: what the user typed, kept on an error.
type judgeForm struct {
	Name, Template, EvaluationType, ScoreMin, ScoreMax, PassThreshold string
	SampleRate, Model, TargetPrompt, Tags, Match                      string
	Paused                                                            bool
}

// judgeFormData is what the form page shows.
type judgeFormData struct {
	// Action is the URL the form posts to; Judge is the judge being edited, nil on create.
	Action  string
	Judge   *api.Judge
	Form    judgeForm
	Error   string
	Preview criteriaPreview
	Prompts []string
}

// criteriaPreview is the criteria the API would infer from a template.
type criteriaPreview struct {
	Criteria []judge.Criterion
	Shown    bool // the template was given (an empty one has nothing to show)
}

func previewOf(template string) criteriaPreview {
	return criteriaPreview{Criteria: judge.InferCriteria(template), Shown: strings.TrimSpace(template) != ""}
}

// newJudge serves GET /ui/judges/new: the empty form.
func (s *server) newJudge(w http.ResponseWriter, r *http.Request) {
	f := judgeForm{EvaluationType: api.EvaluationBinary, SampleRate: "1", Match: "all", TargetPrompt: r.URL.Query().Get("prompt")}
	s.renderJudgeForm(w, r, http.StatusOK, judgeFormData{Action: "/ui/judges", Form: f})
}

func (s *server) renderJudgeForm(w http.ResponseWriter, r *http.Request, status int, d judgeFormData) {
	c, ctx := s.api(r)
	list, err := c.Prompts(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, p := range list {
		d.Prompts = append(d.Prompts, p.Slug)
	}
	if !d.Preview.Shown {
		d.Preview = previewOf(d.Form.Template)
	}
	title := "New judge"
	if d.Judge != nil {
		title = "Edit " + d.Judge.Name
	}
	s.render(w, r, status, "judge-form", page{Title: title, Nav: "judges", Data: d})
}

// readJudgeForm reads the posted form.
func readJudgeForm(r *http.Request) judgeForm {
	p := r.PostForm
	return judgeForm{
		Name: p.Get("name"), Template: p.Get("template"), EvaluationType: p.Get("evaluation_type"),
		ScoreMin: p.Get("score_min"), ScoreMax: p.Get("score_max"), PassThreshold: p.Get("pass_threshold"),
		SampleRate: p.Get("sample_rate"), Model: p.Get("model"), TargetPrompt: p.Get("target_prompt"),
		Tags: p.Get("tags"), Match: p.Get("match"), Paused: p.Get("paused") == "on",
	}
}

// request turns the form into the API's request. On edit, every field is sent: an empty model,
// target prompt or tag filter clears it; empty numbers keep the judge's.
func (f judgeForm) request(edit bool) (api.JudgeRequest, error) {
	var req api.JudgeRequest
	req.Name, req.Template = &f.Name, &f.Template
	if f.EvaluationType != "" {
		req.EvaluationType = &f.EvaluationType
	}
	for _, n := range []struct {
		name, text string
		dst        **float64
	}{
		{"Lowest score", f.ScoreMin, &req.ScoreMin}, {"Highest score", f.ScoreMax, &req.ScoreMax},
		{"Pass threshold", f.PassThreshold, &req.PassThreshold}, {"Sample rate", f.SampleRate, &req.SampleRate},
	} {
		v, err := optionalNumber(n.name, n.text)
		if err != nil {
			return req, err
		}
		*n.dst = v
	}
	if f.EvaluationType == api.EvaluationBinary {
		req.ScoreMin, req.ScoreMax, req.PassThreshold = nil, nil, nil
	}
	optional := func(v string) api.Nullable[string] {
		switch v = strings.TrimSpace(v); {
		case v != "":
			return api.Some(v)
		case edit:
			return api.Null[string]()
		}
		return api.Nullable[string]{}
	}
	req.Model, req.TargetPrompt = optional(f.Model), optional(f.TargetPrompt)
	tags, err := parseTags(f.Tags)
	if err != nil {
		return req, err
	}
	switch {
	case len(tags) > 0:
		req.TagFilter = api.Some(api.TagFilter{Tags: tags, Match: f.Match})
	case edit:
		req.TagFilter = api.Null[api.TagFilter]()
	}
	if edit {
		req.Paused = &f.Paused
	}
	return req, nil
}

func optionalNumber(name, text string) (*float64, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	v, ok := parseNumber(text)
	if !ok {
		return nil, errs.Invalid("%s must be a number, as 0.5.", name)
	}
	return &v, nil
}

// parseTags reads the tag filter field: one key=value a line; a key given twice takes either value.
func parseTags(text string) (map[string][]string, error) {
	out := map[string][]string{}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, errs.Invalid("Write each tag as key=value on a line of its own (%q is not).", line)
		}
		k = strings.TrimSpace(k)
		out[k] = append(out[k], strings.TrimSpace(v))
	}
	return out, nil
}

// tagsText is a tag filter as the form's field shows it.
func tagsText(f *api.TagFilter) (text, match string) {
	if f == nil {
		return "", "all"
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(f.Tags)) {
		for _, v := range f.Tags[k] {
			lines = append(lines, k+"="+v)
		}
	}
	return strings.Join(lines, "\n"), cmp.Or(f.Match, "all")
}

// createJudge serves POST /ui/judges: with action=preview the form again with the criteria of
// its template, else the judge created through the API and its page.
func (s *server) createJudge(w http.ResponseWriter, r *http.Request) {
	f := readJudgeForm(r)
	d := judgeFormData{Action: "/ui/judges", Form: f}
	if r.PostForm.Get("action") == "preview" {
		s.renderJudgeForm(w, r, http.StatusOK, d)
		return
	}
	req, err := f.request(false)
	if err == nil {
		c, ctx := s.api(r)
		var j api.Judge
		if j, err = c.CreateJudge(ctx, req); err == nil {
			http.Redirect(w, r, judgeURL(j.ID), http.StatusSeeOther)
			return
		}
	}
	s.formFailed(w, r, d, err)
}

// formFailed shows a client error in the form, with the input kept; anything else is the error page.
func (s *server) formFailed(w http.ResponseWriter, r *http.Request, d judgeFormData, err error) {
	status, msg, ok := formError(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	d.Error = msg
	s.renderJudgeForm(w, r, status, d)
}

// readJudge reads the judge of the path through the API.
func (s *server) readJudge(r *http.Request) (api.Judge, error) {
	id := r.PathValue("judge_id")
	if err := validID("judge", id); err != nil {
		return api.Judge{}, err
	}
	c, ctx := s.api(r)
	return c.Judge(ctx, id)
}

// editJudge serves GET /ui/judges/{judge_id}/edit: the form filled with the judge.
func (s *server) editJudge(w http.ResponseWriter, r *http.Request) {
	j, err := s.readJudge(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := judgeForm{
		Name: j.Name, Template: j.Template, EvaluationType: j.EvaluationType, SampleRate: num(j.SampleRate),
		Model: deref(j.Model), TargetPrompt: deref(j.TargetPrompt), Paused: j.Paused,
	}
	for _, p := range []struct {
		v   *float64
		dst *string
	}{{j.ScoreMin, &f.ScoreMin}, {j.ScoreMax, &f.ScoreMax}, {j.PassThreshold, &f.PassThreshold}} {
		if p.v != nil {
			*p.dst = num(*p.v)
		}
	}
	f.Tags, f.Match = tagsText(j.TagFilter)
	s.renderJudgeForm(w, r, http.StatusOK, judgeFormData{Action: judgeURL(j.ID) + "/edit", Judge: &j, Form: f})
}

// updateJudge serves POST /ui/judges/{judge_id}/edit: the changes sent with PATCH.
func (s *server) updateJudge(w http.ResponseWriter, r *http.Request) {
	j, err := s.readJudge(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := readJudgeForm(r)
	d := judgeFormData{Action: judgeURL(j.ID) + "/edit", Judge: &j, Form: f}
	if r.PostForm.Get("action") == "preview" {
		s.renderJudgeForm(w, r, http.StatusOK, d)
		return
	}
	req, err := f.request(true)
	if err == nil {
		c, ctx := s.api(r)
		if _, err = c.UpdateJudge(ctx, j.ID, req); err == nil {
			http.Redirect(w, r, judgeURL(j.ID), http.StatusSeeOther)
			return
		}
	}
	s.formFailed(w, r, d, err)
}

// criteriaPreview serves GET /ui/judges/criteria-preview?template=...: the criteria the API
// would infer from the template, as a fragment for the form's script.
func (s *server) criteriaPreview(w http.ResponseWriter, r *http.Request) {
	t := r.URL.Query().Get("template")
	if len(t) > api.MaxJudgeTemplateBytes {
		s.fail(w, r, errs.Invalid("A template has at most %d bytes.", api.MaxJudgeTemplateBytes))
		return
	}
	s.render(w, r, http.StatusOK, "judge-criteria-fragment", page{Data: previewOf(t)})
}

// linkJudge serves POST /ui/judges/{judge_id}/links: link (action=link) or unlink
// (action=unlink, after a confirmation page: confirm=yes) the judge and the prompt slug.
func (s *server) linkJudge(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("judge_id")
	if err := validID("judge", id); err != nil {
		s.fail(w, r, err)
		return
	}
	slug := strings.TrimSpace(r.PostForm.Get("slug"))
	if slug == "" {
		s.fail(w, r, errs.Invalid("Choose a prompt to link the judge to."))
		return
	}
	unlink := r.PostForm.Get("action") == "unlink"
	if unlink && r.PostForm.Get("confirm") != "yes" {
		// Unlinking stops the judge's evaluations of the prompt: say so, and ask.
		j, err := s.readJudge(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.render(w, r, http.StatusOK, "judge-unlink", page{Title: "Unlink " + j.Name, Nav: "judges", Data: unlinkData{Judge: j, URL: judgeURL(j.ID), Slug: slug}})
		return
	}
	c, ctx := s.api(r)
	if _, err := c.LinkJudge(ctx, slug, id, !unlink); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, judgeURL(id)+"#links", http.StatusSeeOther)
}

// unlinkData is what the unlink confirmation shows.
type unlinkData struct {
	Judge     api.Judge
	URL, Slug string
}

type judgePageData struct {
	Judge                           api.Judge
	URL, Kind, SampleRate, PassRate string
	Versions                        []api.JudgeTemplateVersion
	Prompts                         []string // the project's prompts not linked yet
	Filter                          evaluationFilter
	Back                            string // the filters, for the calibration forms
	Evaluations                     []evaluationRow
	Total                           int
	Scanned                         bool // filtered among the newest evaluationScan
	Truncated                       bool // the API stopped at its scan bound (X-Plume-Scan-Truncated)
	Prev, Next                      string
	Perf                            api.JudgePerformance
	PerfFigures                     []figure
	Chart                           []perfPoint
	Charted                         bool // some window has calibrations
	Scored                          bool
	// Criteria is the agreement per criterion, one row each.
	Criteria []criterionRow
	// Runs are the judge's newest optimization runs; MoreRuns says there are older ones.
	Runs     []runRow
	MoreRuns bool
	// Backfill and Optimize are the forms, as typed when refused; BackfillMax the API's bound.
	Backfill    backfillInput
	BackfillMax int
	Optimize    startForm
	// Notice is the message of a backfill just queued.
	Notice string
	// Calibration is a failed calibration form, shown again at its evaluation; FormError its
	// message when that evaluation is not on the page.
	Calibration calibrationInput
	FormError   string
}

// backfillInput is the backfill form as posted.
type backfillInput struct{ Count, Error string }

// judgeRunsShown is how many of its runs the judge page lists.
const judgeRunsShown = 10

// judge serves GET /ui/judges/{judge_id}: the judge, its template versions, its prompts, its
// evaluations with filters, calibration forms and its agreement with people over time.
func (s *server) judge(w http.ResponseWriter, r *http.Request) {
	j, err := s.readJudge(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.judgePage(r, j, r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("backfilled")); err == nil && n > 0 {
		d.Notice = fmt.Sprintf("Backfill queued: the judge evaluates its %d most recent matching spans within minutes (spans it evaluated already are skipped).", n)
	}
	s.render(w, r, http.StatusOK, "judge", page{Title: "Judge " + j.Name, Nav: "judges", Data: d})
}

// judgePage reads what the page of judge j shows, its evaluations filtered by q.
func (s *server) judgePage(r *http.Request, j api.Judge, q url.Values) (judgePageData, error) {
	filter, apiQuery, local, err := readEvaluationFilter(q)
	if err != nil {
		return judgePageData{}, err
	}
	c, ctx := s.api(r)
	d := judgePageData{
		Judge: j, URL: judgeURL(j.ID), Kind: kindOf(j), SampleRate: percent(&j.SampleRate), PassRate: percent(j.PassRate),
		Filter: filter, Scored: j.EvaluationType == api.EvaluationScored,
		Backfill: backfillInput{Count: strconv.Itoa(cmp.Or(j.Backfill, 100))}, BackfillMax: api.MaxJudgeBackfill,
		Optimize: startForm{Strategy: "quick_refine"},
	}
	if q := filter.query(filter.Page).Encode(); q != "" {
		d.Back = "?" + q
	}
	// The parts are independent reads, each filling its own fields of d: made at once, the page
	// takes as long as its slowest part (the weekly chart), not as long as all of them.
	var g errgroup.Group
	g.Go(func() (err error) {
		d.Versions, err = c.JudgeVersions(ctx, j.ID)
		return err
	})
	g.Go(func() error {
		list, err := c.Prompts(ctx)
		for _, p := range list {
			if !slices.Contains(j.LinkedPrompts, p.Slug) {
				d.Prompts = append(d.Prompts, p.Slug)
			}
		}
		return err
	})
	g.Go(func() error { return s.judgeEvaluations(r, j, filter, apiQuery, local, &d) })
	g.Go(func() (err error) {
		if d.Perf, err = c.JudgePerformance(ctx, j.ID, time.Time{}, time.Time{}); err != nil {
			return err
		}
		d.PerfFigures = perfFigures(d.Perf)
		for _, c := range d.Perf.Criteria {
			d.Criteria = append(d.Criteria, criterionRow{Key: c.Key, N: strconv.Itoa(c.Verdict.N), Accuracy: percent(c.Verdict.Accuracy),
				Kappa: decimal(c.Verdict.Kappa), TPR: percent(c.Verdict.TruePositiveRate), TNR: percent(c.Verdict.TrueNegativeRate),
				MAE: decimal(c.Score.MeanAbsoluteError)})
		}
		return nil
	})
	g.Go(func() error {
		runs, err := c.JudgeOptimizationRuns(ctx, j.ID, judgeRunsShown+1, 0)
		d.Runs, _, _ = runRows(runs[:min(len(runs), judgeRunsShown)], "", 0)
		d.MoreRuns = len(runs) > judgeRunsShown
		return err
	})
	g.Go(func() (err error) {
		d.Chart, err = s.perfChart(r, j.ID)
		return err
	})
	if err := g.Wait(); err != nil {
		return d, err
	}
	d.Charted = slices.ContainsFunc(d.Chart, func(p perfPoint) bool { return p.Has })
	return d, nil
}

// backfill serves POST /ui/judges/{judge_id}/backfill: without confirm=yes the confirm page (a
// backfill calls the judge's model once a span), with it the request sent to the API (POST
// .../backfill) and back to the judge with a notice. A count that is no whole number, or one
// the API refuses, shows the judge page with the form's message (400, or 409 for a paused judge).
func (s *server) backfill(w http.ResponseWriter, r *http.Request) {
	j, err := s.readJudge(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	in := backfillInput{Count: strings.TrimSpace(r.PostForm.Get("count"))}
	n, err := strconv.Atoi(in.Count)
	switch {
	case err != nil:
		err = errs.Invalid("The number of spans must be a whole number from 1 to %d.", api.MaxJudgeBackfill)
	case r.PostForm.Get("confirm") != "yes" && (n < 1 || n > api.MaxJudgeBackfill):
		// The API's bound, said before asking to confirm a backfill it would refuse.
		err = errs.Invalid("The number of spans must be from 1 to %d.", api.MaxJudgeBackfill)
	case r.PostForm.Get("confirm") != "yes":
		s.render(w, r, http.StatusOK, "judge-backfill", page{Title: "Backfill " + j.Name, Nav: "judges",
			Data: backfillConfirm{Judge: j, URL: judgeURL(j.ID), Count: n}})
		return
	default:
		c, ctx := s.api(r)
		var res api.Backfill
		if res, err = c.BackfillJudge(ctx, j.ID, n); err == nil {
			http.Redirect(w, r, judgeURL(j.ID)+"?backfilled="+strconv.Itoa(res.Count)+"#backfill", http.StatusSeeOther)
			return
		}
	}
	s.judgeFormFailed(w, r, j, err, func(d *judgePageData, msg string) { in.Error = msg; d.Backfill = in })
}

// backfillConfirm is what the backfill's confirm page shows.
type backfillConfirm struct {
	Judge api.Judge
	URL   string
	Count int
}

// judgeFormFailed shows the judge page again with a refused form (set by keep), or the error page.
func (s *server) judgeFormFailed(w http.ResponseWriter, r *http.Request, j api.Judge, err error, keep func(*judgePageData, string)) {
	status, msg, ok := formError(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	d, perr := s.judgePage(r, j, url.Values{})
	if perr != nil {
		s.fail(w, r, perr)
		return
	}
	keep(&d, msg)
	s.render(w, r, status, "judge", page{Title: "Judge " + j.Name, Nav: "judges", Data: d})
}

// optimizeJudge serves POST /ui/judges/{judge_id}/optimize: an optimization run of the judge's
// template started as POST .../judges/{judge_id}/optimization-runs starts it (quick_refine,
// against the judge's calibrations; a budget and a seed), and the browser sent to its page.
func (s *server) optimizeJudge(w http.ResponseWriter, r *http.Request) {
	j, err := s.readJudge(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := r.PostForm
	f := startForm{Strategy: "quick_refine", MaxCalls: p.Get("max_model_calls"), MaxCost: p.Get("max_cost_usd"), Seed: p.Get("seed")}
	req, err := startRequest(f, nil)
	if err == nil {
		c, ctx := s.api(r)
		var run api.OptimizationRun
		if run, err = c.StartJudgeOptimization(ctx, j.ID, req); err == nil {
			http.Redirect(w, r, runURL(run.ID), http.StatusSeeOther)
			return
		}
	}
	s.judgeFormFailed(w, r, j, err, func(d *judgePageData, msg string) { f.Error = msg; d.Optimize = f })
}
