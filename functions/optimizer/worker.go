package optimizer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

// defaultBudget is the budget of a run of type typ whose config gives none
// (api.DefaultBudgets).
func defaultBudget(typ string) optimize.Budget {
	b := api.DefaultBudgets[typ]
	return optimize.Budget{MaxModelCalls: b.MaxModelCalls, MaxCostUSD: b.MaxCostUSD}
}

// Worker executes optimization runs: the optimizer function's job, and plume-local's.
type Worker struct {
	objects  Objects
	queue    Queue
	runs     Runs
	examples optimize.ExampleSource
	// datasets are the dataset versions runs take examples from.
	datasets Datasets
	judges   Judges
	// calibrations are the judges' calibrated evaluations, for judge runs.
	calibrations Calibrations
	cache        CallCache
	models       run.Caller
	// defaultModel is the model of the task when the baseline has no bound model, of the
	// judges that name none, and of reflections.
	defaultModel string
	now          func() time.Time
	// yieldAfter, when positive, ends an invocation after that many steps of a run (tests of
	// continuation); a run also yields when its invocation has less than yieldMargin left.
	yieldAfter int
	// scoreConcurrency bounds the examples scored at once (scoreConcurrency when 0).
	scoreConcurrency int
	// simulateWith are the deployment's simulation models (PLUME_SIMULATION_MODELS).
	simulateWith []string
}

// ReadDatasets lets the worker read the dataset versions runs take their examples from.
func (w *Worker) ReadDatasets(d Datasets) *Worker {
	w.datasets = d
	return w
}

// SimulateWith adds models to every run's simulations: the deployment's.
func (w *Worker) SimulateWith(models ...string) *Worker {
	w.simulateWith = append(w.simulateWith, models...)
	return w
}

// yieldMargin is the time an invocation keeps for checkpointing and queueing the rest of a run
// before Lambda's deadline: a step (a minibatch of model calls) must fit in what is left.
const yieldMargin = 3 * time.Minute

