package optimizer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/prompt"
)

// Runs stores optimization runs and their receipts (ddb.OptimizationStore).
type Runs interface {
	CreateRun(ctx context.Context, r optimize.Run) (optimize.Run, error)
	Run(ctx context.Context, projectID, runID string) (optimize.Run, error)
	Runs(ctx context.Context, projectID string, target optimize.Target, limit, offset int) ([]optimize.Run, error)
	UpdateRun(ctx context.Context, r optimize.Run) (optimize.Run, error)
	PutReceipt(ctx context.Context, projectID, tokenHash string, r optimize.Receipt) error
	Receipt(ctx context.Context, projectID, runID, tokenHash string) (optimize.Receipt, bool, error)
	StaleRuns(ctx context.Context, before time.Time, limit int) ([]optimize.RunRef, error)
}

// Prompts reads, creates and pins prompt versions (prompt.Service).
type Prompts interface {
	Get(ctx context.Context, projectID, slug string, sel prompt.Selector) (prompt.Resolved, error)
	// EnsurePinned ensures the version of the content and pins tag at it if the tag points at
	// version expected (nowhere when 0), checked in the write that pins: a deploy never
	// overwrites a pin made since its preview. A new version is created in that same write, so
	// a refused deploy leaves no new version behind (it would be latest, which SDKs serve by
	// default).
	EnsurePinned(ctx context.Context, projectID, slug string, in prompt.EnsureInput, tag string, expected int, by string) (prompt.Version, prompt.PinResult, error)
}

// Judges reads judges (ddb.JudgeStore).
type Judges interface {
	Judge(ctx context.Context, projectID, judgeID string) (judge.Judge, error)
	Judges(ctx context.Context, projectID string) ([]judge.Judge, error)
}

// JudgeUpdates changes judges (judge.Service): a judge run's deploy sets its template.
type JudgeUpdates interface {
	Update(ctx context.Context, projectID, judgeID, user string, spec judge.Spec) (judge.Judge, error)
}

// Queue hands a run to the optimizer worker: an SQS queue in a deployment, in-process in
// plume-local and the tests.
type Queue interface {
	Send(ctx context.Context, body []byte) error
}

// Message is what the queue carries: the run to work on.
type Message struct {
	ProjectID string `json:"project_id"`
	RunID     string `json:"run_id"`
	// Simulate asks for the simulations of a run that succeeded.
	Simulate bool `json:"simulate,omitempty"`
}

// ProductionTag is the tag a deploy pins: what the SDKs serve in production mode.
const ProductionTag = "production"

// ReceiptTTL is how long a deploy receipt is valid.
const ReceiptTTL = 10 * time.Minute

// Datasets reads dataset versions and pages of their rows (dataset.Service): the examples of
// a run that names a dataset version.
type Datasets interface {
	// Version reads version n of dataset name (0: the latest). Errors: errs.NotFound.
	Version(ctx context.Context, projectID, name string, n int) (dataset.Version, error)
	// VersionByID reads a version by its id. Errors: errs.NotFound.
	VersionByID(ctx context.Context, projectID, id string) (dataset.Version, error)
	// Page reads v's rows from offset: at most limit, fewer at a page's byte budget.
	Page(ctx context.Context, v dataset.Version, offset, limit int) ([]api.DatasetRow, error)
}

// Service starts, lists, cancels and deploys optimization runs.
type Service struct {
	runs         Runs
	prompts      Prompts
	judges       Judges
	judgeUpdates JudgeUpdates
	queue        Queue
	datasets     Datasets
	now          func() time.Time
}

// ReadDatasets lets runs take their examples from dataset versions read from d.
func (s *Service) ReadDatasets(d Datasets) *Service {
	s.datasets = d
	return s
}

// NewService returns the optimization service.
func NewService(runs Runs, prompts Prompts, judges Judges, judgeUpdates JudgeUpdates, queue Queue, now func() time.Time) *Service {
	return &Service{runs: runs, prompts: prompts, judges: judges, judgeUpdates: judgeUpdates, queue: queue, now: now}
}

// StartRequest is what a run is asked to do.
type StartRequest struct {
	OptimizerType string
	Intents       []optimize.Intent
	Budget        optimize.Budget
	Models        []string
	Seed          *int64
	// Dataset names the dataset version the run takes examples from (nil: none): by
	// VersionID, or by Name and Version (0: the latest).
	Dataset *optimize.Dataset
}

// Limits of a start request.
const (
	maxIntents     = 10
	maxModels      = 5
	maxBudgetUSD   = 10_000.0
	maxIntentValue = 1e6
)

