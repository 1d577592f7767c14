package gateway

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/wire"
)

// FuzzAppendMessagesRequest: appendMessagesRequest writes what json.Marshal writes, byte for
// byte, or fails where it fails: requests decoded from JSON, with a string set raw (any bytes,
// invalid UTF-8 among them) in every kind of place and a float set raw.
func FuzzAppendMessagesRequest(f *testing.F) {
	f.Add(`{"model":"claude-haiku-4-5","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_tokens":256,"temperature":0.2,"stream":true}`,
		"a <b> & \"c\" \\ \n\t\x00\x1f\x7f é 名 \u2028\u2029 \xff", 0.2)
	f.Add(`{"model":"m","system":[{"type":"text","text":"s"}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{"a": "<x>"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"42"}]},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}],`+
		`"max_tokens":1,"top_p":1e-7,"stop_sequences":["\n\n"],"tools":[{"name":"f","description":"d","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true},"metadata":{"user_id":"u"}}`,
		"", 1e21)
	f.Add(`{"messages":null,"tools":[{"name":"f"}]}`, "\b\f\r", math.Inf(1))
	f.Add(`{}`, "", -0.0)
	f.Fuzz(func(t *testing.T, data, s string, x float64) {
		var req wire.MessagesRequest
		_ = json.Unmarshal([]byte(data), &req)
		check := func(req *wire.MessagesRequest) {
			want, wantErr := json.Marshal(req)
			got, err := appendMessagesRequest(nil, req)
			if wantErr != nil {
				require.Error(t, err, "json.Marshal: %v", wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		}
		check(&req)
		req.Model, req.StopSequences = s, append(req.StopSequences, s)
		req.Temperature, req.TopP = &x, ptr(-x)
		req.System = append(req.System, wire.MessagesBlock{Type: s, Text: s, ID: s, Name: s, ToolUseID: s, Source: &wire.MessagesSource{Type: s, MediaType: s, Data: s, URL: s}})
		req.Messages = append(req.Messages, wire.MessagesMessage{Role: s, Content: []wire.MessagesBlock{{Type: "tool_result", Content: req.System}}})
		schema := json.RawMessage(`{"type":"object"}`)
		if json.Valid([]byte(s)) { // else json.Marshal fails, whatever the strings
			schema = json.RawMessage(s)
		}
		req.Tools = append(req.Tools, wire.MessagesTool{Name: s, Description: s, InputSchema: schema})
		req.ToolChoice, req.Metadata = &wire.MessagesToolChoice{Type: s, Name: s}, &wire.MessagesMetadata{UserID: s}
		check(&req)
	})
}
