package evaluator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// claimTimeout bounds the claim writes (Complete, Release) made after the invocation's own
// context may have ended: they must still happen, or a released call would wait for its lease.
const claimTimeout = 10 * time.Second

// verdict is the outcome of one pair.
type verdict struct {
	state  judge.ClaimState // Acquired (the model was called), Done or Busy; "" when the claim failed
	token  string
	called bool
	cost   float64
	in     judge.EvaluationInput
	err    error
}

// putFunc writes a judge's evaluations; the judge's deletion since is an errs.NotFound error.
type putFunc func(ctx context.Context, j judge.Judge, evs []judge.Evaluation) error

// putSpanEvaluations writes evaluations of spans (the judge's own, with its counters).
func (r *Runner) putSpanEvaluations(ctx context.Context, j judge.Judge, evs []judge.Evaluation) error {
	_, err := r.judges.PutEvaluations(ctx, j, evs)
	return err
}

// evaluate asks each pair's judge for its verdict (claim, model call) and writes the verdicts
// of spans, judge by judge (evaluateWith).
func (r *Runner) evaluate(ctx context.Context, projectID string, pairs []pair) (Report, error) {
	return r.evaluateWith(ctx, projectID, pairs, r.putSpanEvaluations)
}

// evaluateWith asks each pair's judge for its verdict (claim, model call) and writes the
// verdicts with put, judge by judge. Every pair is tried whatever happens to the others; the
// failures are joined.
func (r *Runner) evaluateWith(ctx context.Context, projectID string, pairs []pair, put putFunc) (Report, error) {
	var rep Report
	if len(pairs) == 0 {
		return rep, nil
	}
	callCtx, cancel := r.callContext(ctx)
	defer cancel()

	var (
		failures []error
		groups   [][]int // indexes of pairs, per judge, in the judges' order
		byJudge  = map[string]int{}
	)
	for i, p := range pairs {
		g, ok := byJudge[p.judge.ID]
		if !ok {
			g = len(groups)
			byJudge[p.judge.ID] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}

	results := make([]verdict, len(pairs))
	var wg sync.WaitGroup
	for _, group := range groups {
		j := pairs[group[0]].judge
		corrections, err := r.corrections(callCtx, projectID, j)
		if err != nil {
			for _, i := range group { // each fails, and write counts it
				results[i].err = fmt.Errorf("read the judge's corrections: %w", err)
			}
			continue
		}
		jr := judgeRun{prompter: run.NewPrompter(j, corrections, r.cfg.DefaultModel), hasher: newContentHasher(j, r.cfg.DefaultModel)}
		for _, i := range group {
			if err := r.acquire(callCtx, r.calls); err != nil {
				results[i].err = err
				continue
			}
			wg.Go(func() {
				defer func() { <-r.calls }()
				results[i] = r.one(callCtx, projectID, pairs[i], jr)
			})
		}
	}
	wg.Wait()

	for _, group := range groups {
		j := pairs[group[0]].judge
		res, err := r.write(ctx, projectID, j, pairs, results, group, put)
		rep.add(res)
		if err != nil {
			failures = append(failures, fmt.Errorf("judge %s: %w", j.ID, err))
		}
	}
	return rep, errors.Join(failures...)
}

// callContext is ctx ended WriteMargin before ctx's deadline: model calls stop in time for the
// evaluations of those that finished to be written, and the others' claims released.
func (r *Runner) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, d.Add(-r.cfg.WriteMargin))
	}
	return context.WithCancel(ctx)
}

// acquire takes a slot of sem, or fails when ctx ends first.
func (r *Runner) acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// provider is the semaphore of the provider model is sent to.
func (r *Runner) provider(model string) chan struct{} {
	name := "unknown"
	if t, err := llm.Route(model); err == nil {
		name = t.Provider
	}
	sem, _ := r.providers.LoadOrStore(name, make(chan struct{}, r.cfg.ProviderConcurrency))
	return sem.(chan struct{})
}

// judgeRun is what one judge's pairs share: the requests' prompter, with the judge's
// corrections, and the content hasher.
type judgeRun struct {
	prompter *run.Prompter
	hasher   contentHasher
}

// one claims p and, when it gets the claim, asks p's judge for its verdict. A failed call
// releases the claim, so that the event's retry calls again at once.
func (r *Runner) one(ctx context.Context, projectID string, p pair, jr judgeRun) verdict {
	j, sp := p.judge, p.span
	c, err := r.claims.Claim(ctx, projectID, j.ID, sp.ID, jr.hasher.sum(sp), r.cfg.Lease, r.cfg.Now())
	if err != nil {
		return verdict{err: fmt.Errorf("claim span %s: %w", sp.ID, err)}
	}
	if c.State != judge.ClaimAcquired {
		return verdict{state: c.State}
	}
	v := verdict{state: c.State, token: c.Token}
	req := jr.prompter.Request(sp)
	v.err = r.attachImages(ctx, projectID, sp, &req)
	sem := r.provider(req.Model)
	if v.err == nil {
		v.err = r.acquire(ctx, sem)
	}
	if v.err == nil {
		var resp llm.Response
		resp, v.err = r.model.Complete(ctx, req)
		<-sem
		v.called = true
		v.cost = resp.Cost
		if v.err == nil {
			v.in, v.err = run.Verdict(j, sp.ID, resp)
		}
	}
	if v.err != nil {
		v.err = fmt.Errorf("span %s: %w", sp.ID, v.err)
		r.release(ctx, projectID, j.ID, sp.ID, v.token)
	}
	return v
}

