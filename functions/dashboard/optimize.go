package dashboard

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
)

// The optimization pages start, watch, cancel and deploy optimization runs through the REST
// API (api.go): the API validates the request, scopes every run to the session's project and
// binds a deploy to the receipt of its preview, so that the dashboard's deploy is the API's
// two-step deploy, never a second one.

// optimizeRoutes registers the optimization pages: /ui/prompts/{slug}/optimize and /ui/optimization-runs/{run_id}.
func (s *server) optimizeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/prompts/{slug}/optimize", s.optimizePage)
	mux.HandleFunc("POST /ui/prompts/{slug}/optimize", s.startOptimization)
	mux.HandleFunc("GET /ui/optimization-runs/{run_id}", s.runPage)
	mux.HandleFunc("POST /ui/optimization-runs/{run_id}/cancel", s.cancelRun)
	mux.HandleFunc("POST /ui/optimization-runs/{run_id}/review-deploy", s.reviewDeploy)
	mux.HandleFunc("POST /ui/optimization-runs/{run_id}/deploy", s.deployRun)
}

// optimizerTypes are the strategies the start form offers, as the API names them.
var optimizerTypes = []string{"quick_refine", "dspy_bootstrap", "dspy_gepa", "auto"}

// runsPerPage is how many runs the optimize page lists.
const runsPerPage = 50

// runURL is the page of run id.
func runURL(id string) string { return "/ui/optimization-runs/" + url.PathEscape(id) }

// runOver reports whether a run will change no more.
func runOver(status string) bool {
	return status == "succeeded" || status == "failed" || status == "cancelled"
}

// runRow is a run as the optimize page lists it.
type runRow struct {
	ID, URL, Status, Type, Requested string
	CreatedAt                        string
	// Scored is set when the run has metrics: Baseline and Candidate are their overall scores.
	Scored              bool
	Baseline, Candidate float64
	Recommendation      string
}

// intentField is one judge of the project on the start form, with what the user typed.
type intentField struct {
	ID, Name      string
	Linked        bool
	Use           bool
	Weight, Floor string
}

// startForm is the start form as the user filled it in (kept as typed when it is refused).
type startForm struct {
	Strategy          string
	Intents           []intentField
	MaxCalls, MaxCost string
	Models, Seed      string
	Error             string
	Strategies        []string
}

type optimizeData struct {
	Slug, PromptURL, URL string
	Baseline             int
	Runs                 []runRow
	// Prev and Next are the links to the newer and older runs, "" when there are none.
	Prev, Next string
	Form       startForm
}

