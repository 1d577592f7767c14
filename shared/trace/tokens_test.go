package trace_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/trace"
)

// TestUpdateKeepsTokens: the token counts of a span's summary survive a later write of the
// span that carries no usage (a re-send that ends it or adds a tag: its stored record does not
// keep Span.LLM), and a later write with usage replaces them.
func TestUpdateKeepsTokens(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID := uuid.NewString()
	start := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	llm := span(traceID, "openai.chat", nil, start, 500)
	llm.Kind, llm.Attributes = trace.KindLLM, json.RawMessage(`{"model":"gpt-4o","inputTokens":1250,"outputTokens":87}`)
	llm.LLM = &trace.LLMUsage{Model: "gpt-4o", InputTokens: 1250, OutputTokens: 87}
	_, err := h.svc.Ingest(ctx, h.project, []trace.Span{llm})
	require.NoError(t, err)

	tokens := func(t *testing.T) (int64, int64) {
		t.Helper()
		sums, err := h.store.Summaries(ctx, h.project, []string{llm.ID})
		require.NoError(t, err)
		require.Contains(t, sums, llm.ID)
		return sums[llm.ID].InputTokens, sums[llm.ID].OutputTokens
	}
	in, out := tokens(t)
	assert.Equal(t, [2]int64{1250, 87}, [2]int64{in, out}, "first write")

	later := llm
	later.LLM, later.Attributes = nil, json.RawMessage(`{}`)
	later.Status, later.Tags = ptr("ok"), trace.TagsOf(map[string]string{"env": "prod"})
	later.UpdatedAt = llm.UpdatedAt.Add(time.Second)
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{later})
	require.NoError(t, err)
	in, out = tokens(t)
	assert.Equal(t, [2]int64{1250, 87}, [2]int64{in, out}, "a write without usage keeps the counts")

	again := later
	again.LLM = &trace.LLMUsage{Model: "gpt-4o", InputTokens: 2000, OutputTokens: 100}
	again.Attributes = json.RawMessage(`{"model":"gpt-4o","inputTokens":2000,"outputTokens":100}`)
	again.UpdatedAt = later.UpdatedAt.Add(time.Second)
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{again})
	require.NoError(t, err)
	in, out = tokens(t)
	assert.Equal(t, [2]int64{2000, 100}, [2]int64{in, out}, "a write with usage replaces them")
}
