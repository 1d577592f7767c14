package optimize_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/optimize"
)

func TestExampleOfRow(t *testing.T) {
	one := optimize.Dataset{InputColumns: []string{"q"}, ExpectedOutputColumn: "a"}
	tests := []struct {
		name string
		d    optimize.Dataset
		data string
		want optimize.Example
		ok   bool
	}{
		{"text input and output", one, `{"q":"Capital of France?","a":"Paris","lang":"en"}`,
			optimize.Example{ID: "r", Input: "Capital of France?", ExpectedOutput: "Paris", Variables: map[string]string{"q": "Capital of France?", "lang": "en"}}, true},
		{"values that are not text are JSON", one, `{"q":{"city":"Paris"},"a":42,"n":1.50}`,
			optimize.Example{ID: "r", Input: `{"city":"Paris"}`, ExpectedOutput: "42", Variables: map[string]string{"q": `{"city":"Paris"}`, "n": "1.50"}}, true},
		{"several input columns are an object", optimize.Dataset{InputColumns: []string{"q", "ctx", "missing"}}, `{"q":"Why?","ctx":"Because."}`,
			optimize.Example{ID: "r", Input: `{"ctx":"Because.","q":"Why?"}`, Variables: map[string]string{"q": "Why?", "ctx": "Because."}}, true},
		{"no expected output column", optimize.Dataset{InputColumns: []string{"q"}}, `{"q":"Why?","a":"x"}`,
			optimize.Example{ID: "r", Input: "Why?", Variables: map[string]string{"q": "Why?", "a": "x"}}, true},
		{"no input column", one, `{"a":"Paris"}`, optimize.Example{}, false},
		{"not an object", one, `[1,2]`, optimize.Example{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := optimize.ExampleOfRow(api.DatasetRow{RowID: "r", Data: json.RawMessage(tt.data)}, tt.d)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestLoadDatasetExamples: rows are read page by page from the first, until the row limit or
// the byte bound, whichever comes first; rows without an input column are left out.
func TestLoadDatasetExamples(t *testing.T) {
	const total, pageSize = 50, 7
	row := func(i int) api.DatasetRow {
		data := fmt.Sprintf(`{"q":"question %02d"}`, i)
		if i%10 == 9 {
			data = fmt.Sprintf(`{"x":"question %02d"}`, i) // as long, without the input
		}
		return api.DatasetRow{RowID: fmt.Sprint(i), Data: json.RawMessage(data)}
	}
	tests := []struct {
		name            string
		limit, maxBytes int
		examples, pages int
	}{
		{"the limit", 20, 1 << 20, 18, 3},
		{"every row", 100, 1 << 20, 45, 8},
		{"the byte bound", 100, len(`{"q":"question 00"}`) * 12, 11, 2},
		{"the first row whatever its size", 100, 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads [][2]int
			pages := func(_ context.Context, offset, limit int) ([]api.DatasetRow, error) {
				reads = append(reads, [2]int{offset, limit})
				var out []api.DatasetRow
				for i := offset; i < min(total, offset+min(limit, pageSize)); i++ {
					out = append(out, row(i))
				}
				return out, nil
			}
			got, err := optimize.LoadDatasetExamples(context.Background(), pages, optimize.Dataset{InputColumns: []string{"q"}, RowCount: total}, tt.limit, tt.maxBytes)
			require.NoError(t, err)
			assert.Len(t, got, tt.examples)
			assert.Len(t, reads, tt.pages, "pages read: %v", reads)
			for i, r := range reads {
				assert.Equal(t, i*pageSize, r[0], "page %d starts where the one before ended", i)
			}
			assert.Equal(t, "question 00", got[0].Input)
		})
	}
}