// optimizePage serves GET /ui/prompts/{slug}/optimize: the prompt's runs, newest first, and
// the form that starts one.
func (s *server) optimizePage(w http.ResponseWriter, r *http.Request) {
	d, err := s.optimizeData(r, r.PathValue("slug"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "optimize", page{Title: "Optimize " + d.Slug, Nav: "prompts", Data: d})
}

// optimizeData reads the prompt, its runs and the project's judges; the form is filled with
// the defaults (quick_refine, the prompt's linked judges at weight 1).
func (s *server) optimizeData(r *http.Request, slug string) (optimizeData, error) {
	if !api.IsSlug(slug) {
		return optimizeData{}, errs.NotFound("There is no such prompt.")
	}
	c, ctx := s.api(r)
	latest, err := c.PromptVersion(ctx, slug, client.PromptSelector{})
	if err != nil {
		return optimizeData{}, err
	}
	offset, err := offsetOf(r.URL.Query())
	if err != nil {
		return optimizeData{}, err
	}
	runs, err := c.PromptOptimizationRuns(ctx, slug, runsPerPage+1, offset)
	if err != nil {
		return optimizeData{}, err
	}
	judges, err := c.Judges(ctx)
	if err != nil {
		return optimizeData{}, err
	}
	d := optimizeData{Slug: slug, PromptURL: "/ui/prompts/" + url.PathEscape(slug), Baseline: latest.Version,
		Form: startForm{Strategy: "quick_refine", Strategies: optimizerTypes}}
	d.URL = d.PromptURL + "/optimize"
	d.Runs, d.Prev, d.Next = runRows(runs, d.URL, offset)
	for _, j := range judges {
		linked := slices.Contains(j.LinkedPrompts, slug)
		d.Form.Intents = append(d.Form.Intents, intentField{ID: j.ID, Name: j.Name, Linked: linked, Use: linked, Weight: "1"})
	}
	return d, nil
}

// runRows are the rows of a page of runs read with a limit of runsPerPage+1 at offset, and the
// links (to path) to the newer and older pages.
func runRows(runs []api.OptimizationRun, path string, offset int) (rows []runRow, prev, next string) {
	runs, prev, next = paginate(runs, offset, runsPerPage, pathPages(path))
	for _, run := range runs {
		row := runRow{ID: run.ID, URL: runURL(run.ID), Status: run.Status, Type: run.OptimizerType, Requested: run.Requested,
			CreatedAt: run.CreatedAt.UTC().Format("2006-01-02 15:04:05") + " UTC"}
		if m := run.Metrics; m != nil {
			row.Scored, row.Baseline, row.Candidate, row.Recommendation = true, m.Baseline.Overall, m.Candidate.Overall, m.Recommendation
		}
		rows = append(rows, row)
	}
	return rows, prev, next
}

// startOptimization serves POST /ui/prompts/{slug}/optimize: the run is started as POST
// .../optimization-runs starts it, and the browser sent to its page. A refused request
// shows the form again with the message and what was typed (400, or the API's status).
func (s *server) startOptimization(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	d, err := s.optimizeData(r, slug)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	form := r.PostForm
	d.Form.Strategy = form.Get("strategy")
	d.Form.MaxCalls, d.Form.MaxCost = form.Get("max_model_calls"), form.Get("max_cost_usd")
	d.Form.Models, d.Form.Seed = form.Get("models"), form.Get("seed")
	chosen := form["intent"]
	for i := range d.Form.Intents {
		in := &d.Form.Intents[i]
		in.Use = slices.Contains(chosen, in.ID)
		in.Weight, in.Floor = form.Get("weight_"+in.ID), form.Get("min_"+in.ID)
	}
	req, err := startRequest(d.Form, chosen)
	if err == nil {
		c, ctx := s.api(r)
		var run api.OptimizationRun
		run, err = c.StartPromptOptimization(ctx, slug, req)
		if err == nil {
			http.Redirect(w, r, runURL(run.ID), http.StatusSeeOther)
			return
		}
	}
	status, msg, ok := startError(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	d.Form.Error = msg
	s.render(w, r, status, "optimize", page{Title: "Optimize " + d.Slug, Nav: "prompts", Data: d})
}

// startError is how the start form shows err: formError's refusals, and a judge the form
// named that does not exist (the API's 404) as the form's mistake (400).
func startError(err error) (status int, msg string, ok bool) {
	var e *errs.Error
	if errors.As(apiError(err), &e) && e.Code == errs.CodeNotFound {
		return http.StatusBadRequest, e.Message, true
	}
	return formError(err)
}

// startRequest reads the form into the API's request. Numbers are checked only for being
// numbers; their ranges are the API's to check. chosen are the judges ticked, in form order.
func startRequest(f startForm, chosen []string) (api.OptimizationRunRequest, error) {
	req := api.OptimizationRunRequest{OptimizerType: f.Strategy}
	for _, in := range f.Intents {
		if !in.Use {
			continue
		}
		intent := api.OptimizationIntent{JudgeID: in.ID}
		if v := strings.TrimSpace(in.Weight); v != "" {
			w, ok := parseNumber(v)
			if !ok {
				return req, errs.Invalid("The weight of judge %s must be a number, such as 1 or 0.5.", in.Name)
			}
			intent.Weight = w
		}
		if v := strings.TrimSpace(in.Floor); v != "" {
			m, ok := parseNumber(v)
			if !ok {
				return req, errs.Invalid("The minimum score of judge %s must be a number from 0 to 1.", in.Name)
			}
			intent.MinThreshold = &m
		}
		req.Config.Intents = append(req.Config.Intents, intent)
	}
	for _, id := range chosen { // a judge the page did not offer: the API says whether it exists
		if !slices.ContainsFunc(f.Intents, func(in intentField) bool { return in.ID == id }) {
			req.Config.Intents = append(req.Config.Intents, api.OptimizationIntent{JudgeID: id})
		}
	}
	calls, cost := strings.TrimSpace(f.MaxCalls), strings.TrimSpace(f.MaxCost)
	if calls != "" || cost != "" {
		b := &api.OptimizationBudget{}
		if calls != "" {
			n, err := strconv.Atoi(calls)
			if err != nil {
				return req, errs.Invalid("The most model calls must be a whole number, such as 200.")
			}
			b.MaxModelCalls = n
		}
		if cost != "" {
			usd, ok := parseNumber(strings.TrimPrefix(cost, "$"))
			if !ok {
				return req, errs.Invalid("The most cost must be an amount of US dollars, such as 2.50.")
			}
			b.MaxCostUSD = usd
		}
		req.Config.Budget = b
	}
	for m := range strings.SplitSeq(f.Models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			req.Config.Models = append(req.Config.Models, m)
		}
	}
	if v := strings.TrimSpace(f.Seed); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return req, errs.Invalid("The seed must be a whole number.")
		}
		req.Config.Seed = &seed
	}
	return req, nil
}