// shouldYield reports whether the invocation should hand its run on after steps steps.
func (w *Worker) shouldYield(ctx context.Context, steps int) bool {
	if w.yieldAfter > 0 && steps >= w.yieldAfter {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < yieldMargin
}

// YieldAfter makes the worker hand a run on to another invocation after n steps: the tests'
// short deadline.
func (w *Worker) YieldAfter(n int) *Worker {
	w.yieldAfter = n
	return w
}

// ScoreOneAtATime makes the worker score one example at a time, so that its model calls come
// in a fixed order: the tests that kill it between two calls.
func (w *Worker) ScoreOneAtATime() *Worker {
	w.scoreConcurrency = 1
	return w
}

// WrapModels puts wrap around the worker's model client: the tests' faults.
func (w *Worker) WrapModels(wrap func(run.Caller) run.Caller) *Worker {
	w.models = wrap(w.models)
	return w
}

// NewWorker returns a worker: checkpoints go to objects, continuations to queue.
func NewWorker(runs Runs, objects Objects, queue Queue, examples optimize.ExampleSource, judges Judges, calibrations Calibrations,
	cache CallCache, models run.Caller, defaultModel string, now func() time.Time) *Worker {
	return &Worker{runs: runs, objects: objects, queue: queue, examples: examples, judges: judges, calibrations: calibrations,
		cache: cache, models: models, defaultModel: defaultModel, now: now}
}

// Handle runs the run a queue message names: a Message, or an SQS event whose records carry
// Messages; a schedule's event resumes the runs whose worker is gone (ResumeStale). A message
// that does not decode is logged and dropped (it will never decode).
func (w *Worker) Handle(ctx context.Context, payload []byte) error {
	if isScheduled(payload) {
		return w.ResumeStale(ctx)
	}
	var sqsEvent struct {
		Records []struct {
			Body string `json:"body"`
		} `json:"Records"`
	}
	var bodies [][]byte
	if json.Unmarshal(payload, &sqsEvent) == nil && len(sqsEvent.Records) > 0 {
		for _, rec := range sqsEvent.Records {
			bodies = append(bodies, []byte(rec.Body))
		}
	} else {
		bodies = [][]byte{payload}
	}
	var failures []error
	for _, body := range bodies {
		var m Message
		if err := json.Unmarshal(body, &m); err != nil || m.ProjectID == "" || m.RunID == "" {
			slog.ErrorContext(ctx, "optimizer: undecodable message, dropped", "body", string(body), "error", err)
			continue
		}
		exec := w.Execute
		if m.Simulate {
			exec = w.Simulate
		}
		if err := exec(ctx, m.ProjectID, m.RunID); err != nil {
			failures = append(failures, fmt.Errorf("run %s: %w", m.RunID, err))
		}
	}
	return errors.Join(failures...)
}

// errCancelled stops a run that was cancelled while it worked.
var errCancelled = errors.New("the run was cancelled")

// Execute works on run runID until it is over. A run that is over already is left as it is. A
// run that cannot succeed (too few examples, the budget spent before a candidate, a judge
// gone) is failed with the reason; an error (storage, a provider down) is returned, and the
// run stays running for the queue's retry, which starts it over: every model call it made is
// answered from the cache.
func (w *Worker) Execute(ctx context.Context, projectID, runID string) error {
	r, err := w.runs.Run(ctx, projectID, runID)
	if errs.CodeOf(err) == errs.CodeNotFound {
		slog.WarnContext(ctx, "optimizer: no such run, dropped", "project_id", projectID, "run_id", runID)
		return nil
	}
	if err != nil {
		return err
	}
	if optimize.Final(r.Status) {
		return nil
	}
	if r.Status == optimize.StatusQueued {
		now := w.stamp()
		r.Status, r.StartedAt, r.UpdatedAt = optimize.StatusRunning, &now, now
		if r, err = w.runs.UpdateRun(ctx, r); err != nil {
			return w.lost(ctx, projectID, runID, err)
		}
	}
	optimizeRun := w.optimize
	if r.Target.Kind == optimize.TargetJudge {
		optimizeRun = w.optimizeJudge
	}
	out, err := optimizeRun(ctx, r)
	switch {
	case errors.Is(err, errCancelled):
		slog.InfoContext(ctx, "optimizer: run cancelled", "project_id", projectID, "run_id", runID)
		return nil
	case errors.Is(err, errYielded):
		slog.InfoContext(ctx, "optimizer: run continues in another invocation", "project_id", projectID, "run_id", runID)
		return nil
	case errs.CodeOf(err) == errs.CodeInvalid || errs.CodeOf(err) == errs.CodeNotFound || errors.Is(err, optimize.ErrBudget):
		return w.finish(ctx, r, func(r *optimize.Run) { r.Status, r.Error = optimize.StatusFailed, err.Error() })
	case err != nil:
		return err
	}
	if err := w.finish(ctx, r, func(r *optimize.Run) {
		r.Status, r.Type, r.Candidate, r.Report, r.Progress = optimize.StatusSucceeded, out.typ, &out.candidate, &out.report, out.progress
	}); err != nil {
		return err
	}
	if r.Target.Kind == optimize.TargetPrompt {
		w.queueSimulations(ctx, r)
	}
	return nil
}

// lost explains an update that lost to another writer: a cancel (nothing to do) or another
// worker (an error, so that the queue's retry looks again).
func (w *Worker) lost(ctx context.Context, projectID, runID string, err error) error {
	if !errors.Is(err, ddb.ErrRunChanged) {
		return err
	}
	r, rerr := w.runs.Run(ctx, projectID, runID)
	if rerr == nil && optimize.Final(r.Status) {
		return nil
	}
	return err
}

// finish writes a run's end, unless someone (a cancel) ended it first.
func (w *Worker) finish(ctx context.Context, r optimize.Run, end func(*optimize.Run)) error {
	for range maxUpdateAttempts {
		now := w.stamp()
		next := r
		end(&next)
		next.FinishedAt, next.UpdatedAt = &now, now
		_, err := w.runs.UpdateRun(ctx, next)
		if !errors.Is(err, ddb.ErrRunChanged) {
			return err
		}
		if r, err = w.runs.Run(ctx, r.ProjectID, r.ID); err != nil {
			return err
		}
		if optimize.Final(r.Status) {
			return nil
		}
	}
	return errs.Unavailable("optimization run %s keeps changing", r.ID)
}

func (w *Worker) stamp() time.Time { return w.now().UTC().Truncate(time.Microsecond) }

// outcome is what a run found.
type outcome struct {
	typ       string
	candidate optimize.Candidate
	report    optimize.Report
	progress  optimize.Progress
}

// optimize reads the run's examples, lets its strategy propose a candidate and compares it
// with the baseline on the holdout.
func (w *Worker) optimize(ctx context.Context, r optimize.Run) (outcome, error) {
	examples, fromDataset, err := w.loadExamples(ctx, r)
	if err != nil {
		return outcome{}, err
	}
	split := optimize.SplitExamples(examples, r.Config.Seed)
	typ := chooseType(r.Requested, r.Config.Budget, split)
	budget := r.Config.Budget
	def := defaultBudget(typ)
	if budget.MaxModelCalls == 0 {
		budget.MaxModelCalls = def.MaxModelCalls
	}
	if budget.MaxCostUSD == 0 {
		budget.MaxCostUSD = def.MaxCostUSD
	}
	judges := make(map[string]judge.Judge, len(r.Config.Intents))
	for _, in := range r.Config.Intents {
		j, err := w.judges.Judge(ctx, r.ProjectID, in.JudgeID)
		if err != nil {
			return outcome{}, err
		}
		judges[j.ID] = j
	}
	// The comparison on the holdout is paid from the budget first: a strategy spends what is
	// left, so that a run always ends with its report.
	perExample := 1 + len(r.Config.Intents)
	reserve := 2 * len(split.Holdout) * perExample
	if budget.MaxModelCalls <= reserve {
		return outcome{}, errs.Invalid("config.budget.max_model_calls %d does not cover the comparison on the holdout (%d calls)", budget.MaxModelCalls, reserve)
	}
	m := &metered{next: w.models, cache: w.cache, projectID: r.ProjectID, now: w.now,
		budget: optimize.Budget{MaxModelCalls: budget.MaxModelCalls - reserve, MaxCostUSD: budget.MaxCostUSD},
		check:  func(ctx context.Context) error { return w.checkCancelled(ctx, r.ProjectID, r.ID) }}
	if r.Checkpoint != "" {
		// Resumed: what was spent up to the checkpoint stays spent.
		m.resumeFrom(r.Progress)
	}
	taskModel := w.defaultModel
	if r.Baseline.Model != nil {
		taskModel = *r.Baseline.Model
	}
	sc := &scorer{model: m, taskModel: taskModel, judgeModel: w.defaultModel, intents: r.Config.Intents, judges: judges,
		concurrency: cmp.Or(w.scoreConcurrency, scoreConcurrency)}
	rf := &reflector{model: m, name: w.defaultModel}
	baseline := optimize.Candidate{Content: r.Baseline.Content}

	var (
		candidate  optimize.Candidate
		iterations = 1
	)
	switch typ {
	case optimize.TypeQuickRefine:
		candidate, err = optimize.QuickRefine(ctx, baseline, split.Train, rf)
	case optimize.TypeBootstrap:
		st := optimize.NewBootstrap(baseline, split.Train, split.Validation, optimize.BootstrapOptions{Seed: r.Config.Seed})
		s := search{state: st, step: func(ctx context.Context) (bool, error) { return optimize.BootstrapStep(ctx, st, sc) },
			iteration: func() int { return st.Done }}
		if err = w.resume(ctx, r, s); err == nil {
			err = w.run(ctx, &r, s, m)
		}
		candidate, iterations = st.Best, st.Done
	case optimize.TypeGEPA:
		st := gepa.New(r.Config.Seed, baseline, split.Train, split.Validation, gepa.Config{Intents: r.Config.Intents})
		s := search{state: st, step: func(ctx context.Context) (bool, error) { return gepa.Step(ctx, st, sc, rf) },
			iteration: func() int { return st.Iteration }}
		if err = w.resume(ctx, r, s); err == nil {
			err = w.run(ctx, &r, s, m)
		}
		var ok bool
		if candidate, ok = gepa.Best(st); !ok {
			candidate = baseline // nothing meets the guardrails: the report says no_improvement
		}
		iterations = st.Iteration
	default:
		err = errs.Invalid("unknown optimizer type %q", typ)
	}
	if err != nil {
		return outcome{}, err
	}

	m.extend(reserve)
	report, err := w.compare(ctx, sc, r.Config.Intents, baseline, candidate, split.Holdout)
	if err != nil {
		return outcome{}, err
	}
	report.Dataset = fromDataset
	progress := m.Spent()
	progress.Iteration = iterations
	return outcome{typ: typ, candidate: candidate, report: report, progress: progress}, nil
}

// progress records what a run has spent after an iteration, so that the API shows it as it
// goes; a run that was cancelled meanwhile stops (errCancelled).
func (w *Worker) progress(ctx context.Context, r optimize.Run, spent optimize.Progress, iteration int) (optimize.Run, error) {
	r.Progress = spent
	r.Progress.Iteration = iteration
	r.UpdatedAt = w.stamp()
	next, err := w.runs.UpdateRun(ctx, r)
	if errors.Is(err, ddb.ErrRunChanged) {
		if cerr := w.checkCancelled(ctx, r.ProjectID, r.ID); cerr != nil {
			return r, cerr
		}
	}
	return next, err
}

// checkCancelled fails with errCancelled when the run was cancelled (or ended) meanwhile.
func (w *Worker) checkCancelled(ctx context.Context, projectID, runID string) error {
	r, err := w.runs.Run(ctx, projectID, runID)
	if err != nil {
		return err
	}
	if optimize.Final(r.Status) {
		return errCancelled
	}
	return nil
}

// compare scores the baseline and the candidate on the same holdout examples and recommends:
// publish when the candidate scores higher overall and meets every intent's min_threshold,
// else no_improvement with the reason.
func (w *Worker) compare(ctx context.Context, sc optimize.Evaluator, intents []optimize.Intent, baseline, candidate optimize.Candidate, holdout []optimize.Example) (optimize.Report, error) {
	b, err := sc.Evaluate(ctx, baseline, holdout)
	if err != nil {
		return optimize.Report{}, err
	}
	c, err := sc.Evaluate(ctx, candidate, holdout)
	if err != nil {
		return optimize.Report{}, err
	}
	rep := optimize.Report{Baseline: mean(b), Candidate: mean(c)}
	for i, ex := range holdout {
		rep.HoldoutIDs = append(rep.HoldoutIDs, ex.ID)
		if c[i].Overall < b[i].Overall {
			rep.Regressed = append(rep.Regressed, ex.ID)
		}
	}
	for _, in := range intents {
		if in.MinThreshold != nil && rep.Candidate.Intents[in.JudgeID] < *in.MinThreshold {
			rep.Recommendation = optimize.RecommendNoImprovement
			rep.Reason = fmt.Sprintf("the candidate scores %.3f on judge %s, below its min_threshold %.3f", rep.Candidate.Intents[in.JudgeID], in.JudgeID, *in.MinThreshold)
			return rep, nil
		}
	}
	switch {
	case candidate.Hash() == baseline.Hash():
		rep.Recommendation, rep.Reason = optimize.RecommendNoImprovement, "the strategy found nothing better than the baseline"
	case rep.Candidate.Overall > rep.Baseline.Overall:
		rep.Recommendation = optimize.RecommendPublish
		rep.Reason = fmt.Sprintf("the candidate scores %.3f against the baseline's %.3f on %d holdout examples", rep.Candidate.Overall, rep.Baseline.Overall, len(holdout))
	default:
		rep.Recommendation = optimize.RecommendNoImprovement
		rep.Reason = fmt.Sprintf("the candidate scores %.3f, not above the baseline's %.3f on %d holdout examples", rep.Candidate.Overall, rep.Baseline.Overall, len(holdout))
	}
	return rep, nil
}

// mean is the mean of scores, overall and per intent.
func mean(scores []optimize.Score) optimize.Scores {
	out := optimize.Scores{Intents: map[string]float64{}}
	if len(scores) == 0 {
		return out
	}
	n := float64(len(scores))
	for _, s := range scores {
		out.Overall += s.Overall / n
		for id, v := range s.Intents {
			out.Intents[id] += v / n
		}
	}
	return out
}

// chooseType resolves the optimizer type of a run: the requested one, or for auto what
// optimize.AutoType picks from the run's examples and budget.
func chooseType(requested string, budget optimize.Budget, split optimize.Split) string {
	if requested != optimize.TypeAuto && requested != "" {
		return requested
	}
	demos := 0
	for _, ex := range split.Train {
		if ex.ExpectedOutput != "" || ex.ThumbsUp != nil && *ex.ThumbsUp {
			demos++
		}
	}
	typ, _ := optimize.AutoType(len(split.Train)+len(split.Validation)+len(split.Holdout), budget.MaxModelCalls, demos)
	return typ
}
