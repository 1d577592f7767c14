package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/trace"
)

func TestReadPayload(t *testing.T) {
	p := func(s string) *string { return &s }
	tests := []struct {
		name string
		in   *string
		want payload
	}{
		{"absent", nil, payload{}},
		{"text", p("hello"), payload{Present: true, Text: shown{Text: "hello", Present: true}}},
		{"not JSON after all", p("[1, 2"), payload{Present: true, Text: shown{Text: "[1, 2", Present: true}}},
		{"other JSON", p(`{"a":1}`), payload{Present: true, JSON: shown{Text: "{\n  \"a\": 1\n}", Present: true}}},
		{"an array without roles", p(`[{"content":"x"}]`), payload{Present: true, JSON: shown{Text: "[\n  {\n    \"content\": \"x\"\n  }\n]", Present: true}}},
		{"chat", p(`[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"},` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"image_url","image_url":{"url":"https://img.example.com/a.png"}},` +
			`{"type":"image","source":{"type":"base64","data":"QUJD"}},{"type":"audio","x":1}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1"}]}]`),
			payload{Present: true, Messages: []message{
				{Role: "system", Parts: []part{{Text: "be brief"}}},
				{Role: "user", Parts: []part{{Text: "hi"}, {ImageNote: "Image (data URL, 26 bytes) not shown."}, {ImageURL: "https://img.example.com/a.png"},
					{ImageNote: "Image (base64, 4 bytes) not shown."}, {JSON: `{"type":"audio","x":1}`}}},
				{Role: "assistant", Parts: []part{{JSON: `{"tool_calls":[{"id":"c1"}]}`}}},
			}}},
		{"messages of a request", p(`{"model":"m","messages":[{"role":"user","content":"q"}]}`),
			payload{Present: true, Messages: []message{{Role: "user", Parts: []part{{Text: "q"}}}}}},
		{"javascript: image", p(`[{"role":"user","content":[{"type":"image_url","image_url":"javascript:alert(1)"}]}]`),
			payload{Present: true, Messages: []message{{Role: "user", Parts: []part{{ImageNote: "Image (19 bytes of reference) not shown."}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readPayload(tt.in, "x")
			tt.want.TestID = "x"
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("cut at the bound", func(t *testing.T) {
		long := strings.Repeat("a", maxShownBytes)
		got := readPayload(p(`[{"role":"user","content":"`+long+`"},{"role":"assistant","content":"more"}]`), "x")
		require.Len(t, got.Messages, 2)
		assert.Equal(t, long, got.Messages[0].Parts[0].Text)
		assert.Empty(t, got.Messages[1].Parts[0].Text)
		assert.Equal(t, 4, got.Omitted)
	})
}

func TestImageOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://bucket.s3.eu-west-1.amazonaws.com/k?X-Amz-Signature=1": "https://bucket.s3.eu-west-1.amazonaws.com",
		"http://127.0.0.1:9000/b/k":                                     "http://127.0.0.1:9000",
		"javascript:alert(1)":                                           "",
		"https://a;b.example.com/":                                      "",
		"https://user@example.com/":                                     "",
		"data:image/png;base64,AAAA":                                    "",
	} {
		assert.Equal(t, want, imageOrigin(in), in)
	}
}

func TestRollUp(t *testing.T) {
	at := time.Now()
	cost := func(c float64) *float64 { return &c }
	sum := func(id, parent string, c *float64, failed bool) trace.Summary {
		return trace.Summary{SpanID: id, ParentSpanID: parent, StartedAt: at, Cost: c, HasError: failed}
	}
	at2 := at.Add(time.Second)
	b := sum("b", "a", cost(0.5), true)
	b.StartedAt = at2
	rows := treeRows(map[string]trace.Summary{
		"a": sum("a", "", nil, false), "a1": sum("a1", "a", cost(0.25), false), "b": b,
		"b1": sum("b1", "b", nil, true), "c": sum("c", "", nil, false),
	})
	got := map[string][3]any{}
	for _, r := range rows {
		var c any
		if r.SubCosted {
			c = r.SubCost
		}
		got[r.SpanID] = [3]any{r.SubSpans, r.SubErrors, c}
	}
	assert.Equal(t, map[string][3]any{
		"a": {4, 2, 0.75}, "a1": {1, 0, 0.25}, "b": {2, 2, 0.5}, "b1": {1, 1, nil}, "c": {1, 0, nil},
	}, got)
}