// intentScore is one intent of a run with its scores.
type intentScore struct {
	JudgeID, Name string
	Weight        float64
	// Floor, Baseline and Candidate are scores as shown, "–" when there is none.
	Floor, Baseline, Candidate string
}

// regressedRow is a held-out example the candidate scored lower on; URL is its span's page,
// "" when the example is no span of the project.
type regressedRow struct{ ID, URL string }

// agreementRow is one figure of a judge run's agreement with people, the template's against
// the candidate's.
type agreementRow struct{ Label, Baseline, Candidate, TestID string }

type runData struct {
	Run  api.OptimizationRun
	URL  string
	Nav  string // the section of the nav: prompts, or judges for a judge run
	Over bool
	// Target is the prompt's slug or the judge's name; TargetURL its page.
	Target, TargetURL string
	Judge             bool
	Intents           []intentScore
	Regressed         []regressedRow
	// Agreement is a judge run's agreement with people, nil for a prompt run.
	Agreement []agreementRow
	Diff      *diffResult
	// Deployed is the version a deploy just made production's (from the redirect), 0 if none.
	Deployed int
	// CallsPct and CostPct are how much of its budget the run spent (0 to 100), -1 if unbounded.
	CallsPct, CostPct int
}

// runPage serves GET /ui/optimization-runs/{run_id}: the run's state and progress, its
// candidate against the baseline, scores, simulations and recommendation, and the actions it
// allows. The script fetches it with X-Plume-Fragment: 1 every 2 s until the run is over.
func (s *server) runPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.runData(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("deployed")); err == nil && n > 0 {
		d.Deployed = n
	}
	w.Header().Set("Vary", "X-Plume-Fragment")
	if r.Header.Get("X-Plume-Fragment") == "1" {
		s.render(w, r, http.StatusOK, "run-fragment", page{Data: d})
		return
	}
	s.render(w, r, http.StatusOK, "run", page{Title: "Optimization run of " + d.Target, Nav: d.Nav, Data: d})
}

