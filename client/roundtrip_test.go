package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrepare: how the metadata is found and stripped, and variables substituted, in the
// shapes a chat request's messages take.
func TestPrepare(t *testing.T) {
	meta := `<zeroeval>{"task": "bot", "variables": {"name": "Zoë", "n": "3"}}</zeroeval>`
	tests := []struct {
		name     string
		messages string
		want     string // the messages sent; "" when they are sent as they came
		template string
	}{
		{
			name:     "string content",
			messages: `[{"role":"system","content":"` + jsonEscape(meta) + `Hi {{name}}"},{"role":"user","content":"{{n}} times {{name}}"}]`,
			want:     `[{"content":"Hi Zoë","role":"system"},{"content":"3 times Zoë","role":"user"}]`,
			template: "Hi {{name}}",
		},
		{
			name:     "text parts",
			messages: `[{"role":"developer","content":[{"type":"text","text":"` + jsonEscape(meta) + `Hi {{name}}"},{"type":"text","text":"{{n}}"}]},{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/{{n}}.png"}},{"type":"text","text":"{{name}}?"}]}]`,
			want:     `[{"content":[{"text":"Hi Zoë","type":"text"},{"text":"3","type":"text"}],"role":"developer"},{"content":[{"image_url":{"url":"https://x/{{n}}.png"},"type":"image_url"},{"text":"Zoë?","type":"text"}],"role":"user"}]`,
			template: "Hi {{name}}",
		},
		{
			name:     "metadata not in the first system message",
			messages: `[{"role":"system","content":"Be brief."},{"role":"system","content":"` + jsonEscape(meta) + `{{name}}"}]`,
		},
		{
			name:     "no system message",
			messages: `[{"role":"user","content":"` + jsonEscape(meta) + `{{name}}"}]`,
		},
		{
			name:     "malformed metadata",
			messages: `[{"role":"system","content":"<zeroeval>{\"task\": </zeroeval>{{name}}"}]`,
		},
		{
			name:     "messages of another shape",
			messages: `"hello"`,
		},
	}
	tr := &transport{models: &modelCache{now: time.Now}}
	u, _ := url.Parse("https://api.openai.com/v1/chat/completions")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"gpt-4o-mini","messages":` + tt.messages + `}`
			call, err := tr.prepare(context.Background(), u, []byte(body))
			require.NoError(t, err)
			if tt.want == "" {
				assert.Equal(t, body, string(call.body), "sent untouched")
				assert.NotContains(t, call.attributes, "zeroeval")
				return
			}
			assert.JSONEq(t, `{"model":"gpt-4o-mini","messages":`+tt.want+`}`, string(call.body))
			assert.JSONEq(t, tt.want, string(call.messages))
			assert.Equal(t, tt.template, call.attributes["system_prompt_template"])
			assert.Equal(t, "bot", call.attributes["task"])
		})
	}
	_, err := tr.prepare(context.Background(), u, []byte(`not json`))
	assert.Error(t, err)
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// FuzzStreamRecorder: whatever a provider streams, and however the reads split it, the
// recorder passes every byte on and records the same answer.
func FuzzStreamRecorder(f *testing.F) {
	f.Add([]byte("data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}],\"usage\":{\"prompt_tokens\":1}}\r\n\r\ndata: [DONE]\n\n"), uint8(3))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\"}}]}}]}\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":1}\"}},{\"index\":5}]}}]}\n"), uint8(1))
	f.Add([]byte(": comment\nevent: x\ndata: not json\ndata:\n"), uint8(7))
	f.Fuzz(func(t *testing.T, stream []byte, step uint8) {
		read := func(step int) (*streamRecorder, []byte) {
			r := &streamRecorder{body: io.NopCloser(&chunked{data: stream, step: step})}
			out, err := io.ReadAll(r)
			require.NoError(t, err)
			return r, out
		}
		whole, out := read(len(stream) + 1)
		assert.Equal(t, stream, out)
		split, out := read(int(step%16) + 1)
		assert.Equal(t, stream, out)
		assert.Equal(t, whole.content.String(), split.content.String())
		assert.Equal(t, whole.calls, split.calls)
		assert.Equal(t, string(whole.usage), string(split.usage))
		assert.Equal(t, whole.id, split.id)
	})
}

// chunked reads data step bytes at a time.
type chunked struct {
	data []byte
	step int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.step)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// FuzzPrepare: any request body is either refused as not JSON or prepared, and a body
// without linkage metadata is sent as it came.
func FuzzPrepare(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"system","content":"<zeroeval>{\"variables\":{\"a\":\"b\"}}</zeroeval>{{a}}"},{"role":"user","content":[{"type":"text","text":"{{a}}"}]}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	f.Add([]byte(`{"messages":{"role":"system"}}`))
	tr := &transport{models: &modelCache{now: time.Now}}
	u, _ := url.Parse("https://api.openai.com/v1/chat/completions")
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.Contains(body, []byte("prompt_version_id")) {
			return // would read the binding from an API
		}
		call, err := tr.prepare(context.Background(), u, body)
		if err != nil {
			return
		}
		if !bytes.Contains(body, []byte("zeroeval")) {
			assert.Equal(t, body, call.body)
		}
		if _, linked := call.attributes["zeroeval"]; linked {
			assert.True(t, json.Valid(call.body))
		}
	})
}

// TestModelCache: bindings are reused for modelTTL, a version without one too; a failed
// lookup is retried after modelErrorTTL, and one the caller gave up on at once.
func TestModelCache(t *testing.T) {
	var status, hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if s := status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		fmt.Fprint(w, `{"model":"gpt-4.1-mini","model_id":"gpt-4.1-mini","provider":"openai"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey("k"), WithRetries(0), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mc := &modelCache{now: func() time.Time { return now }}
	ctx := context.Background()
	get := func(id string) (string, string, error) { return mc.get(ctx, c, id) }

	model, provider, err := get("v1")
	require.NoError(t, err)
	assert.Equal(t, []string{"gpt-4.1-mini", "openai"}, []string{model, provider})
	_, _, _ = get("v1")
	assert.Equal(t, int32(1), hits.Load(), "reused")
	now = now.Add(modelTTL)
	_, _, _ = get("v1")
	assert.Equal(t, int32(2), hits.Load(), "read again after the TTL")

	status.Store(http.StatusNotFound)
	model, _, err = get("v2")
	require.NoError(t, err, "a version the API does not know has no binding")
	assert.Empty(t, model)
	_, _, _ = get("v2")
	assert.Equal(t, int32(3), hits.Load())

	status.Store(http.StatusInternalServerError)
	_, _, err = get("v3")
	require.ErrorIs(t, err, ErrInternal)
	_, _, err = get("v3")
	require.ErrorIs(t, err, ErrInternal)
	assert.Equal(t, int32(4), hits.Load(), "the failure is remembered")
	status.Store(0)
	now = now.Add(modelErrorTTL)
	model, _, err = get("v3")
	require.NoError(t, err)
	assert.Equal(t, "gpt-4.1-mini", model)

	_, _, err = mc.get(closed(), c, "v4")
	require.Error(t, err)
	model, _, err = get("v4")
	require.NoError(t, err, "a lookup the caller gave up on is not remembered")
	assert.Equal(t, "gpt-4.1-mini", model)
}
