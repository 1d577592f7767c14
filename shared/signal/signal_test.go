package signal

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTQuantiles against Student t tables.
func TestTQuantiles(t *testing.T) {
	for _, tt := range []struct{ df, want float64 }{
		{1, 12.706205}, {2, 4.302653}, {3, 3.182446}, {4, 2.776445}, {10, 2.228139}, {30, 2.042272}, {1000, 1.962339},
	} {
		assert.InDelta(t, tt.want, tQuantile(0.975, tt.df), 1e-5, "df %g", tt.df)
	}
	assert.InDelta(t, 0.05, tCDFUpper2(2.228139, 10), 1e-6)
	assert.InDelta(t, 1, tCDFUpper2(0, 5), 1e-12)
}

// TestParse reads values as each SDK meant them.
func TestParse(t *testing.T) {
	ref := EntityRef{Type: "span", ID: "s1"}
	tests := []struct {
		value, typ string
		wantType   string
		wantValue  string
		wantErr    bool
	}{
		{`true`, "numerical", "boolean", "1", false}, // Python's True
		{`false`, "", "boolean", "0", false},
		{`"true"`, "boolean", "boolean", "1", false}, // TypeScript's span signals
		{`"FALSE"`, "", "boolean", "0", false},
		{`"0.82"`, "numerical", "numerical", "0.82", false},
		{`1`, "boolean", "boolean", "1", false},
		{`2`, "boolean", "numerical", "2", false},
		{`0.1234567`, "", "numerical", "0.123457", false},
		{`-3`, "", "numerical", "-3", false},
		{`"maybe"`, "boolean", "", "", true},
		{`null`, "", "", "", true},
		{`{}`, "", "", "", true},
		{`1e10`, "", "", "", true},
	}
	for _, tt := range tests {
		s, err := Input{Ref: ref, Name: "n", Value: json.RawMessage(tt.value), Type: tt.typ}.parse()
		if tt.wantErr {
			assert.Error(t, err, tt.value)
			continue
		}
		require.NoError(t, err, tt.value)
		assert.Equal(t, tt.wantType, s.Type, tt.value)
		assert.Equal(t, tt.wantValue, s.Value, tt.value)
	}
}

// TestDecimalsExact: the aggregates' arithmetic is decimal, not float.
func TestDecimalsExact(t *testing.T) {
	assert.Equal(t, "0.01", square("0.1"))
	assert.Equal(t, "0.2", sub("0.3", "0.1"))
	d := AddDeltas(Delta{N: 1, Sum: "0.1", SumSq: "0.01"}, Delta{N: 1, Sum: "0.2", SumSq: "0.04"})
	assert.Equal(t, "0.3", d.Sum)
	assert.Equal(t, "0.05", d.SumSq)
	assert.Equal(t, "999999999.999999", decimalText(999999999.999999))
	assert.Equal(t, "999999999999998000.000000000001", square("999999999.999999"))
}

// TestSummarizeSingleValue: one value has a mean and no interval.
func TestSummarizeSingleValue(t *testing.T) {
	_, st := summarize(Aggregate{Signal: "x", N: 1, Sum: "3", SumSq: "9"})
	assert.Equal(t, 3.0, st.Mean)
	assert.Nil(t, st.CILow)
	sm, st := summarize(Aggregate{Signal: "x", N: 2, Sum: "4", SumSq: "8"})
	assert.Equal(t, 0.0, sm.variance)
	assert.Equal(t, 2.0, *st.CILow)
	_, _, _, ok := welch(sm, sm)
	assert.False(t, ok, "no variance: no test")
	assert.False(t, math.IsNaN(st.Mean))
}

// FuzzParse: no input makes parse panic, and what it accepts it can store.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`true`, `"0.5"`, `1e308`, `"abc"`, `[1]`, `-0`} {
		f.Add(s, "numerical")
	}
	f.Fuzz(func(t *testing.T, value, typ string) {
		s, err := Input{Ref: EntityRef{Type: "trace", ID: "t"}, Name: "n", Value: json.RawMessage(value), Type: typ}.parse()
		if err != nil {
			return
		}
		f := float(s.Value)
		assert.True(t, finite(f), "stored %q", s.Value)
		assert.Equal(t, s.Value, ratText(rat(s.Value)), "exact decimal text")
	})
}
