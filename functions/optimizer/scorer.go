package optimizer

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/trace"
)

// scoreConcurrency bounds the examples a scorer runs at once.
const scoreConcurrency = 4

// scorer is the optimize.Evaluator of a run: it runs a candidate on each example with the task
// model (the baseline's bound model), has the intents' judges score the output, and compares it
// with the expected output where a person gave one.
//
// The overall score of an example is the weighted mean of the intents' scores and, when the
// example has an expected output, of its match with it (token F1), weighted as the mean intent
// (1 without intents). The feedback a reflection reads is every judge's score and reason, the
// expected output and the person's reason.
type scorer struct {
	model      run.Caller
	taskModel  string
	judgeModel string
	intents    []optimize.Intent
	judges     map[string]judge.Judge
	// concurrency bounds the examples run at once.
	concurrency int
}

var _ optimize.Evaluator = (*scorer)(nil)

// Evaluate implements optimize.Evaluator.
func (s *scorer) Evaluate(ctx context.Context, c optimize.Candidate, examples []optimize.Example) ([]optimize.Score, error) {
	if m, ok := s.model.(*metered); ok {
		var err error
		if ctx, err = m.prepay(ctx, len(examples)*(1+len(s.intents))); err != nil {
			return nil, err
		}
	}
	out := make([]optimize.Score, len(examples))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(s.concurrency, 1))
	for i, ex := range examples {
		g.Go(func() error {
			sc, err := s.one(gctx, c, ex)
			out[i] = sc
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *scorer) one(ctx context.Context, c optimize.Candidate, ex optimize.Example) (optimize.Score, error) {
	resp, err := s.model.Complete(ctx, taskRequest(s.taskModel, c, ex))
	if err != nil {
		return optimize.Score{}, fmt.Errorf("run the candidate on example %s: %w", ex.ID, err)
	}
	output := resp.Text
	sc := optimize.Score{ExampleID: ex.ID, Output: output, Intents: make(map[string]float64, len(s.intents))}
	var (
		weighted, weights float64
		feedback          []string
	)
	for _, in := range s.intents {
		j := s.judges[in.JudgeID]
		span := trace.Span{ID: ex.ID, Kind: trace.KindLLM, InputData: &ex.Input, OutputData: &output}
		verdictResp, err := s.model.Complete(ctx, run.Prompt(j, span, nil, s.judgeModel))
		if err != nil {
			return optimize.Score{}, fmt.Errorf("judge %s on example %s: %w", j.ID, ex.ID, err)
		}
		v, err := run.Verdict(j, ex.ID, verdictResp)
		if err != nil {
			return optimize.Score{}, err
		}
		score := normalised(j, v)
		sc.Intents[in.JudgeID] = score
		weighted += in.Weight * score
		weights += in.Weight
		feedback = append(feedback, fmt.Sprintf("judge %q scored %.2f: %s", j.Name, score, v.Reason))
	}
	if ex.ExpectedOutput != "" {
		w := 1.0
		if len(s.intents) > 0 {
			w = weights / float64(len(s.intents))
		}
		match := tokenF1(output, ex.ExpectedOutput)
		weighted += w * match
		weights += w
		feedback = append(feedback, fmt.Sprintf("the expected output (match %.2f) is: %s", match, ex.ExpectedOutput))
	}
	if ex.Reason != "" {
		feedback = append(feedback, "a person said of an earlier answer: "+ex.Reason)
	}
	if weights > 0 {
		sc.Overall = weighted / weights
	}
	sc.Feedback = strings.Join(feedback, "\n")
	return sc, nil
}

// normalised is a verdict on 0 (worst) .. 1 (best): pass 1 and fail 0 for a binary judge, the
// score's place in the judge's range for a scored one.
func normalised(j judge.Judge, v judge.EvaluationInput) float64 {
	if !j.Scored() {
		if v.Result != nil && *v.Result {
			return 1
		}
		return 0
	}
	lo, hi := *j.ScoreMin, *j.ScoreMax
	if hi <= lo || v.Score == nil {
		return 0
	}
	return (*v.Score - lo) / (hi - lo)
}

// taskRequest is candidate c run on example ex: its content (variables filled in) as the system
// message, its demonstrations as earlier turns, the example's input as the user message, at
// temperature 0 so that a candidate's score depends on the candidate.
func taskRequest(model string, c optimize.Candidate, ex optimize.Example) llm.Request {
	zero := 0.0
	var msgs []llm.Message
	for _, d := range c.Demonstrations {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: d.Input}, llm.Message{Role: llm.RoleAssistant, Text: d.Output})
	}
	input := ex.Input
	if input == "" {
		input = "(empty)"
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: input})
	return llm.Request{Model: model, System: fill(c.Content, ex.Variables), Messages: msgs, Temperature: &zero}
}

// variableRef matches a {{name}} reference of a prompt. It and wordPattern are compiled on
// first use, not when a function starts: MCP and the Dashboard link this package to mount the
// runs' routes, and compiling wordPattern's Unicode classes was 0.15-0.28 ms of their init.
var variableRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}`)
})

// fill substitutes the example's variables into a prompt, as the SDKs do; unknown references
// stay as written.
func fill(content string, vars map[string]string) string {
	if len(vars) == 0 {
		return content
	}
	re := variableRef()
	return re.ReplaceAllStringFunc(content, func(m string) string {
		if v, ok := vars[re.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
}

// tokenF1 is the F1 score of the words two texts share, case aside: 1 for the same words, 0 for
// none in common; a cheap, deterministic measure of an output against the expected one.
func tokenF1(got, want string) float64 {
	g, w := words(got), words(want)
	if len(g) == 0 || len(w) == 0 {
		if len(g) == len(w) {
			return 1
		}
		return 0
	}
	counts := map[string]int{}
	for _, t := range w {
		counts[t]++
	}
	common := 0
	for _, t := range g {
		if counts[t] > 0 {
			counts[t]--
			common++
		}
	}
	if common == 0 {
		return 0
	}
	p, r := float64(common)/float64(len(g)), float64(common)/float64(len(w))
	return 2 * p * r / (p + r)
}

var wordPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\p{L}\p{N}]+`) })

func words(s string) []string { return wordPattern().FindAllString(strings.ToLower(s), -1) }
