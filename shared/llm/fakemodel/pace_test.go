package fakemodel_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// TestChunkInterval: a streamed reply's events leave ChunkInterval apart, in both wire formats:
// the last arrives at least (events-1)×ChunkInterval after the request was sent. Only that lower
// bound is asserted, which a busy machine cannot break (it delays arrivals, never advances them).
func TestChunkInterval(t *testing.T) {
	const interval = 30 * time.Millisecond
	_, url := start(t, fakemodel.WithRules(fakemodel.Rule{
		Reply: fakemodel.Reply{Text: "one two three", ChunkInterval: interval},
	}))

	for _, tt := range []struct {
		name, path string
		headers    map[string]string
		body       string
	}{
		{"openai", "/v1/chat/completions", openAIHeaders, `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"anthropic", "/v1/messages", anthropicHeaders, `{"model":"claude-haiku-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			sent := time.Now()
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)

			events := 0
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					events++
				}
			}
			last := time.Now()
			require.NoError(t, sc.Err())
			require.Greater(t, events, 3)
			assert.GreaterOrEqual(t, last.Sub(sent), time.Duration(events-1)*interval)
		})
	}
}
