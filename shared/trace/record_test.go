package trace_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/trace"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/record.golden.ndjson")

// recordSpan is a span with every part of a record set.
func recordSpan() trace.Span {
	at := time.Date(2026, 11, 21, 22, 18, 54, 446123000, time.UTC)
	end := at.Add(1500 * time.Millisecond)
	str := func(s string) *string { return &s }
	num := func(f float64) *float64 { return &f }
	line := 42
	s := trace.Span{
		ID: "0b8a1c3e-1f2d-4c5b-9a8e-7d6c5b4a3f21", TraceID: "1c9b2d4f-2a3b-4c5d-8e9f-0a1b2c3d4e5f",
		ParentSpanID: str("2d0c3e5a-3b4c-4d5e-9f0a-1b2c3d4e5f60"), ProjectID: "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10",
		Name: "chat <completion> & more", Kind: "llm", Status: str("ok"), StartedAt: at, EndedAt: &end,
		DurationMS: num(1500), Cost: num(0.00042), CostSource: str("price_table"),
		SessionID: str("3e1d4f6b-4c5d-4e6f-8a0b-2c3d4e5f6071"), SessionName: str("support chat"),
		InputData: str("Hello ünïcode \u2028"), OutputData: str(`{"answer": "hi"}`),
		Attributes: json.RawMessage(`{"model":"gpt-4o-mini","inputTokens":100,"outputTokens":20}`),
		ErrorCode:  str("E42"), ErrorMessage: str("boom"), ErrorStack: str("at main()"),
		CodeFilepath: str("app/main.py"), CodeLineno: &line,
		Link:        &trace.PromptLink{Task: "support-bot", PromptSlug: "support-bot", PromptVersion: 3, PromptVersionID: "4f2e5a7c-5d6e-4f70-9b1c-3d4e5f607182", ContentHash: "ab12"},
		Attachments: []trace.Attachment{{Type: "image", Label: "chart", Key: "attachments/project=p/span=s/a.png", ContentType: "image/png", Size: 2048}},
		CreatedAt:   at, UpdatedAt: end,
	}
	s.Tags.Set("env", "prod")
	s.Tags.Set("user", "ana")
	s.TraceTags.Set("release", "1.2")
	s.SessionTags.Set("channel", "web")
	return s
}

// TestRecordGolden pins the bytes of a span's S3 record, the Athena table's schema: a change
// here changes every batch object written from then on, and needs the table (docs/tracing.md) changed
// with it. Run with -update to accept a deliberate change.
func TestRecordGolden(t *testing.T) {
	s := recordSpan()
	got := append(s.AppendJSON(nil), '\n')
	const golden = "testdata/record.golden.ndjson"
	if *updateGolden {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// TestRecordEncoder: AppendJSON writes exactly json.Marshal of the span's Record, for the
// golden span and for every span of the SDK fixtures.
func TestRecordEncoder(t *testing.T) {
	spans := []trace.Span{recordSpan()}
	for _, f := range []string{"testdata/python_batch.json", "testdata/typescript_batch.json"} {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		decoded, _, err := trace.DecodeBatch(body, "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10", time.Now())
		require.NoError(t, err)
		spans = append(spans, decoded...)
	}
	for i := range spans {
		want, err := json.Marshal(trace.RecordOf(&spans[i]))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(spans[i].AppendJSON(nil)), "span %d", i)
	}
}
