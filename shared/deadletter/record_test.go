package deadletter

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordJSON decodes a record shaped as Lambda writes one and encodes it back unchanged.
func TestRecordJSON(t *testing.T) {
	golden, err := os.ReadFile("testdata/retries-exhausted.json")
	require.NoError(t, err)

	var r Record
	require.NoError(t, json.Unmarshal(golden, &r))
	assert.Equal(t, Version, r.Version)
	assert.Equal(t, time.Date(2026, 3, 2, 9, 41, 17, 204_000_000, time.UTC), r.Timestamp)
	assert.Equal(t, RequestContext{
		RequestID:              "5b0e6c1a-7f3d-4c21-9a8e-2d4f60b1c9e7",
		FunctionARN:            "arn:aws:lambda:us-east-1:123456789012:function:plume-EvaluatorFunction:$LATEST",
		Condition:              ConditionRetriesExhausted,
		ApproximateInvokeCount: 3,
	}, r.RequestContext)
	assert.Equal(t, ResponseContext{StatusCode: 200, ExecutedVersion: ExecutedVersionLatest, FunctionError: FunctionErrorUnhandled}, r.ResponseContext)
	assert.JSONEq(t, `{"version":"0","detail-type":"Object Created","source":"aws.s3",
		"detail":{"bucket":{"name":"plume-data"},"object":{"key":"spans/2026/03/02/batch-1.jsonl"}}}`, string(r.RequestPayload))

	again, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, string(golden), string(again))
}

func TestEventOf(t *testing.T) {
	golden, err := os.ReadFile("testdata/retries-exhausted.json")
	require.NoError(t, err)
	var r Record
	require.NoError(t, json.Unmarshal(golden, &r))

	tests := []struct {
		name  string
		body  string
		event string // "" when the body holds none
	}{
		{"destination record", string(golden), string(r.RequestPayload)},
		{"event sent by DeadLetterConfig", `{"Records":[{"eventSource":"aws:s3"}]}`, `{"Records":[{"eventSource":"aws:s3"}]}`},
		{"event with a requestContext of its own", `{"requestContext":{"requestId":"r"},"body":"x"}`, `{"requestContext":{"requestId":"r"},"body":"x"}`},
		{"event whose requestContext is no object", `{"requestContext":"x","requestPayload":{}}`, `{"requestContext":"x","requestPayload":{}}`},
		{"JSON that is no object", `[1,2]`, `[1,2]`},
		{"record without its event", `{"requestContext":{"condition":"RetriesExhausted"}}`, ""},
		{"record with a null event", `{"requestContext":{"condition":"RetriesExhausted"},"requestPayload":null}`, ""},
		{"not JSON", `spans/2026/batch.jsonl`, ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			event, ok := eventOf([]byte(tt.body))
			if tt.event == "" {
				assert.False(t, ok)
				assert.Nil(t, event)
				return
			}
			require.True(t, ok)
			assert.JSONEq(t, tt.event, string(event))
		})
	}
}

// FuzzEventOf: message bodies are untrusted; whatever eventOf extracts is JSON.
func FuzzEventOf(f *testing.F) {
	golden, err := os.ReadFile("testdata/retries-exhausted.json")
	require.NoError(f, err)
	f.Add(golden)
	f.Add([]byte(`{"Records":[]}`))
	f.Add([]byte(`{"requestContext":{"condition":"x"},"requestPayload":null}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if event, ok := eventOf(body); ok && !json.Valid(event) {
			t.Fatalf("eventOf(%q) = %q, not JSON", body, event)
		}
	})
}
