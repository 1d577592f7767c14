package ddb_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/ddb"
)

func TestItemKind(t *testing.T) {
	const p = "0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11"
	tests := []struct {
		pk, sk, want string
	}{
		{"P#" + p, "PROJECT", "project"},
		{"P#" + p, "KEY#k1", "key"},
		{"P#" + p, "PRICE#gpt-4o", "price"},
		{"P#" + p, "DAYS#TRACES", "time_index_days"},
		{"APIKEY#ab12", "APIKEY", "key_lookup"},
		{"FLINK#ab12", "FLINK", "feedback_link"},
		{"P#" + p + "#PROMPT#bot", "V#0000000001", "prompt"},
		{"P#" + p + "#PV#v1", "PV", "version_pointer"},
		{"P#" + p + "#S#s1", "SPAN", "span"},
		{"P#" + p + "#S#s1", "FB#u1", "feedback"},
		{"P#" + p + "#S#s1", "EVAL#j1", "evaluation"},
		{"P#" + p + "#S#s1", "CLAIM#j1", "claim"},
		{"P#" + p + "#T#t1", "M#1#b", "trace"},
		{"P#" + p + "#SE#s1", "SESSION", "session"},
		{"P#" + p + "#PC#bot", "1#b", "completions"},
		{"P#" + p + "#J#j1", "JUDGE", "judge"},
		{"P#" + p + "#OR#r1", "RUN", "optimization_run"},
		{"P#" + p + "#MC#h", "CALL", "model_call"},
		{"P#" + p + "#RL#3", "M#202601011200", "rate_limit"},
		{"P#" + p + "#LX#spans", "20261120", "list_index"},
		{"P#" + p + "#LX#traces#20261120", "abue81bj6r2k9egubeg0", "list_index"},
		{"P#" + p + "#LX", "SINCE", "list_index"},
		{"P#" + p + "#NEW#x", "X", "other"},
	}
	for _, tt := range tests {
		t.Run(tt.pk+" "+tt.sk, func(t *testing.T) {
			assert.Equal(t, tt.want, ddb.ItemKind(p, tt.pk, tt.sk))
		})
	}
}
