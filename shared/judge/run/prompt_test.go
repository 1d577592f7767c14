package run_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/trace"
)

func binaryJudge(template string) judge.Judge {
	return judge.Judge{ID: "judge-1", Name: "Helpful", Template: template, EvaluationType: judge.TypeBinary, SampleRate: 1}
}

func scoredJudge(template string) judge.Judge {
	return judge.Judge{ID: "judge-2", Name: "Quality", Template: template, EvaluationType: judge.TypeScored,
		ScoreMin: ptr(1.0), ScoreMax: ptr(5.0), PassThreshold: ptr(3.5), SampleRate: 1, Temperature: 0.2, Model: "anthropic/claude-3-5-haiku"}
}

func withCriteria(j judge.Judge) judge.Judge {
	j.Criteria = []judge.Criterion{
		{Key: "accuracy", Label: "Accuracy", Description: "Facts are right."},
		{Key: "tone", Label: "Tone", Description: "Polite."},
	}
	return j
}

func llmSpan(id, input, output string) trace.Span {
	return trace.Span{ID: id, Kind: trace.KindLLM, InputData: &input, OutputData: &output}
}

func withAttributes(sp trace.Span, attrs string) trace.Span {
	sp.Attributes = json.RawMessage(attrs)
	return sp
}

func TestPromptRendering(t *testing.T) {
	tests := []struct {
		name     string
		template string
		sp       trace.Span
		want     string
	}{
		{name: "double braces", template: "Q: {{input}}\nA: {{output}}", sp: llmSpan("s", "2+2?", "4"),
			want: "Q: 2+2?\nA: 4"},
		{name: "spaces inside braces", template: "Q: {{ input }} A: {{  output}}", sp: llmSpan("s", "hi", "hello"),
			want: "Q: hi A: hello"},
		{name: "single braces", template: "Q: {input} A: {output}", sp: llmSpan("s", "hi", "hello"),
			want: "Q: hi A: hello"},
		{name: "a variable twice", template: "{{output}} / {{output}} for {{input}}", sp: llmSpan("s", "i", "o"),
			want: "o / o for i"},
		{name: "no variables: both appended", template: "Is it polite?", sp: llmSpan("s", "hi", "go away"),
			want: "Is it polite?\n\n<input>\nhi\n</input>\n\n<output>\ngo away\n</output>"},
		{name: "only input named: output appended", template: "Question: {{input}}", sp: llmSpan("s", "hi", "hello"),
			want: "Question: hi\n\n<output>\nhello\n</output>"},
		{name: "variables inside the data stay as they are", template: "{{input}} -> {{output}}", sp: llmSpan("s", "say {{output}}", "{input}"),
			want: "say {{output}} -> {input}"},
		{name: "other tokens untouched", template: "{{input}} {{context}} {inputs} {{output}}", sp: llmSpan("s", "i", "o"),
			want: "i {{context}} {inputs} o"},
		{name: "no data", template: "{{input}}|{{output}}", sp: trace.Span{ID: "s", Kind: trace.KindLLM},
			want: "(empty)|(empty)"},
		{name: "prompt variables", template: "Product {{product}}, tier {{ tier }}: {{input}} -> {{output}} {{unknown}}",
			sp:   withAttributes(llmSpan("s", "i", "o"), `{"variables":{"product":"Plume","tier":3,"region":"eu"}}`),
			want: "Product Plume, tier 3: i -> o {{unknown}}\n\n<variables>\nregion: eu\n</variables>"},
		{name: "variables of the linkage", template: "{{product}}: {{input}} {{output}}",
			sp:   withAttributes(llmSpan("s", "i", "o"), `{"zeroeval":{"task":"t","variables":{"product":"Plume"}}}`),
			want: "Plume: i o"},
		{name: "a variable's value is not substituted again", template: "{{a}} {{input}} {{output}}",
			sp:   withAttributes(llmSpan("s", "i", "o"), `{"variables":{"a":"{{output}}"}}`),
			want: "{{output}} i o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := run.Prompt(binaryJudge(tt.template), tt.sp, nil, "openai/gpt-4o-mini")
			require.Len(t, req.Messages, 1)
			assert.Equal(t, "user", req.Messages[0].Role)
			assert.Equal(t, tt.want, req.Messages[0].Text)
		})
	}
}

