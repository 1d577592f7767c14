package optimizer

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/optimize"
)

// MaxSimulationModels bounds the models a run is simulated with.
const MaxSimulationModels = 5

// queueSimulations queues the simulations of a run that just succeeded.
func (w *Worker) queueSimulations(ctx context.Context, r optimize.Run) {
	msg, _ := json.Marshal(Message{ProjectID: r.ProjectID, RunID: r.ID, Simulate: true})
	if err := w.queue.Send(ctx, msg); err != nil {
		// The run succeeded; its simulations are a view of it, not part of it.
		slog.ErrorContext(ctx, "optimizer: simulations not queued", "project_id", r.ProjectID, "run_id", r.ID, "error", err)
	}
}

// simulationModels are the models a run is simulated with: the task model (the baseline's
// bound model, else the default), the run's config.models and the deployment's
// (PLUME_SIMULATION_MODELS), at most MaxSimulationModels, in that order.
func (w *Worker) simulationModels(r optimize.Run) []string {
	models := []string{w.defaultModel}
	if r.Baseline.Model != nil {
		models[0] = *r.Baseline.Model
	}
	for _, m := range append(slices.Clone(r.Config.Models), w.simulateWith...) {
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	return models[:min(len(models), MaxSimulationModels)]
}

// Simulate runs the candidate and the baseline of a succeeded run on its holdout examples with
// each simulation model, and stores the results on the run. A run simulated already is left as
// it is. A model that fails (unknown, unreachable) is recorded with its error; the others go
// on. The calls go through the run's cache but not its budget: simulations cost at most
// 2 × holdout × (1 + intents) calls per model.
func (w *Worker) Simulate(ctx context.Context, projectID, runID string) error {
	r, err := w.runs.Run(ctx, projectID, runID)
	if err != nil {
		return err
	}
	if r.Status != optimize.StatusSucceeded || r.Candidate == nil || r.Report == nil || len(r.Simulations) > 0 ||
		r.Target.Kind != optimize.TargetPrompt {
		// Simulated already, or nothing to simulate (a judge's template is not: its agreement
		// is its report).
		slog.InfoContext(ctx, "optimizer: no simulation to run", "project_id", projectID, "run_id", runID,
			"status", r.Status, "simulations", len(r.Simulations), "target", r.Target.Kind)
		return nil
	}
	// The run's own examples: its dataset version's rows, its completions, or both.
	examples, _, err := w.loadExamples(ctx, r)
	if err != nil {
		return err
	}
	var holdout []optimize.Example
	for _, ex := range examples {
		if slices.Contains(r.Report.HoldoutIDs, ex.ID) {
			holdout = append(holdout, ex)
		}
	}
	judges := make(map[string]judge.Judge, len(r.Config.Intents))
	for _, in := range r.Config.Intents {
		j, err := w.judges.Judge(ctx, r.ProjectID, in.JudgeID)
		if err != nil {
			return err
		}
		judges[j.ID] = j
	}
	baseline := optimize.Candidate{Content: r.Baseline.Content}
	var sims []optimize.Simulation
	for _, model := range w.simulationModels(r) {
		m := &metered{next: w.models, cache: w.cache, projectID: r.ProjectID, now: w.now}
		lat := &latencies{next: m, model: model}
		sc := &scorer{model: lat, taskModel: model, judgeModel: w.defaultModel, intents: r.Config.Intents, judges: judges,
			concurrency: scoreConcurrency}
		sim := optimize.Simulation{Model: model, Examples: len(holdout)}
		b, err := sc.Evaluate(ctx, baseline, holdout)
		if err == nil {
			var c []optimize.Score
			if c, err = sc.Evaluate(ctx, *r.Candidate, holdout); err == nil {
				sim.BaselineScore, sim.CandidateScore = mean(b).Overall, mean(c).Overall
			}
		}
		if err != nil {
			if errs.CodeOf(err) == errs.CodeUnavailable || ctx.Err() != nil {
				return err // a provider down: the queue retries the simulations
			}
			sim.Error = err.Error()
		}
		sim.CostUSD, sim.LatencyMS = m.Spent().CostUSD, lat.mean()
		sims = append(sims, sim)
	}
	slog.InfoContext(ctx, "optimizer: simulations done", "project_id", projectID, "run_id", runID, "models", len(sims))
	return w.finishSimulations(ctx, r, sims)
}

// finishSimulations stores sims on the run, unless simulations were stored meanwhile.
func (w *Worker) finishSimulations(ctx context.Context, r optimize.Run, sims []optimize.Simulation) error {
	for range maxUpdateAttempts {
		if len(r.Simulations) > 0 {
			return nil
		}
		r.Simulations, r.UpdatedAt = sims, w.stamp()
		_, err := w.runs.UpdateRun(ctx, r)
		if err == nil || !errorsIsChanged(err) {
			return err
		}
		if r, err = w.runs.Run(ctx, r.ProjectID, r.ID); err != nil {
			return err
		}
	}
	return errs.Unavailable("optimization run %s keeps changing", r.ID)
}

// latencies measures the task model's answers (the calls to model) of a simulation.
type latencies struct {
	next  run.Caller
	model string

	mu    sync.Mutex
	total time.Duration
	n     int
}

func (l *latencies) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := l.next.Complete(ctx, req)
	if err == nil && req.Model == l.model && req.Schema == nil {
		l.mu.Lock()
		l.total += resp.Duration
		l.n++
		l.mu.Unlock()
	}
	return resp, err
}

// mean is the mean latency in milliseconds, 0 without calls.
func (l *latencies) mean() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return 0
	}
	return float64(l.total) / float64(l.n) / float64(time.Millisecond)
}

// errorsIsChanged reports whether err is a lost conditional update of a run.
func errorsIsChanged(err error) bool { return errors.Is(err, ddb.ErrRunChanged) }
