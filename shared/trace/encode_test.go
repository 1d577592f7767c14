package trace

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAppendJSONMatchesMarshal holds AppendJSON to json.Marshal on the SDK fixtures and on
// spans with every optional field, awkward strings and numbers.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	var spans []Span
	for _, f := range []string{"testdata/python_batch.json", "testdata/typescript_batch.json"} {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		got, _, err := DecodeBatch(raw, "p", time.Now())
		require.NoError(t, err)
		spans = append(spans, got...)
	}
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	line := 12
	end := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.FixedZone("x", 3600))
	spans = append(spans,
		Span{},
		Span{
			ID: "a", Name: "<tag> & \"quote\" \\ \n\t\r\b\f \x01 \u2028 \u2029 é 漢 \xff", Status: s("ok"),
			EndedAt: &end, DurationMS: f(1e-7), Cost: f(1e21), CostSource: s("client"), SessionName: s(""),
			InputData: s(""), Attributes: json.RawMessage(`{"a":[1,2,{"b":null}]}`),
			Tags: map[string]string{"z": "1", "a": "<>"}, TraceTags: map[string]string{"t": "x"},
			SessionTags: map[string]string{"s": "y"}, ErrorCode: s("E"), CodeLineno: &line,
			Link: &PromptLink{Task: "t", PromptVersion: 3}, Attachments: []Attachment{{Type: "image", Key: "k"}},
		},
		Span{DurationMS: f(0), Cost: f(-2.5e-9), Tags: map[string]string{}},
		Span{DurationMS: f(123456.789), Cost: f(0.000123)},
	)
	for i, sp := range spans {
		want, err := json.Marshal(sp)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(sp.AppendJSON(nil)), "span %d", i)
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("name", "input", 1.5, "k", "v")
	f.Add("\xff\u2028<", "", -1e-9, "", "\x00")
	f.Fuzz(func(t *testing.T, name, input string, cost float64, k, v string) {
		sp := Span{Name: name, InputData: &input, Cost: &cost, Tags: map[string]string{k: v}}
		want, err := json.Marshal(sp)
		if err != nil {
			return // NaN and infinities: never produced by the decoder
		}
		if got := string(sp.AppendJSON(nil)); got != string(want) {
			t.Fatalf("AppendJSON %s\njson.Marshal %s", got, want)
		}
	})
}
