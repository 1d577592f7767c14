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
	for _, text := range []string{"Hello", "", `a "quoted" <b>&amp;</b> \ back`, "é 中文 \u2028 \x00 \x7f", "bad \xff utf-8", `"content":""`, "tab\there ~ {}"} {
		checkTextChunk(t, text)
	}
}

// FuzzTextChunk holds the text chunks written in their frame to json.Marshal.
func FuzzTextChunk(f *testing.F) {
	for _, text := range []string{"Hello", `a "quoted" <b>&amp;</b> \ back`, "é \u2028 \x00 \x7f \xff"} {
		f.Add(text)
	}
	f.Fuzz(checkTextChunk)
}

// checkTextChunk checks the chunk of text, written by chunk and by textDelta, against the
// chunk json.Marshal writes.
func checkTextChunk(t *testing.T, text string) {
	w := httptest.NewRecorder()
	s := newAMStream(w, &amCall{}, `claude "content":"" <x>`, time.Unix(1700000000, 0), false)
	s.id, s.started = `msg_"content":""`, true
	require.NoError(t, s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText("first"))}, nil, nil))
	want, err := json.Marshal(wire.ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: 1700000000, Model: s.model,
		Choices: []wire.ChatChunkChoice{{Delta: wire.ChatDelta{Content: ptr(wire.ChatText(text))}}}})
	require.NoError(t, err)
	w.Body.Reset()
	require.NoError(t, s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(text))}, nil, nil))
	assert.Equal(t, "data: "+string(want)+"\n\n", w.Body.String(), text)
	w.Body.Reset()
	require.NoError(t, s.textDelta(text))
	assert.Equal(t, "data: "+string(want)+"\n\n", w.Body.String(), text)
}

// FuzzTextDelta holds the text delta reader to the decoder: what it reads, json.Unmarshal
// reads the same from the event.
func FuzzTextDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"say \"hi\" \u00e9 <b>"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"é \xff"}}`,
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		i, text, ok := amTextDelta(data)
		if !ok {
			return
		}
		var ev wire.MessagesEvent
		require.NoError(t, json.Unmarshal(data, &ev))
		require.Equal(t, "content_block_delta", ev.Type)
		require.Equal(t, ev.Index, i)
		require.NotNil(t, ev.Delta)
		require.Equal(t, "text_delta", ev.Delta.Type)
		require.Equal(t, ev.Delta.Text, text)
	})
}

// TestTextDelta: Anthropic's text deltas are read without the decoder, anything else is not.
func TestTextDelta(t *testing.T) {
	i, text, ok := amTextDelta([]byte(`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Hi \"there\"\n"}}`))
	assert.True(t, ok)
	assert.Equal(t, 3, i)
	assert.Equal(t, "Hi \"there\"\n", text)
	for _, other := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`,
		`{"type": "content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","more":1}}`,
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"a"}}`,
		`{"type":"message_stop"}`,
	} {
		_, _, ok := amTextDelta([]byte(other))
		assert.False(t, ok, other)
	}
}

// amEventSeeds are events of each form, and writings of them that are not (the decoder's).
var amEventSeeds = []string{
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":41,"output_tokens":1}}}`,
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":3,"cache_read_input_tokens":7,"output_tokens":1}}}`,
	`{"type":"message_start","message":{"id":"msg_\u0031","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":41,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Hi"}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_stop","index":012}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":18}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1234567890}}`,
	`{"type":"message_stop"}`,
	`{"type":"ping"}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
}

// FuzzEvent holds the events' reader to the decoder: what it reads, json.Unmarshal reads the
// same from the event, field for field.
func FuzzEvent(f *testing.F) {
	for _, s := range amEventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, ok := amEvent(data)
		if !ok {
			return
		}
		var want wire.MessagesEvent
		require.NoError(t, json.Unmarshal(data, &want))
		require.Equal(t, want, ev)
	})
}

// TestEvent: Anthropic's events other than text deltas are read without the decoder in the
// form Anthropic writes them, whatever they hold, and any other writing is left to it.
func TestEvent(t *testing.T) {
	read := map[string]bool{}
	for _, s := range amEventSeeds {
		ev, ok := amEvent([]byte(s))
		read[s] = ok
		if ok {
			var want wire.MessagesEvent
			require.NoError(t, json.Unmarshal([]byte(s), &want))
			assert.Equal(t, want, ev, s)
		}
	}
	assert.Equal(t, map[string]bool{
		amEventSeeds[0]: true, amEventSeeds[1]: true, amEventSeeds[2]: false, amEventSeeds[3]: true,
		amEventSeeds[4]: true, amEventSeeds[5]: false, amEventSeeds[6]: true, amEventSeeds[7]: false,
		amEventSeeds[8]: true, amEventSeeds[9]: false, amEventSeeds[10]: true, amEventSeeds[11]: true,
		amEventSeeds[12]: false,
	}, read)
	ev, _ := amEvent([]byte(amEventSeeds[1]))
	assert.Equal(t, wire.MessagesUsage{InputTokens: 25, CacheCreationInputTokens: 3, CacheReadInputTokens: 7, OutputTokens: 1}, ev.Message.Usage)
}
