package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
	assert.Equal(t, 15, Usage{12, 3}.Total())
}
