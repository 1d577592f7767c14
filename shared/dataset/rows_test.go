package dataset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
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

// ranges is a bucket of objects that counts ranged reads and the bytes they answer.
type ranges struct {
	objects      map[string][]byte
	reads, bytes int
}

func (r *ranges) GetRange(_ context.Context, key string, offset, length int64) ([]byte, error) {
	r.reads++
	r.bytes += int(length)
	return r.objects[key][offset : offset+length], nil
}

// TestLookupRow finds every row of versions of 100 and 10,000 rows (repeats included) by its
// id in two ranged reads, whose size does not grow with the version.
func TestLookupRow(t *testing.T) {
	for _, n := range []int{100, 10_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := NewBuilder()
			for i := range n {
				require.NoError(t, b.Add([]byte(fmt.Sprintf(`{"q": %d}`, i%(n/2)))))
			}
			index, dir := b.RowIndex()
			v := Version{ID: "v", Object: "v.ndjson", Directory: dir}
			require.True(t, v.HasRowIndex())
			encoded, err := DecodeRowDirectory(EncodeRowDirectory(dir))
			require.NoError(t, err)
			assert.Equal(t, dir, encoded)
			assert.LessOrEqual(t, n/(len(dir)-1), 2*RowIndexBucketRows, "buckets grow with the version")
			r := &ranges{objects: map[string][]byte{"v.ndjson": b.Bytes(), RowIndexKey("v.ndjson"): index}}
			var rows []api.DatasetRow
			start, length := pageRange(Version{Bytes: int64(len(b.Bytes())), Marks: b.Marks()}, 0, n, 1<<30)
			rows, err = parsePage(b.Bytes()[start.Offset:start.Offset+length], 0, 0, n, 1<<30)
			require.NoError(t, err)
			require.Len(t, rows, n)
			maxBytes := 0
			for _, row := range rows {
				before := r.bytes
				got, err := LookupRow(context.Background(), r, v, row.RowID)
				require.NoError(t, err)
				require.JSONEq(t, string(row.Data), string(got))
				maxBytes = max(maxBytes, r.bytes-before)
			}
			assert.Equal(t, 2*n, r.reads, "two ranged reads a row")
			assert.Less(t, maxBytes, 8<<10, "a bucket and a line, whatever the version's size")
			_, err = LookupRow(context.Background(), r, v, strings.Repeat("0f", 16))
			assert.True(t, errs.Is(err, errs.CodeNotFound), "%v", err)
			_, err = LookupRow(context.Background(), r, Version{ID: "old"}, rows[0].RowID)
			assert.True(t, errs.Is(err, errs.CodeInvalid), "a version without a row index: %v", err)
		})
	}
}
