package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/plumehq/plume/shared/errs"
)

// A version's row index finds one row by its id without reading the version: the judge runner
// needs the row of each result it evaluates (its input), and a result names only its row id.
//
// The index is a second object next to the version's (RowIndexKey): one 28-byte entry a row
// (the id's 16 bytes, then the line's byte offset and length in the version's object), sorted
// by id. Row ids are hashes, spread evenly, so entries are grouped into 2^k buckets by their
// first k bits, with k the smallest that keeps a bucket near RowIndexBucketRows entries (at
// most 2^12 buckets); the version's item holds where each bucket starts (RowDirectory, 4 bytes
// a bucket, at most 16 KB). A row is then two ranged GETs whatever the version's size: its
// bucket (about RowIndexBucketRows entries, ~1.8 KB) and its line.
const (
	RowIndexBucketRows = 64
	rowIndexMaxBits    = 12
	rowEntryBytes      = 28
)

// rowEntry is a row's place in the version's object.
type rowEntry struct {
	id     [16]byte
	offset int64
	length uint32
}

// RowDirectory is where each bucket of a version's row index starts, in entries: bucket b is
// entries [Starts[b], Starts[b+1]). Empty for a version stored before row indexes.
type RowDirectory []uint32

// buckets is the number of buckets; 0 for no directory.
func (d RowDirectory) buckets() int { return max(len(d)-1, 0) }

// bucketOf is the bucket of id in a directory of n buckets (a power of two).
func bucketOf(id [16]byte, n int) int {
	k := bits.TrailingZeros(uint(n))
	return int(binary.BigEndian.Uint16(id[:2]) >> (16 - k))
}

// RowIndex is the row index of the rows added so far: the index object's bytes and the
// directory for the version's item.
func (b *Builder) RowIndex() ([]byte, RowDirectory) {
	entries := slices.Clone(b.entries)
	slices.SortFunc(entries, func(x, y rowEntry) int { return bytes.Compare(x.id[:], y.id[:]) })
	k := 0
	for k < rowIndexMaxBits && len(entries) > RowIndexBucketRows<<k {
		k++
	}
	n := 1 << k
	dir := make(RowDirectory, n+1)
	obj := make([]byte, 0, rowEntryBytes*len(entries))
	for _, e := range entries {
		dir[bucketOf(e.id, n)+1]++
		obj = append(obj, e.id[:]...)
		obj = binary.BigEndian.AppendUint64(obj, uint64(e.offset))
		obj = binary.BigEndian.AppendUint32(obj, e.length)
	}
	for i := 1; i <= n; i++ {
		dir[i] += dir[i-1]
	}
	return obj, dir
}

// EncodeRowDirectory packs a directory for the version's item (4 bytes a bucket).
func EncodeRowDirectory(d RowDirectory) []byte {
	out := make([]byte, 0, 4*len(d))
	for _, s := range d {
		out = binary.BigEndian.AppendUint32(out, s)
	}
	return out
}

// DecodeRowDirectory unpacks EncodeRowDirectory.
func DecodeRowDirectory(b []byte) (RowDirectory, error) {
	if len(b) == 0 {
		return nil, nil
	}
	n := len(b)/4 - 1
	if len(b)%4 != 0 || n < 1 || n&(n-1) != 0 {
		return nil, fmt.Errorf("row directory of %d bytes is not a power of two of buckets", len(b))
	}
	out := make(RowDirectory, 0, n+1)
	for i := 0; i < len(b); i += 4 {
		out = append(out, binary.BigEndian.Uint32(b[i:]))
	}
	return out, nil
}

// RowIndexKey is the key of the row index of the version whose object is at key object.
func RowIndexKey(object string) string {
	return strings.TrimSuffix(object, ".ndjson") + ".rowindex"
}

// RangeReader reads byte ranges of objects (blob.Store).
type RangeReader interface {
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
}

// HasRowIndex reports whether v's rows can be read one by one (LookupRow): versions stored
// before row indexes cannot.
func (v Version) HasRowIndex() bool { return v.Directory.buckets() > 0 }

// LookupRow returns the data of row rowID of version v: two ranged GETs, its bucket of the row
// index and its line, whatever the version's size. Errors: NotFound when v has no such row,
// Invalid when v has no row index (HasRowIndex).
func LookupRow(ctx context.Context, objects RangeReader, v Version, rowID string) (json.RawMessage, error) {
	if !v.HasRowIndex() {
		return nil, errs.Invalid("dataset version %s has no row index", v.ID)
	}
	var id [16]byte
	if n, err := hex.Decode(id[:], []byte(rowID)); err != nil || n != 16 || len(rowID) != 32 {
		return nil, errs.NotFound("row %q not found in dataset version %s", rowID, v.ID)
	}
	b := bucketOf(id, v.Directory.buckets())
	first, last := v.Directory[b], v.Directory[b+1]
	if first == last {
		return nil, errs.NotFound("row %q not found in dataset version %s", rowID, v.ID)
	}
	bucket, err := objects.GetRange(ctx, RowIndexKey(v.Object), int64(first)*rowEntryBytes, int64(last-first)*rowEntryBytes)
	if err != nil {
		return nil, fmt.Errorf("read row index of version %s: %w", v.ID, err)
	}
	for e := bucket; len(e) >= rowEntryBytes; e = e[rowEntryBytes:] {
		if !bytes.Equal(e[:16], id[:]) {
			continue
		}
		offset, length := int64(binary.BigEndian.Uint64(e[16:])), int64(binary.BigEndian.Uint32(e[24:]))
		line, err := objects.GetRange(ctx, v.Object, offset, length)
		if err != nil {
			return nil, fmt.Errorf("read row %s of version %s: %w", rowID, v.ID, err)
		}
		var row struct {
			RowID string          `json:"row_id"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &row); err != nil || row.RowID != rowID {
			return nil, fmt.Errorf("row %s of version %s: the index points at another line", rowID, v.ID)
		}
		return row.Data, nil
	}
	return nil, errs.NotFound("row %q not found in dataset version %s", rowID, v.ID)
}