func TestPromptCutsData(t *testing.T) {
	long := strings.Repeat("a", run.MaxDataBytes-1) + "é" + strings.Repeat("Z", 5000) // é across the limit
	tests := []struct {
		name         string
		sp           trace.Span
		wantNote     string
		wantNoteless string
	}{
		{name: "long input", sp: llmSpan("s", long, "short"),
			wantNote: fmt.Sprintf("[cut: the input has %d bytes; only the first %d are shown]", len(long), run.MaxDataBytes-1)},
		{name: "long output", sp: llmSpan("s", "short", long),
			wantNote: fmt.Sprintf("[cut: the output has %d bytes; only the first %d are shown]", len(long), run.MaxDataBytes-1)},
		{name: "exactly at the limit", sp: llmSpan("s", strings.Repeat("x", run.MaxDataBytes), "o")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := run.Prompt(binaryJudge("{{input}}\n---\n{{output}}"), tt.sp, nil, "m").Messages[0].Text
			assert.LessOrEqual(t, len(text), 2*run.MaxDataBytes+200)
			if tt.wantNote == "" {
				assert.False(t, strings.Contains(text, "[cut:"))
				return
			}
			assert.Contains(t, text, tt.wantNote)
			assert.False(t, strings.ContainsAny(text, "éZ"), "the text after the cut is not shown")
		})
	}
}

func TestPromptModelAndTemperature(t *testing.T) {
	sp := llmSpan("s", "i", "o")
	tests := []struct {
		name      string
		j         judge.Judge
		wantModel string
		wantTemp  float64
	}{
		{name: "the deployment's default", j: binaryJudge("t"), wantModel: "openai/gpt-4o-mini", wantTemp: 0},
		{name: "the judge's own", j: scoredJudge("t"), wantModel: "anthropic/claude-3-5-haiku", wantTemp: 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := run.Prompt(tt.j, sp, nil, "openai/gpt-4o-mini")
			assert.Equal(t, tt.wantModel, req.Model)
			require.NotNil(t, req.Temperature)
			assert.Equal(t, tt.wantTemp, *req.Temperature)
			assert.Contains(t, req.System, fmt.Sprintf("%q", tt.j.Name))
		})
	}
}

