package dataset

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuilderPages(t *testing.T) {
	b := NewBuilder()
	for i := range 250 {
		require.NoError(t, b.Add([]byte(fmt.Sprintf(`{"b": "%d", "a": %d}`, i%7, i%7))))
	}
	v := Version{RowCount: 250, Bytes: int64(len(b.Bytes())), Marks: b.Marks()}
	assert.Equal(t, []Mark{{0, 0}, {100, v.Marks[1].Offset}, {200, v.Marks[2].Offset}}, v.Marks)
	seen := map[string]bool{}
	for offset := 0; offset < 250; {
		start, length := pageRange(v, offset, 30, 1<<30)
		rows, err := parsePage(b.Bytes()[start.Offset:start.Offset+length], start.Row, offset, 30, 1<<20)
		require.NoError(t, err)
		require.NotEmpty(t, rows)
		for _, r := range rows {
			assert.False(t, seen[r.RowID], "row ids are unique")
			seen[r.RowID] = true
		}
		assert.JSONEq(t, fmt.Sprintf(`{"a": %d, "b": "%d"}`, offset%7, offset%7), string(rows[0].Data))
		offset += len(rows)
	}
	assert.Len(t, seen, 250)
}
