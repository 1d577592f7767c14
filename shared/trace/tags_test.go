package trace

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTags(t *testing.T) {
	tests := []struct {
		name string
		m    map[string]string
	}{
		{"empty", nil},
		{"one", map[string]string{"env": "prod"}},
		{"ordered by bytes", map[string]string{"b": "2", "a": "1", "B": "0", "é": "x", "": "empty key"}},
		{"escaped", map[string]string{"<k>": "\"v\" & \u2028 \xff"}},
		{"more than a scan", map[string]string{"k1": "1", "k2": "2", "k3": "3", "k4": "4", "k5": "5", "k6": "6", "k7": "7", "k8": "8", "k9": "9", "k10": "10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tags := TagsOf(tt.m)
			require.Len(t, tags, len(tt.m))
			for k, v := range tt.m {
				got, ok := tags.Get(k)
				assert.True(t, ok, k)
				assert.Equal(t, v, got)
			}
			_, ok := tags.Get("missing")
			assert.False(t, ok)

			// Built by Set in any order, the set is the same.
			var set Tags
			for k, v := range tt.m {
				set.Set(k, "first")
				set.Set(k, v)
			}
			assert.Equal(t, tags, set)
			assert.Equal(t, tt.m, tags.Map())

			// JSON: what encoding/json writes for the map ({} for none), and back.
			want, err := json.Marshal(tt.m)
			require.NoError(t, err)
			if tt.m == nil {
				want = []byte("{}")
			}
			got, err := json.Marshal(tags)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			var back Tags
			var wantBack map[string]string
			require.NoError(t, json.Unmarshal(got, &back))
			require.NoError(t, json.Unmarshal(want, &wantBack))
			assert.Equal(t, len(wantBack), len(back))
			for k, v := range wantBack {
				got, _ := back.Get(k)
				assert.Equal(t, v, got)
			}
		})
	}
}

func TestMergeTags(t *testing.T) {
	tests := []struct {
		name    string
		a, b    map[string]string
		want    map[string]string
		sameAsA bool
	}{
		{name: "both empty", sameAsA: true},
		{name: "b empty", a: map[string]string{"x": "1"}, want: map[string]string{"x": "1"}, sameAsA: true},
		{name: "a empty", b: map[string]string{"x": "1"}, want: map[string]string{"x": "1"}},
		{name: "b wins", a: map[string]string{"x": "1", "y": "a"}, b: map[string]string{"y": "b", "z": "c"}, want: map[string]string{"x": "1", "y": "b", "z": "c"}},
		{name: "interleaved", a: map[string]string{"a": "1", "c": "3", "e": "5"}, b: map[string]string{"b": "2", "d": "4", "f": "6"}, want: map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := TagsOf(tt.a), TagsOf(tt.b)
			aBefore, bBefore := append(Tags(nil), a...), append(Tags(nil), b...)
			got := MergeTags(a, b)
			assert.Equal(t, tt.want, got.Map())
			assert.Equal(t, TagsOf(tt.want), got, "in key order")
			assert.Equal(t, aBefore, a, "a unchanged")
			assert.Equal(t, bBefore, b, "b unchanged")
			if tt.sameAsA {
				assert.Equal(t, a, got)
			}
		})
	}
}