// runData reads the run of the path and the judges its intents name.
func (s *server) runData(r *http.Request) (runData, error) {
	id := r.PathValue("run_id")
	if err := validID("optimization run", id); err != nil {
		return runData{}, err
	}
	c, ctx := s.api(r)
	run, err := c.OptimizationRun(ctx, id)
	if err != nil {
		return runData{}, err
	}
	judges, err := c.Judges(ctx)
	if err != nil {
		return runData{}, err
	}
	names := map[string]string{}
	for _, j := range judges {
		names[j.ID] = j.Name
	}
	d := runData{Run: run, URL: runURL(run.ID), Nav: "prompts", Over: runOver(run.Status), CallsPct: -1, CostPct: -1}
	switch {
	case run.PromptSlug != nil:
		d.Target, d.TargetURL = *run.PromptSlug, "/ui/prompts/"+url.PathEscape(*run.PromptSlug)
	case run.JudgeID != nil:
		d.Judge, d.Nav, d.Target, d.TargetURL = true, "judges", cmp.Or(names[*run.JudgeID], *run.JudgeID), judgeURL(*run.JudgeID)
	}
	if m := run.Metrics; m != nil {
		if d.Regressed, err = s.regressed(r, m.Regressed); err != nil {
			return runData{}, err
		}
		d.Agreement = agreementRows(m.BaselineAgreement, m.CandidateAgreement)
	}
	for _, in := range run.Config.Intents {
		is := intentScore{JudgeID: in.JudgeID, Name: cmp.Or(names[in.JudgeID], in.JudgeID), Weight: in.Weight,
			Floor: score(in.MinThreshold), Baseline: "–", Candidate: "–"}
		if m := run.Metrics; m != nil {
			if v, ok := m.Baseline.Intents[in.JudgeID]; ok {
				is.Baseline = score(&v)
			}
			if v, ok := m.Candidate.Intents[in.JudgeID]; ok {
				is.Candidate = score(&v)
			}
		}
		d.Intents = append(d.Intents, is)
	}
	if c := run.Candidate; c != nil {
		res := diffText(run.Baseline.Content, c.Content)
		d.Diff = &res
	}
	if b := run.Config.Budget; b != nil {
		if b.MaxModelCalls > 0 {
			d.CallsPct = min(100, run.Progress.ModelCalls*100/b.MaxModelCalls)
		}
		if b.MaxCostUSD > 0 {
			d.CostPct = min(100, int(run.Progress.CostUSD*100/b.MaxCostUSD))
		}
	}
	return d, nil
}

// regressed links the regressed examples ids to their spans, found in one batch; an id that
// is no span of the project stays unlinked.
func (s *server) regressed(r *http.Request, ids []string) ([]regressedRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	c, ctx := s.api(r)
	spans, err := spansByID(ctx, c, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]regressedRow, len(ids))
	for i, id := range ids {
		rows[i].ID = id
		if sp, ok := spans[id]; ok {
			rows[i].URL = spanURL(sp.TraceID, sp.ID)
		}
	}
	return rows, nil
}

// agreementRows are a judge run's agreement figures, nil when the run has none.
func agreementRows(before, after *api.JudgeAgreement) []agreementRow {
	if before == nil && after == nil {
		return nil
	}
	b, a := cmp.Or(before, &api.JudgeAgreement{}), cmp.Or(after, &api.JudgeAgreement{})
	return []agreementRow{
		{"Calibrations compared", strconv.Itoa(b.N), strconv.Itoa(a.N), "agree-n"},
		{"Accuracy", percent(b.Accuracy), percent(a.Accuracy), "agree-accuracy"},
		{"Cohen's kappa", decimal(b.Kappa), decimal(a.Kappa), "agree-kappa"},
		{"True positive rate", percent(b.TruePositiveRate), percent(a.TruePositiveRate), "agree-tpr"},
		{"True negative rate", percent(b.TrueNegativeRate), percent(a.TrueNegativeRate), "agree-tnr"},
	}
}

