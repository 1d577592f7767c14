package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPrintTable: every row is printed with its ratios to the hello world; a bootstrap over
// 15 MB is reported (so the run fails), but not an @base row's nor an owed one's (sizeOwed).
func TestPrintTable(t *testing.T) {
	owed := sizeOwed
	sizeOwed = map[string]string{"OwedFunction": "a test's"}
	t.Cleanup(func() { sizeOwed = owed })
	res := []result{
		{binary: binary{name: hello, deployed: 5 << 20}, median: 4 * time.Millisecond, cpuMedian: 3 * time.Millisecond},
		{binary: binary{name: "SmallFunction", deployed: 10 << 20}, median: 8 * time.Millisecond, cpuMedian: 6 * time.Millisecond},
		{binary: binary{name: "BigFunction", deployed: 15<<20 + 1}, median: 6 * time.Millisecond, cpuMedian: 6 * time.Millisecond},
		{binary: binary{name: "BigFunction" + baseSuffix, deployed: 20 << 20}, median: 6 * time.Millisecond, cpuMedian: 6 * time.Millisecond},
		{binary: binary{name: "EdgeFunction", deployed: 15 << 20}, median: 4 * time.Millisecond, cpuMedian: 3 * time.Millisecond},
		{binary: binary{name: "OwedFunction", deployed: 22 << 20}, median: 4 * time.Millisecond, cpuMedian: 3 * time.Millisecond},
	}
	var out bytes.Buffer
	over := printTable(&out, res, 3)
	assert.Equal(t, []string{"BigFunction: bootstrap 15.0 MB, over 15 MB"}, over)
	assert.Contains(t, out.String(), "| SmallFunction | 8.0 ms | 2.00x | 6 ms | 2.00x | 10.0 MB |")
	assert.Contains(t, out.String(), "| BigFunction | 6.0 ms | 1.50x | 6 ms | 2.00x | 15.0 MB (over) |")
	assert.Contains(t, out.String(), "| EdgeFunction | 4.0 ms | 1.00x | 3 ms | 1.00x | 15.0 MB |")
	assert.Contains(t, out.String(), "| OwedFunction | 4.0 ms | 1.00x | 3 ms | 1.00x | 22.0 MB (over) |")
}

// TestInterleave: each function's @base row follows its own; a function the earlier
// checkout did not build has none.
func TestInterleave(t *testing.T) {
	after := []binary{{name: hello}, {name: "AFunction"}, {name: "NewFunction"}, {name: "BFunction"}}
	ids := common([]string{"AFunction", "NewFunction", "BFunction"}, []string{"BFunction", "OldFunction", "AFunction"})
	assert.Equal(t, []string{"AFunction", "BFunction"}, ids)
	var before []binary
	for _, id := range ids {
		before = append(before, binary{name: id + baseSuffix})
	}
	var names []string
	for _, b := range interleave(after, before) {
		names = append(names, b.name)
	}
	assert.Equal(t, []string{hello, "AFunction", "AFunction @base", "NewFunction", "BFunction", "BFunction @base"}, names)
}
