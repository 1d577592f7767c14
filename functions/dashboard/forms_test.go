package dashboard

import "testing"

func TestParseNumber(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.5", 0.5, true}, {" 2 ", 2, true}, {"1e3", 1000, true}, {"-1", -1, true},
		{"", 0, false}, {"abc", 0, false}, {"NaN", 0, false}, {"nan", 0, false},
		{"Inf", 0, false}, {"-Infinity", 0, false}, {"1e999", 0, false},
	} {
		got, ok := parseNumber(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseNumber(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
