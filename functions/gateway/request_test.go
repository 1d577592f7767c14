package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/wire"
)

// FuzzReadValue: what readValue reads, it reads as json.Unmarshal does, for every kind of
// field readOAChat reads with it (a boolean, an int, a float64, a string, the messages).
func FuzzReadValue(f *testing.F) {
	for _, seed := range []string{
		`true`, `false`, `null`, `0`, `-0`, `256`, `-12`, `1.5`, `1e2`, `1E-7`, `-0.0`, `9223372036854775807`, `9223372036854775808`,
		`1e400`, `"gpt"`, `"a\"b"`, `"é名\u2028"`, "\"\xff\"", `""`, `[]`, `{}`, `[1]`,
		`[{"role":"system","content":"You are a support agent."},{"role":"user","content":"How do I reset my password?"}]`,
		`[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"42"}]`,
		`[{"Role":"user","content":"x"}]`, `[{"role":"user","role":"assistant"}]`, `[{"role":null,"content":"x"}]`, `[{"name":"n","role":"user"}]`,
		`[ { "role" : "user" , "content" : "x" } , {} ]`, `[{"ro\u006ce":"user"}]`, `[{"tool_calls":null}]`, `[{"tool_calls":[{"id":1}]}]`, `[1,{"role":"user"}]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		check := func(fast, slow any) {
			if !readValue([]byte(raw), fast) {
				return
			}
			require.NoError(t, json.Unmarshal([]byte(raw), slow), "readValue read %s into %T", raw, fast)
			require.True(t, reflect.DeepEqual(slow, fast), "%s: readValue %#v, json.Unmarshal %#v", raw, fast, slow)
		}
		var fastBool, slowBool bool
		check(&fastBool, &slowBool)
		var fastInt, slowInt *int
		check(&fastInt, &slowInt)
		var fastFloat, slowFloat *float64
		check(&fastFloat, &slowFloat)
		var fastString, slowString string
		check(&fastString, &slowString)
		var fastMessages, slowMessages []wire.ChatMessage
		check(&fastMessages, &slowMessages)
	})
}

// TestReadValueReadsTheCommonForms: the forms most requests send are read without the
// decoder (else FuzzReadValue would hold nothing).
func TestReadValueReadsTheCommonForms(t *testing.T) {
	var b bool
	var n *int
	var f *float64
	var s string
	var m []wire.ChatMessage
	for _, c := range []struct {
		raw string
		dst any
	}{
		{`true`, &b}, {`256`, &n}, {`0.2`, &f}, {`"anthropic/claude-haiku-4-5"`, &s}, {`"réponse"`, &s},
		{`[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}],"name":"u"}]`, &m},
	} {
		require.True(t, readValue([]byte(c.raw), c.dst), c.raw)
	}
	require.Equal(t, "réponse", s)
	require.Len(t, m, 2)
	require.Equal(t, `[{"type":"text","text":"hi"}]`, string(m[1].Content))
}
