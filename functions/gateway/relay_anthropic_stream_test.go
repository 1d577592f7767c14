package gateway

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/wire"
)

// TestTextChunk: a text chunk written in its frame is byte for byte the chunk json.Marshal
// writes, whatever the text, the id and the model hold.
func TestTextChunk(t *testing.T) {
	for _, text := range []string{"Hello", "", `a "quoted" <b>&amp;</b> \ back`, "é 中文 \u2028 \x00 \x7f", "bad \xff utf-8", `"content":""`} {
		w := httptest.NewRecorder()
		s := newAMStream(w, &amCall{}, `claude "content":"" <x>`, time.Unix(1700000000, 0), false)
		s.id, s.started = `msg_"content":""`, true
		require.NoError(t, s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText("first"))}, nil, nil))
		w.Body.Reset()
		require.NoError(t, s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(text))}, nil, nil))
		want, err := json.Marshal(wire.ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: 1700000000, Model: s.model,
			Choices: []wire.ChatChunkChoice{{Delta: wire.ChatDelta{Content: ptr(wire.ChatText(text))}}}})
		require.NoError(t, err)
		assert.Equal(t, "data: "+string(want)+"\n\n", w.Body.String(), text)
	}
}
