package trace

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpanCheck(t *testing.T) {
	valid := func() Span {
		end := testNow.Add(-time.Minute)
		return Span{
			ID: "c3a1f9e2-7b6d-4e5f-a1b2-c3d4e5f6a7b8", TraceID: "6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f", ProjectID: testProject,
			Name: "op", Kind: KindLLM, StartedAt: testNow.Add(-2 * time.Minute), EndedAt: &end,
			Attributes: json.RawMessage(`{"a":[1,"b c"]}`), Tags: Tags{{"a", "1"}, {"b", "2"}},
			CreatedAt: testNow, UpdatedAt: testNow,
		}
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		change func(s *Span)
		want   string // "" when s passes
	}{
		{name: "valid", change: func(*Span) {}},
		{name: "uppercase id", change: func(s *Span) { s.ID = strings.ToUpper(s.ID) }, want: "id:"},
		{name: "parent not a UUID", change: func(s *Span) { s.ParentSpanID = str("p") }, want: "parent_span_id:"},
		{name: "no project", change: func(s *Span) { s.ProjectID = "" }, want: "project_id:"},
		{name: "empty name", change: func(s *Span) { s.Name = "" }, want: "name: empty"},
		{name: "long name", change: func(s *Span) { s.Name = strings.Repeat("n", MaxNameLen+1) }, want: "name: longer"},
		{name: "name not UTF-8", change: func(s *Span) { s.Name = "\xff" }, want: "name: not valid UTF-8"},
		{name: "uppercase kind", change: func(s *Span) { s.Kind = "LLM" }, want: "kind:"},
		{name: "bad status", change: func(s *Span) { s.Status = str("OK") }, want: "status:"},
		{name: "start before 2000", change: func(s *Span) { s.StartedAt = MinSpanTime.Add(-time.Second) }, want: "started_at:"},
		{name: "end in the future", change: func(s *Span) { e := testNow.Add(MaxFutureSkew + time.Second); s.EndedAt = &e }, want: "ended_at:"},
		{name: "end before start", change: func(s *Span) { e := s.StartedAt.Add(-time.Microsecond); s.EndedAt = &e }, want: "ended_at:"},
		{name: "time not UTC", change: func(s *Span) { s.StartedAt = s.StartedAt.In(time.FixedZone("x", 3600)) }, want: "started_at:"},
		{name: "time not whole microseconds", change: func(s *Span) { s.StartedAt = s.StartedAt.Add(1) }, want: "started_at:"},
		{name: "negative cost", change: func(s *Span) { c := -1.0; s.Cost = &c }, want: "cost:"},
		{name: "NaN duration", change: func(s *Span) { d := math.NaN(); s.DurationMS = &d }, want: "duration_ms:"},
		{name: "empty error code", change: func(s *Span) { s.ErrorCode = str("") }, want: "error_code: empty"},
		{name: "empty input is kept", change: func(s *Span) { s.InputData = str("") }},
		{name: "large output", change: func(s *Span) { s.OutputData = str(strings.Repeat("x", MaxDataBytes+1)) }, want: "output_data:"},
		{name: "negative line", change: func(s *Span) { n := -1; s.CodeLineno = &n }, want: "code_lineno:"},
		{name: "attributes with whitespace", change: func(s *Span) { s.Attributes = json.RawMessage(`{"a": 1}`) }, want: "attributes: not compact"},
		{name: "attributes not an object", change: func(s *Span) { s.Attributes = json.RawMessage(`[]`) }, want: "attributes:"},
		{name: "attributes not JSON", change: func(s *Span) { s.Attributes = json.RawMessage(`{"a":}`) }, want: "attributes:"},
		{name: "tags out of order", change: func(s *Span) { s.Tags = Tags{{"b", "1"}, {"a", "2"}} }, want: "tags: keys not in increasing order"},
		{name: "duplicate tag", change: func(s *Span) { s.Tags = Tags{{"a", "1"}, {"a", "2"}} }, want: "tags: keys not in increasing order"},
		{name: "empty tag key", change: func(s *Span) { s.TraceTags = Tags{{"", "1"}} }, want: "trace_tags: key"},
		{name: "session name without session", change: func(s *Span) { s.SessionName = str("n") }, want: "session_id:"},
		{name: "usage that does not add up", change: func(s *Span) { s.LLM = &LLMUsage{Model: "m", InputTokens: 1, CachedInputTokens: 2} }, want: "llm:"},
		{name: "usage without a model", change: func(s *Span) { s.LLM = &LLMUsage{} }, want: "llm:"},
		{name: "empty link", change: func(s *Span) { s.Link = &PromptLink{} }, want: "link:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := valid()
			tt.change(&s)
			err := s.Check(testNow)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "got %q, want %q...", err, tt.want)
		})
	}
}
