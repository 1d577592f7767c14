package evaluator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// BenchmarkRunnerCPU is the runner's own work per evaluated span, model and storage time
// excluded: decoding the batch, matching the judge, the content hash, the verdict request with
// five corrections (made once per judge), and reading the verdict. Spans of 2 KB of input and of output, a scored
// judge with criteria. Report: ns/span.
func BenchmarkRunnerCPU(b *testing.B) {
	const n = 100
	text := strings.Repeat("The customer asks about the refund of order 1234. ", 40) // ~2 KB
	var batch []byte
	for range n {
		sp := trace.Span{ID: uuid.NewString(), TraceID: uuid.NewString(), ProjectID: "p", Name: "chat", Kind: trace.KindLLM,
			StartedAt: time.Now(), InputData: &text, OutputData: &text, Tags: trace.TagsOf(map[string]string{"env": "prod"}),
			Link: &trace.PromptLink{PromptSlug: "support"}}
		line, err := json.Marshal(trace.RecordOf(&sp))
		if err != nil {
			b.Fatal(err)
		}
		batch = append(append(batch, line...), '\n')
	}
	lo, hi, pass := 1.0, 5.0, 3.0
	j := judge.Judge{ID: "j", ProjectID: "p", Name: "helpful", Template: "Rate the answer.\n{{input}}\n{{output}}",
		EvaluationType: judge.TypeScored, ScoreMin: &lo, ScoreMax: &hi, PassThreshold: &pass, SampleRate: 1,
		TargetPrompt: "support", TagFilter: &judge.TagFilter{Tags: map[string][]string{"env": {"prod"}}},
		Criteria: []judge.Criterion{{Key: "accuracy", Label: "Accuracy"}, {Key: "tone", Label: "Tone"}}}
	var corrections []run.Correction
	for range run.MaxCorrections {
		corrections = append(corrections, run.Correction{Reason: "too generous", Input: text, Output: text, Score: &hi, CreatedAt: time.Now()})
	}
	answer := llm.Response{Model: "gpt-4o-mini", Duration: time.Second, CostSource: llm.CostSourceTable, Cost: 0.0001,
		JSON: json.RawMessage(`{"reason":"helpful and correct","confidence":0.9,"score":4,"criteria_scores":{"accuracy":{"score":4,"reason":"right"},"tone":{"score":5,"reason":"kind"}}}`)}
	ctx := context.Background()

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		spans := decodeBatch(ctx, "k", batch)
		jr := judgeRun{prompter: run.NewPrompter(j, corrections, "openai/gpt-4o-mini"), hasher: newContentHasher(j, "openai/gpt-4o-mini")}
		for _, p := range matchPairs([]judge.Judge{j}, spans) {
			_ = jr.hasher.sum(p.span)
			_ = jr.prompter.Request(p.span)
			if _, err := run.Verdict(p.judge, p.span.ID, answer); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
}
