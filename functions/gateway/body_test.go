package gateway

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChatBody: a request is sent on as the client wrote it, only what the gateway sets
// replaced where it stood (every member of its name) or added at the end.
func TestChatBody(t *testing.T) {
	tests := []struct {
		name, body string
		set        map[string]string
		want       string
	}{
		{"unchanged", `{ "model" : "a", "messages":[] }`, nil, `{ "model" : "a", "messages":[] }`},
		{"model renamed in place", `{"messages":[{"role":"user","content":"say \"}\""}], "model": "openai/gpt-4o-mini" ,"n":1}`,
			map[string]string{"model": `"gpt-4o-mini"`},
			`{"messages":[{"role":"user","content":"say \"}\""}], "model": "gpt-4o-mini" ,"n":1}`},
		{"a duplicate replaced twice", `{"model":"x","model":"y"}`, map[string]string{"model": `"z"`}, `{"model":"z","model":"z"}`},
		{"added at the end", "{\"model\":\"m\",\"stream\":true}\n", map[string]string{"stream_options": `{"include_usage":true}`},
			"{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}\n"},
		{"added to an empty object", `{ }`, map[string]string{"model": `"m"`, "messages": `[]`}, `{ "messages":[],"model":"m"}`},
		{"an escaped name is its string's", `{"mod\u0065l":"a"}`, map[string]string{"model": `"b"`}, `{"mod\u0065l":"b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, ok := readChatBody([]byte(tt.body))
			require.True(t, ok)
			for k, v := range tt.set {
				req.set(k, json.RawMessage(v))
			}
			assert.Equal(t, tt.want, string(req.encode()))
		})
	}
	for _, bad := range []string{``, `[]`, `"model"`, `{"model":}`, `{"model":"a"} {}`, `null`} {
		_, ok := readChatBody([]byte(bad))
		assert.False(t, ok, bad)
	}
}

// FuzzChatBody holds the index to encoding/json: the members are those json.Unmarshal reads
// into a map, and a body with a member set is the JSON object with that member's value
// replaced.
func FuzzChatBody(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"a":{"b":[1,2,{"c":"\"}"}]},"model":null}`, `{}`, `{"\u00e9":1,"model":"x","model":"y"}`, ` {"x" : [ ] } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal(body, &want) == nil && want != nil
		req, ok := readChatBody(body)
		require.Equal(t, wantOK, ok)
		if !ok {
			return
		}
		require.Equal(t, len(want), len(req.fields))
		for k, v := range want {
			require.Equal(t, string(v), string(req.fields[k]), k)
		}
		req.set("model", json.RawMessage(`"renamed"`))
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(req.encode(), &got))
		want["model"] = json.RawMessage(`"renamed"`)
		require.Equal(t, len(want), len(got))
		for k, v := range want {
			require.Equal(t, string(v), string(got[k]), k)
		}
	})
}
