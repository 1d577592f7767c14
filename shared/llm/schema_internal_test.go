package llm

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	schema := &Schema{JSON: []byte(`{"type":"object","additionalProperties":false,
		"required":["score","label","tags","ok"],
		"properties":{
			"score":{"type":"integer","minimum":1,"maximum":5},
			"ratio":{"type":"number","minimum":0,"maximum":1},
			"label":{"type":"string","enum":["good","bad"]},
			"tags":{"type":"array","items":{"type":"string"}},
			"ok":{"type":"boolean"},
			"note":{"type":["string","null"]},
			"detail":{"type":"object","required":["why"],"properties":{"why":{"type":"string"}}}}}`)}
	_, node, err := compileSchema(schema)
	require.NoError(t, err)
	tests := []struct {
		name, answer, wantErr string
	}{
		{"valid", `{"score":3,"label":"good","tags":["a"],"ok":true,"note":null,"ratio":0.5}`, ""},
		{"integer as 3.0", `{"score":3.0,"label":"bad","tags":[],"ok":false}`, ""},
		{"not JSON", `{"score":3,`, "the answer is not valid JSON"},
		{"trailing data", `{"score":3,"label":"good","tags":[],"ok":true} x`, "not valid JSON"},
		{"not an object", `[1]`, "the answer: want object, got array"},
		{"missing required", `{"score":3,"label":"good","ok":true}`, `the required property "tags" is missing`},
		{"wrong type", `{"score":"3","label":"good","tags":[],"ok":true}`, "score: want integer, got string"},
		{"not integer", `{"score":3.5,"label":"good","tags":[],"ok":true}`, "score: want integer, got number"},
		{"below minimum", `{"score":0,"label":"good","tags":[],"ok":true}`, "score: 0 is below the minimum 1"},
		{"above maximum", `{"score":3,"ratio":1.5,"label":"good","tags":[],"ok":true}`, "ratio: 1.5 is above the maximum 1"},
		{"not in enum", `{"score":3,"label":"fine","tags":[],"ok":true}`, `label: "fine" is not one of the allowed values ["good","bad"]`},
		{"bad item", `{"score":3,"label":"good","tags":["a",2],"ok":true}`, "tags[1]: want string, got integer"},
		{"extra property", `{"score":3,"label":"good","tags":[],"ok":true,"x":1}`, `the property "x" is not allowed`},
		{"nested", `{"score":3,"label":"good","tags":[],"ok":true,"detail":{}}`, `detail: the required property "why" is missing`},
		{"null not allowed", `{"score":null,"label":"good","tags":[],"ok":true}`, "score: want integer, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := node.validate([]byte(tt.answer))
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "5"}, 5 * time.Second},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "250", "Retry-After": "5"}, 250 * time.Millisecond},
		{"openai reset durations, longest", map[string]string{"X-Ratelimit-Reset-Requests": "6m0s", "X-Ratelimit-Reset-Tokens": "20ms"}, 6 * time.Minute},
		{"reset seconds", map[string]string{"X-Ratelimit-Reset": "12"}, 12 * time.Second},
		{"reset unix time", map[string]string{"X-Ratelimit-Reset": "1795262430"}, 30 * time.Second},
		{"anthropic reset", map[string]string{"Anthropic-Ratelimit-Tokens-Reset": now.Add(4 * time.Second).Format(time.RFC3339)}, 4 * time.Second},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			assert.Equal(t, tt.want, retryAfter(h, now))
		})
	}
}

func TestBackoffIsBounded(t *testing.T) {
	c := New(Config{}, Options{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second})
	for n := 1; n <= 40; n++ {
		for range 20 {
			d := c.backoff(n, 0)
			assert.GreaterOrEqual(t, d, time.Duration(0))
			assert.Less(t, d, min(time.Second, 100*time.Millisecond<<min(n-1, 20)))
		}
	}
	assert.Equal(t, 3*time.Second, c.backoff(1, 3*time.Second))
}
