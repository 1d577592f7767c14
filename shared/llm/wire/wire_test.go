package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/wire"
)

// TestChatLenientReads: the values whose shape varies among OpenAI-compatible clients and
// servers are read in each shape, and written in OpenAI's.
func TestChatLenientReads(t *testing.T) {
	tests := []struct {
		name, in string
		want     wire.ChatChoice
	}{
		{"string content", `{"message":{"content":"hi"}}`, wire.ChatChoice{Message: wire.ChatAnswerMessage{Content: ptr(wire.ChatText("hi"))}}},
		{"null content", `{"message":{"content":null}}`, wire.ChatChoice{}},
		{"content parts kept as JSON text", `{"message":{"content":[ {"type": "text", "text": "hi"} ]}}`,
			wire.ChatChoice{Message: wire.ChatAnswerMessage{Content: ptr(wire.ChatText(`[{"type":"text","text":"hi"}]`))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got wire.ChatChoice
			require.NoError(t, json.Unmarshal([]byte(tt.in), &got))
			assert.Equal(t, tt.want, got)
		})
	}
	for _, in := range []string{`{"type":"image_url","image_url":{"url":"https://x/a.png"}}`, `{"type":"image_url","image_url":"https://x/a.png"}`} {
		var p wire.ChatPart
		require.NoError(t, json.Unmarshal([]byte(in), &p), in)
		assert.Equal(t, "https://x/a.png", p.ImageURL.URL, in)
		out, err := json.Marshal(p)
		require.NoError(t, err)
		assert.JSONEq(t, `{"type":"image_url","image_url":{"url":"https://x/a.png"}}`, string(out))
	}
	out, err := json.Marshal(wire.ChatPart{Type: "text", Text: "hi"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"text","text":"hi"}`, string(out), "no image_url on a text part")
}

func ptr[T any](v T) *T { return &v }
