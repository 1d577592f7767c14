package gepa_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

// scriptEvaluator is a fake Evaluator: score gives a candidate's score on an example. It counts
// its calls and the examples it was asked, fails with ErrBudget once it has answered budget
// calls (0: no budget), and with err on call failOn (1-based; the failed call is not counted,
// as the runner gives back a call that failed).
type scriptEvaluator struct {
	score  func(c optimize.Candidate, ex optimize.Example) optimize.Score
	budget int
	failOn int
	err    error

	calls    int
	attempts int
	batches  [][]string // the example ids of each call answered
}

func (f *scriptEvaluator) Evaluate(_ context.Context, c optimize.Candidate, examples []optimize.Example) ([]optimize.Score, error) {
	if f.budget > 0 && f.calls >= f.budget {
		return nil, fmt.Errorf("task model: %w", optimize.ErrBudget)
	}
	f.attempts++
	if f.attempts == f.failOn {
		return nil, f.err
	}
	f.calls++
	out := make([]optimize.Score, len(examples))
	ids := make([]string, len(examples))
	for i, ex := range examples {
		ids[i] = ex.ID
		out[i] = f.score(c, ex)
		out[i].ExampleID = ex.ID
	}
	f.batches = append(f.batches, ids)
	return out, nil
}

// keywordScore scores a candidate on an example by the keywords its rendered prompt holds: the
// example wants the words of its "want" variable and not those of its "avoid" variable; the
// score is the share of those wishes met, and the feedback names the first wanted word missing
// ("missing: w") and every avoided word present ("remove: w"). It scores a "tone" intent too:
// 1 when the prompt says "polite", else 0.5.
func keywordScore(c optimize.Candidate, ex optimize.Example) optimize.Score {
	words := strings.Fields(strings.ToLower(c.Render()))
	has := func(w string) bool { return slices.Contains(words, w) }
	want, avoid := strings.Fields(ex.Variables["want"]), strings.Fields(ex.Variables["avoid"])
	met := 0
	var feedback []string
	for _, w := range want {
		if has(w) {
			met++
		} else if len(feedback) == 0 {
			feedback = append(feedback, "missing: "+w)
		}
	}
	for _, w := range avoid {
		if has(w) {
			feedback = append(feedback, "remove: "+w)
		} else {
			met++
		}
	}
	overall := 1.0
	if n := len(want) + len(avoid); n > 0 {
		overall = float64(met) / float64(n)
	}
	tone := 0.5
	if has("polite") {
		tone = 1
	}
	return optimize.Score{Overall: overall, Intents: map[string]float64{"tone": tone},
		Output: "answer to " + ex.Input, Feedback: strings.Join(feedback, "\n")}
}

// zeroScore scores every candidate 0 everywhere: never perfect, so a Reflector is always asked.
func zeroScore(optimize.Candidate, optimize.Example) optimize.Score { return optimize.Score{} }

// keywordReflector is a fake Reflector: it appends to the content the first word a feedback
// says is missing, and answers the content unchanged when none is. It records the reflections
// it was shown, and fails with ErrBudget once it has answered budget calls (0: no budget).
type keywordReflector struct {
	budget int

	calls int
	shown [][]optimize.Reflection
}

func (f *keywordReflector) Reflect(_ context.Context, content string, scored []optimize.Reflection) (string, error) {
	if f.budget > 0 && f.calls >= f.budget {
		return "", fmt.Errorf("reflection model: %w", optimize.ErrBudget)
	}
	f.calls++
	f.shown = append(f.shown, scored)
	for _, s := range scored {
		for line := range strings.Lines(s.Score.Feedback) {
			if w, ok := strings.CutPrefix(strings.TrimSpace(line), "missing: "); ok {
				return content + " " + w, nil
			}
		}
	}
	return content, nil
}

// reflectFunc is a Reflector of a function.
type reflectFunc func(content string, scored []optimize.Reflection) (string, error)

func (f reflectFunc) Reflect(_ context.Context, content string, scored []optimize.Reflection) (string, error) {
	return f(content, scored)
}

// keywordExamples are the examples of the keyword fakes: train ids t0.., validation ids v0..,
// with wishes that make some words help everywhere and others help some examples and hurt
// others, so that a search accepts some children and rejects others.
func keywordExamples() (train, validation []optimize.Example) {
	wishes := []struct{ want, avoid string }{
		{"cite", ""}, {"brief", "json"}, {"json cite", ""}, {"polite", "brief"},
		{"date", ""}, {"json", "polite"}, {"brief date", ""}, {"cite polite", "json"},
	}
	for i, w := range wishes {
		ex := func(prefix string) optimize.Example {
			return optimize.Example{ID: fmt.Sprintf("%s%d", prefix, i), Input: fmt.Sprintf("question %d", i),
				Variables: map[string]string{"want": w.want, "avoid": w.avoid}}
		}
		train = append(train, ex("t"))
		if i%2 == 1 {
			validation = append(validation, ex("v"))
		}
	}
	return train, validation
}

// run steps st to its end (at most 500 steps), through JSON into a fresh State between steps
// when roundTrip is set, and returns the final state.
func run(t *testing.T, st *gepa.State, ev optimize.Evaluator, rf optimize.Reflector, roundTrip bool) *gepa.State {
	t.Helper()
	for range 500 {
		done, err := gepa.Step(context.Background(), st, ev, rf)
		require.NoError(t, err)
		if done {
			return st
		}
		if roundTrip {
			st = reload(t, st)
		}
	}
	t.Fatal("the search did not end in 500 steps")
	return nil
}

// reload is st through JSON, into a fresh State: what a resumed run starts from.
func reload(t *testing.T, st *gepa.State) *gepa.State {
	t.Helper()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	next := &gepa.State{}
	require.NoError(t, json.Unmarshal(b, next))
	return next
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// matrixState is a state whose pool is scored by a hand-built matrix: scores[c][e] is
// candidate c's overall score on validation example "e<e>". Candidate c has content "c<c>" and
// descends from candidate 0 (c > 0).
func matrixState(scores [][]float64) *gepa.State {
	st := &gepa.State{Iteration: 1}
	for e := range scores[0] {
		st.Validation = append(st.Validation, optimize.Example{ID: fmt.Sprintf("e%d", e)})
	}
	for c, row := range scores {
		m := gepa.Member{Candidate: optimize.Candidate{Content: fmt.Sprintf("c%d", c)}, Origin: gepa.OriginMutation,
			Parents: []int{0}, Scores: map[string]gepa.ExampleScore{}}
		if c == 0 {
			m.Origin, m.Parents = gepa.OriginSeed, nil
		}
		for e, s := range row {
			m.Scores[fmt.Sprintf("e%d", e)] = gepa.ExampleScore{Overall: s}
		}
		st.Pool = append(st.Pool, m)
	}
	return st
}