// Start creates a queued run of prompt slug for user and queues it. The baseline is what the
// production tag serves, else the latest version; the intents default to the prompt's linked
// judges, each weighted 1. Errors: errs.NotFound for an unknown prompt or judge,
// errs.Invalid for a bad request (no intent at all included), errs.Unavailable when the run
// cannot be queued (it is then failed, never left waiting).
func (s *Service) Start(ctx context.Context, projectID, slug, user string, req StartRequest) (optimize.Run, error) {
	typ := req.OptimizerType
	if typ == "" {
		typ = optimize.TypeAuto
	}
	if !slices.Contains(api.OptimizerTypes, typ) {
		return optimize.Run{}, errs.Invalid("optimizer_type must be auto, quick_refine, dspy_bootstrap or dspy_gepa, not %q", typ)
	}
	if err := checkBudget(req.Budget); err != nil {
		return optimize.Run{}, err
	}
	if len(req.Models) > maxModels {
		return optimize.Run{}, errs.Invalid("config.models: at most %d", maxModels)
	}
	base, _, err := baselineOf(ctx, s.prompts, projectID, slug)
	if err != nil {
		return optimize.Run{}, err
	}
	ds, err := s.dataset(ctx, projectID, req.Dataset)
	if err != nil {
		return optimize.Run{}, err
	}
	// A dataset's expected outputs score candidates on their own; without them the intents
	// are the only score.
	scoredByExpected := ds != nil && ds.ExpectedOutputColumn != ""
	intents, err := s.intents(ctx, projectID, slug, req.Intents, scoredByExpected)
	if err != nil {
		return optimize.Run{}, err
	}
	seed := int64(0)
	if req.Seed != nil {
		seed = *req.Seed
	} else {
		n, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt32))
		if err != nil {
			return optimize.Run{}, fmt.Errorf("draw a seed: %w", err)
		}
		seed = n.Int64()
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	r, err := s.runs.CreateRun(ctx, optimize.Run{
		ID: uuid.Must(uuid.NewV7()).String(), ProjectID: projectID,
		Target: optimize.Target{Kind: optimize.TargetPrompt, Slug: slug}, Requested: typ,
		Config: optimize.Config{Intents: intents, Budget: req.Budget, Models: req.Models, Seed: seed, Dataset: ds},
		Status: optimize.StatusQueued, Baseline: base, CreatedAt: now, CreatedBy: user, UpdatedAt: now,
	})
	if err != nil {
		return optimize.Run{}, err
	}
	if err := s.queueRun(ctx, r); err != nil {
		return optimize.Run{}, err
	}
	return r, nil
}

// queueRun hands a new run to the worker; a run that cannot be queued is failed, never left
// waiting.
func (s *Service) queueRun(ctx context.Context, r optimize.Run) error {
	body, _ := json.Marshal(Message{ProjectID: r.ProjectID, RunID: r.ID})
	if err := s.queue.Send(ctx, body); err != nil {
		slog.ErrorContext(ctx, "optimizer: run not queued, failed", "project_id", r.ProjectID, "run_id", r.ID, "error", err)
		now := s.now().UTC().Truncate(time.Microsecond)
		r.Status, r.Error, r.FinishedAt = optimize.StatusFailed, "the run could not be queued; start it again", &now
		if _, uerr := s.runs.UpdateRun(ctx, r); uerr != nil {
			slog.ErrorContext(ctx, "optimizer: unqueued run not marked failed", "run_id", r.ID, "error", uerr)
		}
		return errs.Unavailable("the optimization run could not be queued; try again")
	}
	return nil
}