// write stores the verdicts of one judge's pairs (group indexes pairs and results) as
// evaluations, completes their claims, and counts the group. Verdicts that cannot be stored
// release their claims.
func (r *Runner) write(ctx context.Context, projectID string, j judge.Judge, pairs []pair, results []verdict, group []int, put putFunc) (Report, error) {
	var (
		rep      Report
		failures failureSet
		evs      []judge.Evaluation
		tokens   = map[string]string{}
		now      = r.cfg.Now()
	)
	for _, i := range group {
		v := results[i]
		if v.called {
			rep.ModelCalls++
			rep.Cost += v.cost
		}
		switch {
		case v.err != nil:
			rep.Failed++
			failures.add(v.err)
			slog.ErrorContext(ctx, "evaluator: evaluation failed", "project_id", projectID, "judge_id", j.ID, "span_id", pairs[i].span.ID, "error", v.err)
			continue
		case v.state == judge.ClaimDone:
			rep.Done++
			continue
		case v.state == judge.ClaimBusy:
			rep.Busy++
			continue
		}
		built, err := judge.BuildEvaluations(j, []judge.EvaluationInput{v.in}, now)
		if err != nil {
			rep.Failed++
			failures.add(fmt.Errorf("span %s: %w", v.in.SpanID, err))
			r.release(ctx, projectID, j.ID, v.in.SpanID, v.token)
			continue
		}
		evs = append(evs, built...)
		tokens[v.in.SpanID] = v.token
	}
	if len(evs) == 0 {
		return rep, failures.err()
	}
	if err := put(ctx, j, evs); err != nil {
		rep.Failed += len(evs)
		for _, e := range evs {
			r.release(ctx, projectID, j.ID, e.SpanID, tokens[e.SpanID])
		}
		if errs.CodeOf(err) == errs.CodeNotFound {
			// The judge was deleted since it was listed: nothing to retry.
			slog.WarnContext(ctx, "evaluator: evaluations not written, the judge is gone", "project_id", projectID, "judge_id", j.ID, "error", err)
			return rep, failures.err()
		}
		return rep, errors.Join(failures.err(), fmt.Errorf("write %d evaluations: %w", len(evs), err))
	}
	rep.Evaluated += len(evs)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	for _, e := range evs {
		if err := r.claims.Complete(cctx, projectID, j.ID, e.SpanID, tokens[e.SpanID]); err != nil {
			// The evaluation is written; a lost claim only means another worker may call the
			// model again for it (ddb.ClaimStore).
			slog.WarnContext(ctx, "evaluator: claim not completed", "project_id", projectID, "judge_id", j.ID, "span_id", e.SpanID, "error", err)
		}
	}
	return rep, failures.err()
}

// failureSet is what failed among one judge's pairs: how many, and the first error as an
// example, so that an event's error (logged, and in Lambda's records) stays short when a
// provider fails every span. Each failure is logged on its own.
type failureSet struct {
	n     int
	first error
}

func (f *failureSet) add(err error) {
	if f.n == 0 {
		f.first = err
	}
	f.n++
}

func (f *failureSet) err() error {
	switch f.n {
	case 0:
		return nil
	case 1:
		return f.first
	}
	return fmt.Errorf("%d evaluations failed, the first: %w", f.n, f.first)
}

// release gives up a claim after a failed evaluation, even when ctx has ended.
func (r *Runner) release(ctx context.Context, projectID, judgeID, spanID, token string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	if err := r.claims.Release(cctx, projectID, judgeID, spanID, token); err != nil {
		slog.WarnContext(ctx, "evaluator: claim not released; it is retried when its lease ends", "project_id", projectID, "judge_id", judgeID, "span_id", spanID, "error", err)
	}
}

// corrections are judge j's newest calibrated evaluations as few-shot corrections (at most
// run.MaxCorrections), with the input and output of the spans they are about.
func (r *Runner) corrections(ctx context.Context, projectID string, j judge.Judge) ([]run.Correction, error) {
	pairs, err := r.calibrations.Calibrations(ctx, projectID, j.ID, judge.CalibrationQuery{Limit: run.MaxCorrections})
	if err != nil || len(pairs) == 0 {
		return nil, err
	}
	ids := make([]string, len(pairs))
	for i, p := range pairs {
		ids[i] = p.Evaluation.SpanID
	}
	sums, err := r.index.Summaries(ctx, projectID, ids)
	if err != nil {
		return nil, err
	}
	locs := make(map[string]trace.Location, len(sums))
	for id, s := range sums {
		locs[id] = s.Location
	}
	spans, err := trace.LoadRecords(ctx, r.objects, locs)
	if err != nil {
		return nil, err
	}
	out := make([]run.Correction, 0, len(pairs))
	for _, p := range pairs {
		sp := spans[p.Evaluation.SpanID]
		out = append(out, run.Correction{
			ThumbsUp: p.ThumbsUp, ExpectedScore: p.Calibration.ExpectedScore, ScoreDirection: p.Calibration.ScoreDirection,
			Reason: p.Reason, Result: p.Evaluation.Result, Score: p.Evaluation.Score, JudgeReason: p.Evaluation.Reason,
			Input: deref(sp.InputData), Output: deref(sp.OutputData), CreatedAt: p.CalibratedAt,
		})
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
