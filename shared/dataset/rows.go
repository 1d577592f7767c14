package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Index spacing: an index entry is recorded at the first row, then after every IndexRows rows
// or IndexBytes bytes since the last entry, whichever comes first. A page of rows therefore
// starts reading at most IndexRows rows or IndexBytes (plus one row) before its first row.
const (
	IndexRows  = 100
	IndexBytes = 1 << 20
)

// Mark is an index entry: row Row starts at byte Offset of the version's object.
type Mark struct {
	Row    int
	Offset int64
}

// Builder makes a version's object from its rows, in order: it checks each row, writes it as
// a line {"row_id": ..., "data": {...}} and keeps the index. A row's data is re-encoded with
// its keys sorted (numbers kept as written), so its row_id, a hash of that form, does not
// depend on the order of its keys; the k-th repeat of the same row in one version (k > 0)
// hashes k too, so every row_id of a version is unique and an unchanged dataset keeps its ids.
type Builder struct {
	buf   bytes.Buffer
	marks []Mark
	seen  map[[32]byte]int
	rows  int
	last  Mark
	// entries are the rows' places, for the row index (RowIndex).
	entries []rowEntry
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{seen: map[[32]byte]int{}} }

// Add appends one row. It returns errs.Invalid for a row that is not a JSON object or is
// larger than api.MaxDatasetRowBytes, and when the version would pass api.MaxDatasetRows.
func (b *Builder) Add(raw []byte) error {
	if b.rows >= api.MaxDatasetRows {
		return errs.Invalid("a dataset version holds at most %d rows", api.MaxDatasetRows)
	}
	if len(raw) > api.MaxDatasetRowBytes {
		return errs.Invalid("row %d has %d bytes; a row holds at most %d", b.rows, len(raw), api.MaxDatasetRowBytes)
	}
	data, err := canonical(raw)
	if err != nil {
		return errs.Invalid("row %d: %v", b.rows, err)
	}
	sum := sha256.Sum256(data)
	n := b.seen[sum]
	b.seen[sum] = n + 1
	key := rowKey(sum, n)
	id := hex.EncodeToString(key[:])
	off := int64(b.buf.Len())
	if b.rows == 0 || b.rows-b.last.Row >= IndexRows || off-b.last.Offset >= IndexBytes {
		b.last = Mark{Row: b.rows, Offset: off}
		b.marks = append(b.marks, b.last)
	}
	b.buf.WriteString(`{"row_id":"`)
	b.buf.WriteString(id)
	b.buf.WriteString(`","data":`)
	b.buf.Write(data)
	b.buf.WriteString("}\n")
	b.entries = append(b.entries, rowEntry{id: key, offset: off, length: uint32(int64(b.buf.Len()) - off - 1)})
	b.rows++
	return nil
}

// AddLines adds every line of r (NDJSON: one row object a line; blank lines are skipped),
// streaming: r is read once, a line at a time.
func (b *Builder) AddLines(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), api.MaxDatasetRowBytes+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := b.Add(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errs.Invalid("row %d is longer than %d bytes", b.rows, api.MaxDatasetRowBytes)
		}
		return fmt.Errorf("read rows: %w", err)
	}
	return nil
}

// Rows is the number of rows added.
func (b *Builder) Rows() int { return b.rows }

// Bytes is the object: the rows' lines.
func (b *Builder) Bytes() []byte { return b.buf.Bytes() }

// Marks is the index of the object.
func (b *Builder) Marks() []Mark { return b.marks }

// rowKey is the id of the n-th occurrence (from 0) in a version of the row whose canonical
// form hashes to sum: 16 bytes, written as 32 hex digits.
func rowKey(sum [32]byte, n int) [16]byte {
	if n > 0 {
		sum = sha256.Sum256(append(sum[:], strconv.Itoa(n)...))
	}
	return [16]byte(sum[:16])
}

// IsRowID reports whether s has the form of a row id.
func IsRowID(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// canonical is the row object raw with its keys sorted at every level.
func canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var row map[string]any
	if err := dec.Decode(&row); err != nil || row == nil {
		return nil, errors.New("a row must be a JSON object")
	}
	if dec.More() {
		return nil, errors.New("a row must be one JSON object")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(row); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// EncodeMarks packs an index (16 bytes an entry) for the version's item.
func EncodeMarks(marks []Mark) []byte {
	out := make([]byte, 0, 16*len(marks))
	for _, m := range marks {
		out = binary.BigEndian.AppendUint64(out, uint64(m.Row))
		out = binary.BigEndian.AppendUint64(out, uint64(m.Offset))
	}
	return out
}

// DecodeMarks unpacks EncodeMarks.
func DecodeMarks(b []byte) ([]Mark, error) {
	if len(b)%16 != 0 {
		return nil, fmt.Errorf("index of %d bytes is not whole entries", len(b))
	}
	out := make([]Mark, 0, len(b)/16)
	for i := 0; i < len(b); i += 16 {
		out = append(out, Mark{Row: int(binary.BigEndian.Uint64(b[i:])), Offset: int64(binary.BigEndian.Uint64(b[i+8:]))})
	}
	return out, nil
}

// pageRange is the byte range of a version's object that holds rows [offset, offset+limit):
// from the last index entry at or before offset, to the first entry at or after the page's
// end (or the object's end), at most max bytes.
func pageRange(v Version, offset, limit int, max int64) (start Mark, length int64) {
	marks := v.Marks
	i := 0
	for j, m := range marks {
		if m.Row > offset {
			break
		}
		i = j
	}
	start = marks[i]
	end := v.Bytes
	for _, m := range marks[i:] {
		if m.Row >= offset+limit {
			end = m.Offset
			break
		}
	}
	return start, min(end-start.Offset, max)
}

// parsePage reads the rows of chunk (lines of an object from row first on) from row offset,
// at most limit rows and budget bytes of lines, never fewer than one row when chunk holds
// one. A partial last line is ignored.
func parsePage(chunk []byte, first, offset, limit, budget int) ([]api.DatasetRow, error) {
	var rows []api.DatasetRow
	used := 0
	for n := first; len(chunk) > 0 && len(rows) < limit; n++ {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			break
		}
		line := chunk[:i]
		chunk = chunk[i+1:]
		if n < offset {
			continue
		}
		if len(rows) > 0 && used+len(line) > budget {
			break
		}
		var row api.DatasetRow
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, fmt.Errorf("decode row %d: %w", n, err)
		}
		rows = append(rows, row)
		used += len(line) + 1
	}
	return rows, nil
}
