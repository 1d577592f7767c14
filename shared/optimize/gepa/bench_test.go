package gepa_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

// benchExamples are examples of a run's size: 120 train and 40 validation, inputs and outputs
// of about 2 KB, the keyword wishes of the fakes.
func benchExamples() (train, validation []optimize.Example) {
	t, v := keywordExamples()
	text := strings.Repeat("a customer asks about the refund of an order ", 40)
	grow := func(exs []optimize.Example, n int, prefix string) []optimize.Example {
		var out []optimize.Example
		for i := range n {
			ex := exs[i%len(exs)]
			ex.ID, ex.Input, ex.Output = fmt.Sprintf("%s%03d", prefix, i), text, text
			out = append(out, ex)
		}
		return out
	}
	return grow(t, 120, "t"), grow(v, 40, "v")
}

// BenchmarkIteration is the search's own work per iteration, model time excluded (the fakes
// answer at once): drawing the parent, the minibatch, acceptance, merges, the pool's scores.
// It reports ns/iteration, and the size of the checkpoint after 30 iterations and the time to
// encode it (the runner writes one per iteration).
func BenchmarkIteration(b *testing.B) {
	train, validation := benchExamples()
	const iterations = 30
	var st *gepa.State
	b.ReportAllocs()
	for b.Loop() {
		st = gepa.New(7, optimize.Candidate{Content: "You are a support agent."}, train, validation, gepa.Config{MaxIterations: iterations})
		ev := &scriptEvaluator{score: keywordScore}
		rf := &keywordReflector{}
		for range iterations + 1 {
			done, err := gepa.Step(context.Background(), st, ev, rf)
			if err != nil {
				b.Fatal(err)
			}
			if done {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*iterations), "ns/iteration")
	body, err := json.Marshal(st)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(body)), "checkpoint-bytes")
}

// BenchmarkCheckpoint is the encoding of a checkpoint after 30 iterations.
func BenchmarkCheckpoint(b *testing.B) {
	train, validation := benchExamples()
	st := gepa.New(7, optimize.Candidate{Content: "You are a support agent."}, train, validation, gepa.Config{MaxIterations: 30})
	ev, rf := &scriptEvaluator{score: keywordScore}, &keywordReflector{}
	for range 31 {
		if done, err := gepa.Step(context.Background(), st, ev, rf); err != nil || done {
			break
		}
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		body, err := json.Marshal(st)
		if err != nil {
			b.Fatal(err)
		}
		n = len(body)
	}
	b.ReportMetric(float64(n), "bytes")
}