// score is a score from 0 to 1 as the pages show it, "–" for none.
func score(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// derefInt is *n, 0 for nil.
func derefInt(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// cancelRun serves POST /ui/optimization-runs/{run_id}/cancel: without confirm=yes it asks
// (the confirm page), with it the run is cancelled as POST ...:cancel cancels it.
func (s *server) cancelRun(w http.ResponseWriter, r *http.Request) {
	d, err := s.runData(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		s.render(w, r, http.StatusOK, "run-cancel", page{Title: "Cancel the run of " + d.Target, Nav: d.Nav, Data: d})
		return
	}
	c, ctx := s.api(r)
	if _, err := c.CancelOptimization(ctx, d.Run.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, d.URL, http.StatusSeeOther)
}

// deployData is the confirm page of a deploy: what it changes and the receipt that allows it.
type deployData struct {
	Run     runData
	Preview api.DeployPreview
	// From is the text production serves now (a judge's template for a judge run; the
	// baseline's when production serves nothing), FromLabel what it is.
	From, FromLabel string
	Diff            diffResult
	// Stale is the message of a deploy refused since the receipt was issued (409).
	Stale string
}

// reviewDeploy serves POST /ui/optimization-runs/{run_id}/review-deploy: the deploy's preview
// (POST ...:preview-deploy, which changes nothing but issues a receipt), as a confirm page.
func (s *server) reviewDeploy(w http.ResponseWriter, r *http.Request) {
	s.review(w, r, http.StatusOK, "")
}

// review renders the confirm page of a fresh preview with status, and stale when a deploy was
// just refused.
func (s *server) review(w http.ResponseWriter, r *http.Request, status int, stale string) {
	d, err := s.runData(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	p, err := c.PreviewDeploy(ctx, d.Run.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	dd := deployData{Run: d, Preview: p, Stale: stale}
	switch {
	case p.Summary.CurrentTemplate != nil:
		dd.From, dd.FromLabel = *p.Summary.CurrentTemplate, "The judge's template"
	case p.Summary.ProductionContent != nil:
		dd.From, dd.FromLabel = *p.Summary.ProductionContent, fmt.Sprintf("Production's text (version %d)", derefInt(p.Summary.ProductionVersion))
	default: // nothing in production: the version the run improved on
		dd.From, dd.FromLabel = d.Run.Baseline.Content, fmt.Sprintf("The baseline's text (version %d)", d.Run.Baseline.Version)
	}
	dd.Diff = diffText(dd.From, p.Summary.CandidateContent)
	s.render(w, r, status, "run-deploy", page{Title: "Deploy the run of " + d.Target, Nav: d.Nav, Data: dd})
}

// deployRun serves POST /ui/optimization-runs/{run_id}/deploy: the deploy the receipt allows
// (POST ...:deploy with confirm true), then back to the run with a confirmation. A receipt the
// API refuses (expired, tampered, production moved: 409) shows a new review with the reason.
func (s *server) deployRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("run_id")
	if err := validID("optimization run", id); err != nil {
		s.fail(w, r, err)
		return
	}
	receipt := r.PostForm.Get("receipt")
	if receipt == "" {
		s.review(w, r, http.StatusBadRequest, "The deploy had no receipt: review it again below.")
		return
	}
	c, ctx := s.api(r)
	res, err := c.Deploy(ctx, id, receipt)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code == api.CodeConflict {
		s.review(w, r, http.StatusConflict, fmt.Sprintf("Nothing was deployed: %s. This is a new review of the deploy.", ce.Message))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	version := res.Version
	if res.JudgeID != "" {
		// A judge's deploy answers no version number: the judge's template version is it.
		if j, err := c.Judge(ctx, res.JudgeID); err == nil {
			version = j.TemplateVersion
		}
	}
	http.Redirect(w, r, runURL(id)+"?deployed="+strconv.Itoa(version), http.StatusSeeOther)
}