// StartJudge creates a queued run that improves judge judgeID's template against its
// calibration feedback, for user. The baseline is the judge's template. Errors: errs.NotFound
// for an unknown judge, errs.Invalid for a bad request, errs.Unavailable when the run cannot
// be queued.
func (s *Service) StartJudge(ctx context.Context, projectID, judgeID, user string, req StartRequest) (optimize.Run, error) {
	typ := req.OptimizerType
	if typ == "" || typ == optimize.TypeAuto {
		typ = optimize.TypeQuickRefine
	}
	if typ != optimize.TypeQuickRefine {
		return optimize.Run{}, errs.Invalid("a judge's template is optimized with quick_refine; %q is for prompts", typ)
	}
	if req.Dataset != nil {
		return optimize.Run{}, errs.Invalid("a judge's template learns from its calibrations; config.dataset is for prompt runs")
	}
	if err := checkBudget(req.Budget); err != nil {
		return optimize.Run{}, err
	}
	j, err := s.judges.Judge(ctx, projectID, judgeID)
	if err != nil {
		return optimize.Run{}, err
	}
	seed := int64(api.DefaultJudgeRunSeed)
	if req.Seed != nil {
		seed = *req.Seed
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	base := optimize.Baseline{Content: j.Template, ContentHash: optimize.Candidate{Content: j.Template}.Hash(), Model: nilIfEmpty(j.Model)}
	r, err := s.runs.CreateRun(ctx, optimize.Run{
		ID: uuid.Must(uuid.NewV7()).String(), ProjectID: projectID,
		Target: optimize.Target{Kind: optimize.TargetJudge, JudgeID: judgeID}, Requested: typ,
		Config: optimize.Config{Budget: req.Budget, Seed: seed}, Status: optimize.StatusQueued, Baseline: base,
		CreatedAt: now, CreatedBy: user, UpdatedAt: now,
	})
	if err != nil {
		return optimize.Run{}, err
	}
	return r, s.queueRun(ctx, r)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func checkBudget(b optimize.Budget) error {
	switch {
	case b.MaxModelCalls < 0 || b.MaxModelCalls > api.MaxBudgetModelCalls:
		return errs.Invalid("config.budget.max_model_calls must be between 1 and %d", api.MaxBudgetModelCalls)
	case b.MaxCostUSD < 0 || b.MaxCostUSD > maxBudgetUSD || math.IsNaN(b.MaxCostUSD):
		return errs.Invalid("config.budget.max_cost_usd must be between 0 and %g", maxBudgetUSD)
	}
	return nil
}

// baselineOf is the version a run of slug improves on: production's (production is true),
// else the latest.
func baselineOf(ctx context.Context, prompts Prompts, projectID, slug string) (b optimize.Baseline, production bool, err error) {
	v, err := prompts.Get(ctx, projectID, slug, prompt.Selector{Tag: ProductionTag})
	production = err == nil
	if errs.CodeOf(err) == errs.CodeNotFound {
		v, err = prompts.Get(ctx, projectID, slug, prompt.Selector{})
	}
	if err != nil {
		return optimize.Baseline{}, false, err
	}
	return optimize.Baseline{VersionID: v.ID, Version: v.Number, Content: v.Content, ContentHash: v.ContentHash, Model: v.ModelID}, production, nil
}

// intents validates the requested intents, or defaults to the judges linked to slug; none at
// all is an error unless noneNeeded (the examples' expected outputs score candidates).
func (s *Service) intents(ctx context.Context, projectID, slug string, req []optimize.Intent, noneNeeded bool) ([]optimize.Intent, error) {
	if len(req) == 0 {
		all, err := s.judges.Judges(ctx, projectID)
		if err != nil {
			return nil, err
		}
		for _, j := range all {
			if slices.Contains(j.LinkedPrompts, slug) {
				req = append(req, optimize.Intent{JudgeID: j.ID, Weight: 1})
			}
		}
		if len(req) == 0 && !noneNeeded {
			return nil, errs.Invalid("the prompt %q has no linked judge: link one (PUT /projects/{project_id}/prompts/%s/judges/{judge_id}), give config.intents, "+
				"or give config.dataset an expected_output_column", slug, slug)
		}
		return req, nil
	}
	if len(req) > maxIntents {
		return nil, errs.Invalid("config.intents: at most %d", maxIntents)
	}
	seen := map[string]bool{}
	for i := range req {
		in := &req[i]
		switch {
		case seen[in.JudgeID]:
			return nil, errs.Invalid("config.intents: judge %s is given twice", in.JudgeID)
		case in.Weight == 0:
			in.Weight = 1
		case in.Weight < 0 || in.Weight > maxIntentValue || math.IsNaN(in.Weight):
			return nil, errs.Invalid("config.intents[%d].weight must be positive", i)
		}
		if t := in.MinThreshold; t != nil && !(*t >= 0 && *t <= 1) {
			return nil, errs.Invalid("config.intents[%d].min_threshold must be between 0 and 1", i)
		}
		seen[in.JudgeID] = true
		if _, err := s.judges.Judge(ctx, projectID, in.JudgeID); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// maxUpdateAttempts bounds the read-modify-write retries of a run update.
const maxUpdateAttempts = 5

// update applies change to the run as stored, retrying when someone wrote it in between.
func (s *Service) update(ctx context.Context, projectID, runID string, change func(*optimize.Run) error) (optimize.Run, error) {
	for attempt := 1; ; attempt++ {
		r, err := s.runs.Run(ctx, projectID, runID)
		if err != nil {
			return optimize.Run{}, err
		}
		if err := change(&r); err != nil {
			return optimize.Run{}, err
		}
		r.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
		r, err = s.runs.UpdateRun(ctx, r)
		if err == nil || !errors.Is(err, ddb.ErrRunChanged) || attempt == maxUpdateAttempts {
			return r, err
		}
	}
}

// Cancel cancels a queued or running run: the worker stops within one model call. Errors:
// errs.NotFound, errs.Conflict for a run that is over.
func (s *Service) Cancel(ctx context.Context, projectID, runID string) (optimize.Run, error) {
	return s.update(ctx, projectID, runID, func(r *optimize.Run) error {
		if err := optimize.CheckTransition(r.Status, optimize.StatusCancelled); err != nil {
			return err
		}
		now := s.now().UTC().Truncate(time.Microsecond)
		r.Status, r.FinishedAt = optimize.StatusCancelled, &now
		return nil
	})
}

// Preview is what a deploy would do, and the receipt that allows it.
type Preview struct {
	Receipt   string
	ExpiresAt time.Time
	Run       optimize.Run
	// Content is what the candidate deploys as (optimize.Candidate.Render).
	Content string
	// Production is the version the production tag serves now (nil: none).
	Production *prompt.Version
	// Template is, for a judge run, the judge's template now.
	Template *string
}

// templateHash identifies a judge template.
func templateHash(t string) string { return optimize.Candidate{Content: t}.Hash() }

// Preview reads what deploying run runID would change and issues a receipt, valid ReceiptTTL,
// bound to the run, its candidate and the version production serves now. It changes nothing
// else. Errors: errs.NotFound, errs.Conflict for a run that did not succeed.
func (s *Service) Preview(ctx context.Context, projectID, runID string) (Preview, error) {
	r, err := s.runs.Run(ctx, projectID, runID)
	if err != nil {
		return Preview{}, err
	}
	if r.Status != optimize.StatusSucceeded || r.Candidate == nil {
		return Preview{}, errs.Conflict("optimization run %s is %s: only a run that succeeded can be deployed", runID, r.Status)
	}
	token := "rcpt_" + rand.Text()
	expires := s.now().UTC().Add(ReceiptTTL).Truncate(time.Microsecond)
	rec := optimize.Receipt{RunID: r.ID, CandidateHash: r.Candidate.Hash(), ExpiresAt: expires}
	var prod *prompt.Version
	if r.Target.Kind == optimize.TargetJudge {
		j, err := s.judges.Judge(ctx, projectID, r.Target.JudgeID)
		if err != nil {
			return Preview{}, err
		}
		rec.TemplateHash = templateHash(j.Template)
		if err := s.runs.PutReceipt(ctx, projectID, tokenHash(token), rec); err != nil {
			return Preview{}, err
		}
		return Preview{Receipt: token, ExpiresAt: expires, Run: r, Content: r.Candidate.Content, Template: &j.Template}, nil
	}
	prod, err = s.production(ctx, projectID, r.Target.Slug)
	if err != nil {
		return Preview{}, err
	}
	if prod != nil {
		rec.ProductionVersion = prod.Number
	}
	if err := s.runs.PutReceipt(ctx, projectID, tokenHash(token), rec); err != nil {
		return Preview{}, err
	}
	return Preview{Receipt: token, ExpiresAt: expires, Run: r, Content: r.Candidate.Render(), Production: prod}, nil
}

// production is the version the production tag of slug serves, nil when there is none.
func (s *Service) production(ctx context.Context, projectID, slug string) (*prompt.Version, error) {
	v, err := s.prompts.Get(ctx, projectID, slug, prompt.Selector{Tag: ProductionTag})
	switch {
	case errs.CodeOf(err) == errs.CodeNotFound:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &v.Version, nil
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Deployment is what a deploy did.
type Deployment struct {
	Run optimize.Run
	// Judge is the judge a judge run's deploy changed (nil for a prompt run).
	Judge   *judge.Judge
	Version prompt.Version
	// Previous is the version production served before (0: none).
	Previous int
}

// Deploy publishes the candidate of run runID as receipt allows: it re-reads everything the
// receipt was bound to and refuses (errs.Conflict) an unknown or expired receipt, a candidate
// that changed, or a production tag that moved since the preview; then it ensures the version
// of the candidate's content (the baseline's bound model kept) and pins production to it, if
// production still serves the version the preview saw (checked in the pin's own write). A
// deploy repeated with the same receipt finds production on the candidate and changes nothing.
// Nothing is written before the reads' checks pass; a pin made by someone else between those
// reads and this pin is a 409 that changes nothing: a new version of the candidate is written
// in one transaction with the pin, so it is not created (and latest does not move) when the
// pin is refused.
func (s *Service) Deploy(ctx context.Context, projectID, runID, receipt, user string) (Deployment, error) {
	r, err := s.runs.Run(ctx, projectID, runID)
	if err != nil {
		return Deployment{}, err
	}
	if r.Status != optimize.StatusSucceeded || r.Candidate == nil {
		return Deployment{}, errs.Conflict("optimization run %s is %s: only a run that succeeded can be deployed", runID, r.Status)
	}
	rec, ok, err := s.runs.Receipt(ctx, projectID, runID, tokenHash(receipt))
	switch {
	case err != nil:
		return Deployment{}, err
	case !ok:
		return Deployment{}, errs.Conflict("the receipt is not one of this run's: preview the deploy again")
	case !s.now().Before(rec.ExpiresAt):
		return Deployment{}, errs.Conflict("the receipt expired at %s: preview the deploy again", rec.ExpiresAt.Format(time.RFC3339))
	case rec.CandidateHash != r.Candidate.Hash():
		return Deployment{}, errs.Conflict("the run's candidate changed since the preview: preview the deploy again")
	}
	if r.Target.Kind == optimize.TargetJudge {
		return s.deployJudge(ctx, r, rec, user)
	}
	prod, err := s.production(ctx, projectID, r.Target.Slug)
	if err != nil {
		return Deployment{}, err
	}
	current := 0
	if prod != nil {
		current = prod.Number
	}
	content := r.Candidate.Render()
	switch {
	case prod != nil && r.DeployedVersionID == prod.ID:
		return Deployment{Run: r, Version: *prod, Previous: current}, nil // deployed already
	case prod != nil && prod.Content == content:
		// Production serves the candidate already: a deploy whose pin landed but whose run was
		// not updated (stopped in between), or the same text pinned by hand. Recorded now, so
		// that a repeated deploy succeeds rather than finding production "moved".
		return s.recordDeploy(ctx, projectID, runID, *prod, rec.ProductionVersion)
	case current != rec.ProductionVersion:
		return Deployment{}, errs.Conflict("production serves version %d, not the version %d it served at the preview: preview the deploy again", current, rec.ProductionVersion)
	}
	in := prompt.EnsureInput{Content: &content, ModelID: r.Baseline.Model}
	v, pin, err := s.prompts.EnsurePinned(ctx, projectID, r.Target.Slug, in, ProductionTag, rec.ProductionVersion, user)
	if err != nil {
		return Deployment{}, err
	}
	return s.recordDeploy(ctx, projectID, runID, v, pin.Previous)
}

// recordDeploy marks run runID deployed as version v, which production now serves.
func (s *Service) recordDeploy(ctx context.Context, projectID, runID string, v prompt.Version, previous int) (Deployment, error) {
	r, err := s.update(ctx, projectID, runID, func(r *optimize.Run) error {
		r.DeployedVersionID = v.ID
		return nil
	})
	if err != nil {
		return Deployment{}, err
	}
	return Deployment{Run: r, Version: v, Previous: previous}, nil
}

// deployJudge sets the judge's template to the candidate's, if the template is still the one
// the receipt was issued for (or is the candidate's already: a deploy repeated).
func (s *Service) deployJudge(ctx context.Context, r optimize.Run, rec optimize.Receipt, user string) (Deployment, error) {
	j, err := s.judges.Judge(ctx, r.ProjectID, r.Target.JudgeID)
	if err != nil {
		return Deployment{}, err
	}
	switch current := templateHash(j.Template); {
	case j.Template == r.Candidate.Content:
		return Deployment{Run: r, Judge: &j}, nil // deployed already
	case current != rec.TemplateHash:
		return Deployment{}, errs.Conflict("the judge's template changed since the preview: preview the deploy again")
	}
	content := r.Candidate.Content
	j, err = s.judgeUpdates.Update(ctx, r.ProjectID, j.ID, user, judge.Spec{Template: &content, FromRun: r.ID})
	if err != nil {
		return Deployment{}, err
	}
	r, err = s.update(ctx, r.ProjectID, r.ID, func(r *optimize.Run) error {
		r.DeployedVersionID = "judge-template:" + templateHash(content)
		return nil
	})
	if err != nil {
		return Deployment{}, err
	}
	return Deployment{Run: r, Judge: &j}, nil
}
