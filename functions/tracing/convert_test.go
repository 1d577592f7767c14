package tracing

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/trace"
)

// TestSpanAnswerIsTheRecord: a span as the API answers it (api.Span) is byte for byte the
// record stored in S3 (Span.AppendJSON): one encoder, two types, held equal here for every span
// of the SDK fixtures, with and without the optional parts.
func TestSpanAnswerIsTheRecord(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, f := range []string{"python_batch.json", "typescript_batch.json"} {
		body, err := os.ReadFile("../../shared/trace/testdata/" + f)
		require.NoError(t, err)
		spans, rejected, err := trace.DecodeBatch(body, "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10", now)
		require.NoError(t, err)
		require.Empty(t, rejected)
		require.NotEmpty(t, spans)
		spans[0].Link = &trace.PromptLink{Task: "t", PromptSlug: "bot", PromptVersion: 3, PromptVersionID: "v", ContentHash: "h"}
		spans[0].Attachments = []trace.Attachment{{Type: "image", Label: "<chart>", Key: "attachments/x", ContentType: "image/png", Size: 10}}
		source := "price_table"
		spans[0].CostSource = &source
		spans[0].TraceTags.Set("env", "prod")
		for i := range spans {
			answer, err := json.Marshal(toSpan(&spans[i]))
			require.NoError(t, err)
			assert.Equal(t, string(spans[i].AppendJSON(nil)), string(answer), "%s span %d", f, i)
		}
	}
}
