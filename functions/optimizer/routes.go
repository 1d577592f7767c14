// Package optimizer is the optimization area: the runs API (start, list, read, cancel,
// preview and deploy) of OptimizerFunction, and the Worker that executes runs, which
// OptimizerWorkerFunction runs on the queue's messages and plume-local runs in-process.
// The strategies are in shared/optimize; here they meet the models (a metered, cached Caller),
// the judges (scorer) and the stores.
package optimizer

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/web"
)

// Routes are the API Gateway route keys of OptimizerFunction.
var Routes = []string{
	"ANY /projects/{project_id}/prompts/{slug}/optimization-runs",
	"ANY /projects/{project_id}/judges/{judge_id}/optimization-runs",
	"GET /projects/{project_id}/optimization-runs/{run_id}",
	"POST /projects/{project_id}/optimization-runs/{run_id}",
	"GET /projects/{project_id}/prompts/{slug}/optimization-preview",
	"GET /projects/{project_id}/judges/{judge_id}/optimization-preview",
	"GET /projects/{project_id}/prompts/{slug}/issues",
	"GET /projects/{project_id}/judges/{judge_id}/issues",
}

// Limits of the listing.
const (
	defaultRunLimit = 20
	maxRunLimit     = 100
	maxStartBody    = 16 << 10
)

type server struct {
	svc       *Service
	proposals *Proposals
}

// NewHandler returns the optimization area, every route behind authentication.
func NewHandler(svc *Service, proposals *Proposals, authn *auth.Authenticator) http.Handler {
	s := &server{svc: svc, proposals: proposals}
	mux := auth.NewRouter(authn)
	mux.HandleFunc("POST /projects/{project_id}/prompts/{slug}/optimization-runs", s.start)
	mux.HandleFunc("GET /projects/{project_id}/prompts/{slug}/optimization-runs", s.list)
	mux.HandleFunc("POST /projects/{project_id}/judges/{judge_id}/optimization-runs", s.start)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/optimization-runs", s.list)
	mux.HandleFunc("GET /projects/{project_id}/optimization-runs/{run_id}", s.get)
	mux.HandleFunc("POST /projects/{project_id}/optimization-runs/{run_action}", s.action)
	mux.HandleFunc("GET /projects/{project_id}/prompts/{slug}/optimization-preview", s.promptPreview)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/optimization-preview", s.judgePreview)
	mux.HandleFunc("GET /projects/{project_id}/prompts/{slug}/issues", s.promptIssues)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/issues", s.judgeIssues)
	return mux
}

// start serves POST .../prompts/{slug}/optimization-runs: the run, queued.
func (s *server) start(w http.ResponseWriter, r *http.Request) {
	var in api.OptimizationRunRequest
	if r.ContentLength != 0 {
		if err := web.Decode(w, r, &in, maxStartBody); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	req := StartRequest{OptimizerType: in.OptimizerType, Models: in.Config.Models, Seed: in.Config.Seed}
	if b := in.Config.Budget; b != nil {
		req.Budget = optimize.Budget{MaxModelCalls: b.MaxModelCalls, MaxCostUSD: b.MaxCostUSD}
	}
	for _, i := range in.Config.Intents {
		req.Intents = append(req.Intents, optimize.Intent{JudgeID: i.JudgeID, Weight: i.Weight, MinThreshold: i.MinThreshold})
	}
	if d := in.Config.Dataset; d != nil {
		req.Dataset = &optimize.Dataset{Name: d.Name, Version: d.Version, VersionID: d.VersionID, InputColumns: d.InputColumns,
			ExpectedOutputColumn: d.ExpectedOutputColumn, WithFeedback: d.WithFeedback}
	}
	p, _ := auth.FromContext(r.Context())
	start := s.svc.Start
	target := r.PathValue("slug")
	if jid := r.PathValue("judge_id"); jid != "" {
		start, target = s.svc.StartJudge, jid
	}
	run, err := start(r.Context(), auth.ProjectID(r), target, p.User.ID, req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toRun(run))
}

// list serves GET .../prompts/{slug}/optimization-runs?limit=&offset=: newest first. A page that
// would pass api.MaxAnswerBytes holds fewer runs (web.Cut), its limit their number.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", defaultRunLimit, 1, maxRunLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	offset, err := intParam(r.URL.Query().Get("offset"), "offset", 0, 0, 10_000)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	target := optimize.Target{Kind: optimize.TargetPrompt, Slug: r.PathValue("slug")}
	if jid := r.PathValue("judge_id"); jid != "" {
		target = optimize.Target{Kind: optimize.TargetJudge, JudgeID: jid}
	}
	runs, err := s.svc.runs.Runs(r.Context(), auth.ProjectID(r), target, limit, offset)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	all := make([]api.OptimizationRun, len(runs))
	for i, run := range runs {
		all[i] = toRun(run)
	}
	page, err := web.Cut(w, r, all, offset)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if len(page) < len(all) {
		limit = len(page) // as the judges' evaluations: a page cut by size says so in its limit
	}
	web.OK(w, api.OptimizationRunList{Runs: page, Limit: limit, Offset: offset})
}

