package run

import (
	"context"
	"fmt"
	"sync"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// Caller calls a model; *llm.Client is one.
type Caller interface {
	// Complete sends req and returns the model's answer, an error when there is none.
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

var _ Caller = (*llm.Client)(nil)

// DefaultConcurrency is the number of model calls Evaluate keeps in flight when given 0 or less.
const DefaultConcurrency = 4

// SpanError is the failure of one span's evaluation: the model call's error or an
// ErrInvalidVerdict one.
type SpanError struct {
	SpanID string
	Err    error
}

func (e *SpanError) Error() string { return fmt.Sprintf("evaluate span %s: %v", e.SpanID, e.Err) }

func (e *SpanError) Unwrap() error { return e.Err }

// Evaluate asks judge j's model (j.Model, else defaultModel) for a verdict on each span of
// spans that j Matches, at most concurrency calls at a time (DefaultConcurrency when 0 or
// less), and returns the verdicts in the order of spans. A span id that comes more than once
// is evaluated once, as its last occurrence (the latest version of a span sent again), since a
// judge evaluates a span once. One span's failure does not stop the others: each failed span
// gives one *SpanError, in the order of spans, and the spans not called when ctx ends give its
// error. corrections are shown to the model as in Prompt.
func Evaluate(ctx context.Context, c Caller, j judge.Judge, defaultModel string, concurrency int,
	spans []trace.Span, corrections []Correction) ([]judge.EvaluationInput, []error) {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	last := make(map[string]int, len(spans))
	for i, sp := range spans {
		last[sp.ID] = i
	}
	var todo []int
	for i, sp := range spans {
		if last[sp.ID] == i && Matches(j, sp) {
			todo = append(todo, i)
		}
	}

	type result struct {
		in  judge.EvaluationInput
		err error
	}
	results := make([]result, len(todo))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for k, i := range todo {
		sp := spans[i]
		if err := context.Cause(ctx); err != nil {
			results[k].err = &SpanError{SpanID: sp.ID, Err: err}
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			results[k].err = &SpanError{SpanID: sp.ID, Err: context.Cause(ctx)}
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			in, err := evaluateOne(ctx, c, j, defaultModel, sp, corrections)
			if err != nil {
				err = &SpanError{SpanID: sp.ID, Err: err}
			}
			results[k] = result{in, err}
		})
	}
	wg.Wait()

	var (
		ins  []judge.EvaluationInput
		errs []error
	)
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		ins = append(ins, r.in)
	}
	return ins, errs
}

func evaluateOne(ctx context.Context, c Caller, j judge.Judge, defaultModel string, sp trace.Span, corrections []Correction) (judge.EvaluationInput, error) {
	resp, err := c.Complete(ctx, Prompt(j, sp, corrections, defaultModel))
	if err != nil {
		return judge.EvaluationInput{}, err
	}
	return Verdict(j, sp.ID, resp)
}
