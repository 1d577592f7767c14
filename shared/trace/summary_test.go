package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSummarizeTokens: a summary carries the token counts of the span's usage (Span.LLM), as
// the decoder reads them from the attributes, and 0 when the span has none.
func TestSummarizeTokens(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		attributes string
		in, out    int64
	}{
		{"SDK counts", "llm", `{"model":"gpt-4o","inputTokens":1250,"outputTokens":87}`, 1250, 87},
		{"openai usage", "llm", `{"model":"gpt-4o","usage":{"prompt_tokens":300,"completion_tokens":20}}`, 300, 20},
		{"input only", "llm", `{"model":"gpt-4o","inputTokens":12}`, 12, 0},
		{"llm without a model has no usage", "llm", `{"inputTokens":100,"outputTokens":5}`, 0, 0},
		{"no attributes", "llm", `null`, 0, 0},
		{"generic span", "generic", `{"step":"plan"}`, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := Summarize(spanWithAttributes(t, tt.kind, tt.attributes), Location{})
			assert.Equal(t, tt.in, sum.InputTokens)
			assert.Equal(t, tt.out, sum.OutputTokens)
		})
	}
}
