package run_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/trace"
)

func TestMatches(t *testing.T) {
	base := judge.Judge{ID: "judge-1", Name: "j", EvaluationType: judge.TypeBinary, SampleRate: 1}
	span := trace.Span{ID: "span-1", Kind: trace.KindLLM,
		Tags: trace.TagsOf(map[string]string{"env": "prod", "team": "search"})}
	linked := func(slug, task string) trace.Span {
		s := span
		s.Link = &trace.PromptLink{PromptSlug: slug, Task: task}
		return s
	}
	with := func(f func(*judge.Judge)) judge.Judge {
		j := base
		f(&j)
		return j
	}
	filter := func(match string, tags map[string][]string) judge.Judge {
		return with(func(j *judge.Judge) { j.TagFilter = &judge.TagFilter{Tags: tags, Match: match} })
	}
	target := func(slug string) judge.Judge { return with(func(j *judge.Judge) { j.TargetPrompt = slug }) }

	tests := []struct {
		name string
		j    judge.Judge
		sp   trace.Span
		want bool
	}{
		{name: "llm span, no conditions", j: base, sp: span, want: true},
		{name: "other kind", j: base, sp: trace.Span{ID: "span-1", Kind: trace.KindGeneric}},
		{name: "empty kind", j: base, sp: trace.Span{ID: "span-1"}},
		{name: "paused", j: with(func(j *judge.Judge) { j.Paused = true }), sp: span},
		{name: "target via prompt_slug", j: target("support-bot"), sp: linked("support-bot", ""), want: true},
		{name: "target via task", j: target("support-bot"), sp: linked("", "support-bot"), want: true},
		{name: "prompt_slug before task", j: target("support-bot"), sp: linked("other", "support-bot")},
		{name: "target, other prompt", j: target("support-bot"), sp: linked("other", "")},
		{name: "target, no link", j: target("support-bot"), sp: span},
		{name: "all: every key met", j: filter(judge.MatchAll, map[string][]string{"env": {"staging", "prod"}, "team": {"search"}}), sp: span, want: true},
		{name: "all: one key's value not allowed", j: filter(judge.MatchAll, map[string][]string{"env": {"prod"}, "team": {"ads"}}), sp: span},
		{name: "all: one key missing", j: filter(judge.MatchAll, map[string][]string{"env": {"prod"}, "region": {"eu"}}), sp: span},
		{name: "all: span without tags", j: filter(judge.MatchAll, map[string][]string{"env": {"prod"}}), sp: trace.Span{ID: "span-1", Kind: trace.KindLLM}},
		{name: "empty match is all", j: filter("", map[string][]string{"env": {"prod"}, "region": {"eu"}}), sp: span},
		{name: "any: one key met", j: filter(judge.MatchAny, map[string][]string{"env": {"staging"}, "team": {"search"}}), sp: span, want: true},
		{name: "any: no key met", j: filter(judge.MatchAny, map[string][]string{"env": {"staging"}, "region": {"eu"}}), sp: span},
		{name: "values compare exactly", j: filter(judge.MatchAll, map[string][]string{"env": {"Prod"}}), sp: span},
		{name: "sample rate 0", j: with(func(j *judge.Judge) { j.SampleRate = 0 }), sp: span},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, run.Matches(tt.j, tt.sp))
		})
	}
}

func TestSampled(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)
	}
	count := func(judgeID string, rate float64) (n int, picked map[string]bool) {
		picked = map[string]bool{}
		for _, id := range ids {
			if run.Sampled(judgeID, id, rate) {
				n++
				picked[id] = true
			}
		}
		return n, picked
	}
	tests := []struct {
		name     string
		rate     float64
		min, max int
	}{
		{name: "rate 1 takes all", rate: 1, min: 1000, max: 1000},
		{name: "rate 0 takes none", rate: 0, min: 0, max: 0},
		{name: "rate 0.3", rate: 0.3, min: 255, max: 345},
		{name: "rate 0.5", rate: 0.5, min: 450, max: 550},
		{name: "rate 0.01", rate: 0.01, min: 1, max: 25},
		{name: "NaN takes none", rate: nan(), min: 0, max: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, _ := count("judge-1", tt.rate)
			assert.GreaterOrEqual(t, n, tt.min)
			assert.LessOrEqual(t, n, tt.max)
		})
	}

	t.Run("deterministic", func(t *testing.T) {
		_, first := count("judge-1", 0.3)
		_, again := count("judge-1", 0.3)
		assert.Equal(t, first, again)
	})
	t.Run("a higher rate keeps the spans of a lower one", func(t *testing.T) {
		_, low := count("judge-1", 0.2)
		_, high := count("judge-1", 0.6)
		for id := range low {
			assert.True(t, high[id], id)
		}
	})
	t.Run("judges sample independently", func(t *testing.T) {
		_, a := count("judge-1", 0.3)
		_, b := count("judge-2", 0.3)
		assert.NotEqual(t, a, b)
	})
	t.Run("the ids are separated", func(t *testing.T) {
		differ := 0
		for i := range 200 {
			id := fmt.Sprint(i)
			if run.Sampled("ab", "c"+id, 0.5) != run.Sampled("a", "bc"+id, 0.5) {
				differ++
			}
		}
		assert.Positive(t, differ)
	})
}