func TestPromptSchema(t *testing.T) {
	sp := llmSpan("s", "i", "o")
	criterion := func(lo, hi float64) string {
		return fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["score","reason"],
			"properties":{"score":{"type":"number","minimum":%g,"maximum":%g},"reason":{"type":"string"}}}`, lo, hi)
	}
	tests := []struct {
		name       string
		j          judge.Judge
		want       string
		wantSystem []string
	}{
		{
			name: "binary", j: binaryJudge("t"),
			want: `{"type":"object","additionalProperties":false,"required":["reason","confidence","meets_criteria"],
				"properties":{"reason":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1},
				"meets_criteria":{"type":"boolean"}}}`,
			wantSystem: []string{"- meets_criteria:"},
		},
		{
			name: "scored", j: scoredJudge("t"),
			want: `{"type":"object","additionalProperties":false,"required":["reason","confidence","score"],
				"properties":{"reason":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1},
				"score":{"type":"number","minimum":1,"maximum":5}}}`,
			wantSystem: []string{"- score: a number from 1 (worst) to 5 (best); 3.5 or more passes"},
		},
		{
			name: "binary with criteria", j: withCriteria(binaryJudge("t")),
			want: `{"type":"object","additionalProperties":false,"required":["reason","confidence","meets_criteria","criteria_scores"],
				"properties":{"reason":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1},
				"meets_criteria":{"type":"boolean"},
				"criteria_scores":{"type":"object","additionalProperties":false,"required":["accuracy","tone"],
					"properties":{"accuracy":` + criterion(0, 1) + `,"tone":` + criterion(0, 1) + `}}}}`,
			wantSystem: []string{"the score from 0 to 1", "- accuracy (Accuracy): Facts are right.", "- tone (Tone): Polite."},
		},
		{
			name: "scored with criteria", j: withCriteria(scoredJudge("t")),
			want: `{"type":"object","additionalProperties":false,"required":["reason","confidence","score","criteria_scores"],
				"properties":{"reason":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1},
				"score":{"type":"number","minimum":1,"maximum":5},
				"criteria_scores":{"type":"object","additionalProperties":false,"required":["accuracy","tone"],
					"properties":{"accuracy":` + criterion(1, 5) + `,"tone":` + criterion(1, 5) + `}}}}`,
			wantSystem: []string{"the score from 1 to 5", "- accuracy (Accuracy)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := run.Prompt(tt.j, sp, nil, "m")
			require.NotNil(t, req.Schema)
			assert.Equal(t, run.SchemaName, req.Schema.Name)
			assert.JSONEq(t, tt.want, string(req.Schema.JSON))
			var s map[string]any
			require.NoError(t, json.Unmarshal(req.Schema.JSON, &s))
			assertStrict(t, s, "")
			for _, w := range tt.wantSystem {
				assert.Contains(t, req.System, w)
			}
		})
	}
}

// assertStrict checks what OpenAI's strict mode needs of every object: additionalProperties
// false and every property required.
func assertStrict(t *testing.T, s map[string]any, path string) {
	t.Helper()
	if s["type"] != "object" {
		return
	}
	assert.Equal(t, false, s["additionalProperties"], path)
	props, _ := s["properties"].(map[string]any)
	var required []string
	for _, r := range s["required"].([]any) {
		required = append(required, r.(string))
	}
	var keys []string
	for k, p := range props {
		keys = append(keys, k)
		assertStrict(t, p.(map[string]any), path+"."+k)
	}
	slices.Sort(keys)
	slices.Sort(required)
	assert.Equal(t, keys, required, path)
}

func TestPromptCorrections(t *testing.T) {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	correction := func(n int) run.Correction {
		return run.Correction{Reason: fmt.Sprintf("reason-%d", n), Input: fmt.Sprintf("input-%d", n),
			Output: "out", CreatedAt: day.Add(time.Duration(n) * time.Hour)}
	}
	// seven corrections, given oldest and newest mixed
	seven := []run.Correction{correction(3), correction(7), correction(1), correction(5), correction(2), correction(6), correction(4)}
	huge := strings.Repeat("z", 10_000)

	tests := []struct {
		name        string
		j           judge.Judge
		corrections []run.Correction
		// want are the texts that must appear in this order; absent must not appear.
		want   []string
		absent []string
	}{
		{name: "none", j: binaryJudge("t"), absent: []string{"Correction", "People reviewed"}},
		{
			name: "newest first, at most MaxCorrections", j: binaryJudge("t"), corrections: seven,
			want: []string{"Correction 1\nInput: input-7", "reason-7", "Correction 2\nInput: input-6", "input-5", "input-4",
				"Correction 5\nInput: input-3"},
			absent: []string{"input-2", "input-1", "Correction 6"},
		},
		{
			name: "binary disagreement names the right verdict", j: binaryJudge("t"),
			corrections: []run.Correction{{ThumbsUp: false, Result: true, JudgeReason: "looked fine", Reason: "it is rude",
				Input: "hi", Output: "go away"}},
			want: []string{"Input: hi\nOutput: go away\nYour verdict: pass. Your reason: looked fine",
				"The person disagreed with this verdict. The right verdict was: fail. Their reason: it is rude"},
		},
		{
			name: "scored with expected score and direction", j: scoredJudge("t"),
			corrections: []run.Correction{{ThumbsUp: false, Result: true, Score: ptr(4.5), ExpectedScore: ptr(2.0),
				ScoreDirection: judge.TooHigh, Input: "i", Output: "o"}},
			want: []string{"Your verdict: pass (score 4.5)", "The person disagreed with this verdict. The right score was 2. Your score was too high."},
		},
		{
			name: "agreement", j: binaryJudge("t"),
			corrections: []run.Correction{{ThumbsUp: true, Result: false, Input: "i", Output: "o"}},
			want:        []string{"Your verdict: fail", "The person agreed with this verdict."},
			absent:      []string{"right verdict"},
		},
		{
			name: "long texts quoted and the section bounded", j: binaryJudge("t"),
			corrections: []run.Correction{
				{Input: huge, Output: huge, Reason: huge, JudgeReason: huge, CreatedAt: day.Add(3 * time.Hour)},
				{Input: huge, Output: huge, Reason: huge, JudgeReason: huge, CreatedAt: day.Add(2 * time.Hour)},
				{Input: "oldest", Output: huge, Reason: huge, JudgeReason: huge, CreatedAt: day.Add(time.Hour)},
			},
			want:   []string{"Correction 1\nInput: " + strings.Repeat("z", run.MaxCorrectionFieldBytes) + "...\n"},
			absent: []string{strings.Repeat("z", run.MaxCorrectionFieldBytes+1), "oldest"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			system := run.Prompt(tt.j, llmSpan("s", "i", "o"), tt.corrections, "m").System
			at := 0
			for _, w := range tt.want {
				i := strings.Index(system[at:], w)
				require.GreaterOrEqual(t, i, 0, "%q not found after byte %d of:\n%s", w, at, system)
				at += i + len(w)
			}
			for _, a := range tt.absent {
				assert.NotContains(t, system, a)
			}
			if i := strings.Index(system, "People reviewed"); i >= 0 {
				assert.LessOrEqual(t, len(system)-i, run.MaxCorrectionsBytes)
			}
		})
	}
}
