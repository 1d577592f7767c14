package fakemodel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const testKey = "sk-test"

// openAIHeaders and anthropicHeaders are what each provider's clients send.
var (
	openAIHeaders    = map[string]string{"Authorization": "Bearer " + testKey}
	anthropicHeaders = map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01"}
)

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body as a generic JSON value.
func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.body, &v), "body: %s", r.body)
	return v
}

// post sends body to url+path with the headers and reads the answer.
func post(t testing.TB, url, path string, headers map[string]string, body string) response {
	t.Helper()
	return postContext(t, context.Background(), url, path, headers, body)
}

func postContext(t testing.TB, ctx context.Context, url, path string, headers map[string]string, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ event, data string }

// events splits an event stream, checking every event ends with a blank line.
func events(t testing.TB, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	open := false
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			require.True(t, open, "blank line without an event")
			out, cur, open = append(out, cur), sseEvent{}, false
		case strings.HasPrefix(line, "event: "):
			cur.event, open = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			cur.data, open = strings.TrimPrefix(line, "data: "), true
		default:
			t.Fatalf("unexpected stream line %q", line)
		}
	}
	require.False(t, open, "the stream ends inside an event")
	return out
}

// dig walks a decoded JSON value by object keys and array indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
