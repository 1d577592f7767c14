package web

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
)

// BenchmarkWritten answers POST /spans for a batch of 20 llm spans as the Python SDK sends them
// (1 KB of input and output each): the answer path of walk 1 (issue 26).
func BenchmarkWritten(b *testing.B) {
	text := strings.Repeat("The capital of France is Paris. ", 32)
	now := time.Now().UTC()
	spans := make([]api.Span, 20)
	for i := range spans {
		cost, ms := 0.0021, 840.0
		spans[i] = api.Span{ID: uuid.NewString(), TraceID: uuid.NewString(), ProjectID: uuid.NewString(),
			Name: "openai.chat.completions.create", Kind: "llm", StartedAt: now, EndedAt: &now,
			DurationMS: &ms, Cost: &cost, InputData: &text, OutputData: &text,
			Attributes: json.RawMessage(`{"provider":"openai","model":"gpt-4o-mini","inputTokens":812,"outputTokens":214}`),
			Tags:       map[string]string{"env": "prod", "feature": "capitals"}}
	}
	r := httptest.NewRequest("POST", "/spans", nil)
	b.ReportAllocs()
	for b.Loop() {
		Written(httptest.NewRecorder(), r, spans, Array[api.Span])
	}
}
