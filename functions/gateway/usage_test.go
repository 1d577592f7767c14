package gateway

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageWatchers(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n" +
		"data: [DONE]\n\n"
	tests := []struct {
		name        string
		contentType string
		body        string
		chunk       int // bytes per write: lines split across writes
		want        Usage
		found       bool
	}{
		{"stream with usage", "text/event-stream; charset=utf-8", stream, 7, Usage{12, 3}, true},
		{"stream without usage", "text/event-stream", "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", 5, Usage{}, false},
		{"stream ending without a newline", "text/event-stream", "data: {\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}", 100, Usage{1, 2}, true},
		{"indented JSON answer", "application/json", "{\n  \"id\": \"x\",\n  \"usage\": {\n    \"prompt_tokens\": 9,\n    \"completion_tokens\": 4\n  }\n}\n", 3, Usage{9, 4}, true},
		{"error answer", "application/json", `{"error":{"message":"no"}}`, 10, Usage{}, false},
		{"usage quoted in the content", "application/json", `{"choices":[{"message":{"content":"see \"usage\": {\"prompt_tokens\": 99}"}}],` +
			`"usage":{"prompt_tokens":5,"completion_tokens":6}}`, 4, Usage{5, 6}, true},
		{"usage null", "text/event-stream", "data: {\"choices\":[{\"delta\":{}}],\"usage\":null}\n\n", 9, Usage{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := usageWatcher(tt.contentType)
			for rest := tt.body; rest != ""; {
				n := min(tt.chunk, len(rest))
				_, _ = w.Write([]byte(rest[:n]))
				rest = rest[n:]
			}
			got, ok := w.Usage()
			assert.Equal(t, tt.found, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, int64(15), Usage{12, 3}.Total())
}

// TestUsageHider: the usage chunk and the blank line ending its event are dropped, everything
// else passes byte for byte, however the stream is split across writes.
func TestUsageHider(t *testing.T) {
	content := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n"
	usage := "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n"
	done := "data: [DONE]\n\n"
	long := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", maxWatchedLine) + "\"}}]}\n\n"
	tests := []struct {
		name, in, want string
	}{
		{"usage chunk dropped", content + usage + done, content + done},
		{"no usage chunk", content + done, content + done},
		{"CRLF lines", strings.ReplaceAll(content+usage+done, "\n", "\r\n"), strings.ReplaceAll(content+done, "\n", "\r\n")},
		{"a line too long to read passes", long + usage + done, long + done},
		{"a last line without its newline", content + "data: [DONE]", content + "data: [DONE]"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 64, 1 << 20} {
			var out bytes.Buffer
			h := &usageHider{dst: &out}
			for rest := tt.in; rest != ""; {
				n := min(chunk, len(rest))
				_, err := h.Write([]byte(rest[:n]))
				require.NoError(t, err)
				rest = rest[n:]
			}
			require.NoError(t, h.Close())
			assert.Equal(t, tt.want, out.String(), "%s, %d bytes a write", tt.name, chunk)
		}
	}
}

// TestUsageHiderRandomSplits: split at random points, a stream is passed on as TestUsageHider
// has it, the usage chunks and their blank lines dropped.
func TestUsageHiderRandomSplits(t *testing.T) {
	content := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n"
	usage := "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n"
	in := content + content + usage + "\r\n" + content + usage + "data: [DONE]\n\n"
	want := content + content + "\r\n" + content + "data: [DONE]\n\n"
	rng := rand.New(rand.NewPCG(31, 4))
	for range 2000 {
		var out bytes.Buffer
		h := &usageHider{dst: &out}
		for rest := in; rest != ""; {
			n := min(1+rng.IntN(2*len(content)), len(rest))
			_, err := h.Write([]byte(rest[:n]))
			require.NoError(t, err)
			rest = rest[n:]
		}
		require.NoError(t, h.Close())
		require.Equal(t, want, out.String())
	}
}
