package judge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInferCriteria(t *testing.T) {
	tests := []struct {
		name     string
		template string
		want     []Criterion
	}{
		{"bold labels with colon", "Rate the answer.\n**Accuracy**: facts are right\n**Tone:** calm and kind", []Criterion{
			{Key: "accuracy", Label: "Accuracy", Description: "facts are right"},
			{Key: "tone", Label: "Tone", Description: "calm and kind"},
		}},
		{"list items and dashes", "- **Task completion** - did it finish\n1. **Safety** no harm", []Criterion{
			{Key: "task_completion", Label: "Task completion", Description: "did it finish"},
			{Key: "safety", Label: "Safety", Description: "no harm"},
		}},
		{"headings take the next paragraph", "# Instructions\nGrade it.\n\n## Clarity\nIs it clear?\nNo jargon.\n\n## Output format\nJSON", []Criterion{
			{Key: "clarity", Label: "Clarity", Description: "Is it clear? No jargon."},
		}},
		{"keys are lower snake case", "**Follows the user's format (JSON/YAML)**: yes", []Criterion{
			{Key: "follows_the_user_s_format_json_yaml", Label: "Follows the user's format (JSON/YAML)", Description: "yes"},
		}},
		{"repeats and structure skipped", "**Tone**: a\n**tone**: b\n**Examples**: c", []Criterion{
			{Key: "tone", Label: "Tone", Description: "a"},
		}},
		{"leading digits dropped", "## 1. Relevance\nOn topic", []Criterion{
			{Key: "relevance", Label: "1. Relevance", Description: "On topic"},
		}},
		{"inline bold is not a label", "The answer must be **short** and kind.", nil},
		{"none", "Is the answer good?", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, InferCriteria(tt.template))
		})
	}
}

func TestNewAndPatch(t *testing.T) {
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

	j, err := New(Spec{Name: s("Tone"), Template: s("**Tone**: calm")}, "p", "j", "u", now)
	require.NoError(t, err)
	assert.Equal(t, TypeBinary, j.EvaluationType)
	assert.Nil(t, j.ScoreMin, "binary judges have no score range")
	assert.Equal(t, 1.0, j.SampleRate)
	assert.True(t, j.CriteriaInferred)

	sc, err := New(Spec{Name: s("S"), Template: s("x"), EvaluationType: s(TypeScored), ScoreMin: f(1), ScoreMax: f(5)}, "p", "j", "u", now)
	require.NoError(t, err)
	assert.InDelta(t, 3.8, *sc.PassThreshold, 1e-9, "min + 0.7 x range")

	// An explicit threshold survives a range change only when it is still in range.
	sc2, err := Patch(sc, Spec{PassThreshold: f(2)}, "u2", now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2.0, *sc2.PassThreshold)
	assert.Equal(t, "u2", sc2.UpdatedBy)
	_, err = Patch(sc2, Spec{ScoreMin: f(3), PassThreshold: f(2)}, "u", now)
	assert.ErrorContains(t, err, "pass_threshold must lie between")

	// A new template re-infers inferred criteria; explicit ones stay.
	p, err := Patch(j, Spec{Template: s("**Speed**: fast")}, "u", now)
	require.NoError(t, err)
	assert.Equal(t, []Criterion{{Key: "speed", Label: "Speed", Description: "fast"}}, p.Criteria)
	explicit, err := Patch(j, Spec{Criteria: &[]Criterion{{Key: "custom"}}}, "u", now)
	require.NoError(t, err)
	p, err = Patch(explicit, Spec{Template: s("**Speed**: fast")}, "u", now)
	require.NoError(t, err)
	assert.Equal(t, []Criterion{{Key: "custom"}}, p.Criteria)
	assert.False(t, p.CriteriaInferred)

	// Switching to binary drops the score range.
	b, err := Patch(sc, Spec{EvaluationType: s(TypeBinary)}, "u", now)
	require.NoError(t, err)
	assert.Nil(t, b.PassThreshold)
}
