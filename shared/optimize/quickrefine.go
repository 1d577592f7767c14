package optimize

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// MaxQuickRefineExamples bounds the examples a Quick Refine reflection is shown: the ones
// people or judges liked least, so that one call sees what most needs to change.
const MaxQuickRefineExamples = 8

// QuickRefine is the quick_refine strategy: one reflection over the feedback the training
// examples already carry (people's reasons and expected outputs, the judges' reasons), which
// rewrites the prompt. It costs one model call and takes seconds; the runner scores the result
// against the baseline on the holdout like any candidate.
func QuickRefine(ctx context.Context, baseline Candidate, train []Example, rf Reflector) (Candidate, error) {
	scored := make([]Reflection, 0, len(train))
	for _, ex := range train {
		scored = append(scored, Reflection{Example: ex, Score: recordedScore(ex)})
	}
	// The worst first; ties by id, so that the same examples give the same prompt.
	slices.SortStableFunc(scored, func(a, b Reflection) int {
		if a.Score.Overall != b.Score.Overall {
			if a.Score.Overall < b.Score.Overall {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Example.ID, b.Example.ID)
	})
	scored = scored[:min(len(scored), MaxQuickRefineExamples)]
	content, err := rf.Reflect(ctx, baseline.Content, scored)
	if err != nil {
		return Candidate{}, err
	}
	return Candidate{Content: content, Demonstrations: baseline.Demonstrations}, nil
}

// recordedScore is what an example's feedback says of the output it has: the mean of the
// judges' verdicts and the person's thumbs (1 up, 0 down), 0.5 with neither; its feedback text
// is what they said.
func recordedScore(ex Example) Score {
	var sum float64
	n := 0
	var fb []string
	for _, id := range sortedKeys(ex.Judged) {
		v := ex.Judged[id]
		sum += v.Score
		n++
		if v.Reason != "" {
			fb = append(fb, fmt.Sprintf("judge %s (score %.2f): %s", id, v.Score, v.Reason))
		}
	}
	if ex.ThumbsUp != nil {
		if *ex.ThumbsUp {
			sum++
		}
		n++
		verdict := "thumbs down"
		if *ex.ThumbsUp {
			verdict = "thumbs up"
		}
		fb = append(fb, "a person gave "+verdict+personReason(ex.Reason))
	}
	if ex.ExpectedOutput != "" {
		fb = append(fb, "the expected output is: "+ex.ExpectedOutput)
	}
	overall := 0.5
	if n > 0 {
		overall = sum / float64(n)
	}
	return Score{ExampleID: ex.ID, Overall: overall, Output: ex.Output, Feedback: strings.Join(fb, "\n")}
}

func personReason(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Render is the prompt content a candidate deploys as: its content, and its demonstrations
// after it as examples. A candidate without demonstrations is its content.
func (c Candidate) Render() string {
	if len(c.Demonstrations) == 0 {
		return c.Content
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(c.Content, "\n"))
	b.WriteString("\n\nExamples:\n")
	for i, d := range c.Demonstrations {
		fmt.Fprintf(&b, "\nExample %d\nInput: %s\nOutput: %s\n", i+1, d.Input, d.Output)
	}
	return b.String()
}