// get serves GET /projects/{project_id}/optimization-runs/{run_id}.
func (s *server) get(w http.ResponseWriter, r *http.Request) {
	run, err := s.svc.runs.Run(r.Context(), auth.ProjectID(r), r.PathValue("run_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toRun(run))
}

// action serves POST /projects/{project_id}/optimization-runs/{run_id}:cancel, :preview-deploy
// and :deploy.
func (s *server) action(w http.ResponseWriter, r *http.Request) {
	runID, verb, ok := strings.Cut(r.PathValue("run_action"), ":")
	if !ok {
		web.NotFound(w, r)
		return
	}
	pid := auth.ProjectID(r)
	switch verb {
	case "cancel":
		run, err := s.svc.Cancel(r.Context(), pid, runID)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		web.OK(w, toRun(run))
	case "preview-deploy":
		p, err := s.svc.Preview(r.Context(), pid, runID)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		web.OK(w, toPreview(p))
	case "deploy":
		var in api.DeployRequest
		if err := web.Decode(w, r, &in, web.DefaultBodyLimit); err != nil {
			web.Error(w, r, err)
			return
		}
		switch {
		case in.Receipt == "":
			web.Error(w, r, errs.Invalid("receipt is required: POST .../%s:preview-deploy first", runID))
			return
		case !in.Confirm:
			web.Error(w, r, errs.Invalid("confirm must be true: a deploy changes what production serves"))
			return
		}
		p, _ := auth.FromContext(r.Context())
		d, err := s.svc.Deploy(r.Context(), pid, runID, in.Receipt, p.User.ID)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		out := api.DeployResult{RunID: runID, PromptSlug: d.Run.Target.Slug, Tag: ProductionTag, Version: d.Version.Number, VersionID: d.Version.ID}
		if d.Judge != nil {
			out.Tag, out.JudgeID = "", d.Judge.ID
		}
		if d.Previous > 0 {
			out.PreviousVersion = &d.Previous
		}
		web.OK(w, out)
	default:
		web.NotFound(w, r)
	}
}

// promptPreview serves GET .../prompts/{slug}/optimization-preview?optimizer_type=&max_model_calls=&seed=.
func (s *server) promptPreview(w http.ResponseWriter, r *http.Request) {
	serveQuery(w, r, api.ParsePreviewQuery, s.proposals.PromptPreview, r.PathValue("slug"))
}

// judgePreview serves GET .../judges/{judge_id}/optimization-preview?max_model_calls=&seed=.
func (s *server) judgePreview(w http.ResponseWriter, r *http.Request) {
	serveQuery(w, r, api.ParsePreviewQuery, s.proposals.JudgePreview, r.PathValue("judge_id"))
}

// promptIssues serves GET .../prompts/{slug}/issues?window_hours=.
func (s *server) promptIssues(w http.ResponseWriter, r *http.Request) {
	serveQuery(w, r, api.ParseIssueQuery, s.proposals.PromptIssues, r.PathValue("slug"))
}

// judgeIssues serves GET .../judges/{judge_id}/issues?window_hours=.
func (s *server) judgeIssues(w http.ResponseWriter, r *http.Request) {
	serveQuery(w, r, api.ParseIssueQuery, s.proposals.JudgeIssues, r.PathValue("judge_id"))
}

// serveQuery answers read of target (a path value) in the key's project, with the query that
// parse reads from the request.
func serveQuery[Q, Out any](w http.ResponseWriter, r *http.Request, parse func(url.Values) (Q, error),
	read func(ctx context.Context, projectID, target string, q Q) (Out, error), target string) {
	q, err := parse(r.URL.Query())
	if err != nil {
		web.Error(w, r, errs.Invalid("%s", err))
		return
	}
	out, err := read(r.Context(), auth.ProjectID(r), target, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, out)
}

// intParam reads an integer query parameter in [lo, hi], def when absent.
func intParam(v, name string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}
