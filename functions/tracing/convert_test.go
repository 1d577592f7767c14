package tracing

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
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

// TestFitSpan: a span whose texts escape past the answer budget (1 MB of control characters in
// its input and output: 6 MB each in JSON) is answered with the largest cut to a prefix until
// it fits, and says which; a span of ordinary texts at the limits is answered whole.
func TestFitSpan(t *testing.T) {
	big := func(s string) *string { return &s }
	tests := []struct {
		name string
		span api.Span
		cut  []string
	}{
		{"ordinary texts at their limits", api.Span{InputData: big(strings.Repeat("a", trace.MaxDataBytes)), OutputData: big(strings.Repeat("b", trace.MaxDataBytes)),
			ErrorStack: big(strings.Repeat("c", trace.MaxErrorBytes))}, nil},
		{"control characters", api.Span{InputData: big(strings.Repeat("\x01", trace.MaxDataBytes)), OutputData: big(strings.Repeat("\x02", trace.MaxDataBytes)),
			ErrorStack: big("short")}, []string{"input_data", "output_data"}},
		{"quotes in one text", api.Span{InputData: big(strings.Repeat(`"`, trace.MaxDataBytes)), OutputData: big(strings.Repeat("\n", trace.MaxDataBytes))},
			nil}, // 2 MB + 2 MB escaped: 4 MB, over: the larger first
	}
	tests[2].cut = []string{"input_data"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.span
			whole := encodedLen(&s)
			fitSpan(&s, maxSpanBytes)
			assert.Equal(t, tt.cut, s.Cut)
			assert.LessOrEqual(t, encodedLen(&s), maxSpanBytes)
			if tt.cut == nil {
				assert.Equal(t, whole, encodedLen(&s), "whole")
				return
			}
			assert.Greater(t, encodedLen(&s), maxSpanBytes-100, "cut no more than it must")
			for _, f := range []struct {
				name      string
				was, left *string
			}{{"input_data", tt.span.InputData, s.InputData}, {"output_data", tt.span.OutputData, s.OutputData}} {
				assert.True(t, strings.HasPrefix(*f.was, *f.left), "%s is a prefix", f.name)
			}
		})
	}
}
