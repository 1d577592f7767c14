package listindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
)

// A run is a sorted, immutable sequence of entries (key and count), stored as one object:
//
//	block* footer trailer
//
// A block holds about blockBytes of entries in key order, each key stored as the length of the
// prefix it shares with the key before it in the block, then the rest (keys of one dimension
// and value share most of their bytes): uvarint(shared) uvarint(len(rest)) rest
// varint(count). The footer lists the blocks (first and last key, offset, length, entries),
// so that a reader fetches only the blocks a range needs. The trailer is the footer's length
// and CRC-32 (IEEE) and the magic "PLX1", 12 bytes.
const (
	blockBytes   = 16 << 10
	trailerBytes = 12
	// tailBytes is what opening a run reads from its end: the footer, and the last blocks with
	// it (a small run is read whole, in one request). A ranged GET costs the same whatever its
	// length, and 128 KB more takes about a millisecond in a region: a day of a few hundred
	// records (about 70 KB of keys for 150 spans) is read in one request.
	tailBytes = 128 << 10
)

var runMagic = []byte("PLX1")

var errBadRun = errors.New("listindex: malformed run")

// blockInfo locates a block of a run.
type blockInfo struct {
	first, last []byte
	off, n      int64
	entries     int
}

// EncodeRun encodes entries as a run: sorted by key, the counts of equal keys added up and the
// keys whose total is zero left out.
func EncodeRun(entries []Entry) []byte { return encodeRun(entries, blockBytes) }

// encodeRun is EncodeRun with blocks of about size bytes.
func encodeRun(entries []Entry, size int) []byte {
	entries = normalize(entries)
	var out, block []byte
	var blocks []blockInfo
	var prev []byte
	var cur blockInfo
	flush := func() {
		if cur.entries == 0 {
			return
		}
		cur.off, cur.n = int64(len(out)), int64(len(block))
		out = append(out, block...)
		blocks = append(blocks, cur)
		block, prev, cur = block[:0], nil, blockInfo{}
	}
	for _, e := range entries {
		if len(block) >= size {
			flush()
		}
		shared := commonPrefix(prev, e.Key)
		block = binary.AppendUvarint(block, uint64(shared))
		block = binary.AppendUvarint(block, uint64(len(e.Key)-shared))
		block = append(block, e.Key[shared:]...)
		block = binary.AppendVarint(block, int64(e.Count))
		if cur.entries == 0 {
			cur.first = e.Key
		}
		cur.last, prev = e.Key, e.Key
		cur.entries++
	}
	flush()
	footerAt := len(out)
	out = binary.AppendUvarint(out, uint64(len(blocks)))
	for _, b := range blocks {
		out = appendBytes(out, b.first)
		out = appendBytes(out, b.last)
		out = binary.AppendUvarint(out, uint64(b.off))
		out = binary.AppendUvarint(out, uint64(b.n))
		out = binary.AppendUvarint(out, uint64(b.entries))
	}
	footer := out[footerAt:]
	out = binary.BigEndian.AppendUint32(out, uint32(len(footer)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(footer))
	return append(out, runMagic...)
}

// normalize sorts entries by key, adds up the counts of equal keys and drops zero totals.
func normalize(entries []Entry) []Entry {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b Entry) int { return bytes.Compare(a.Key, b.Key) })
	out := sorted[:0]
	for _, e := range sorted {
		if n := len(out); n > 0 && bytes.Equal(out[n-1].Key, e.Key) {
			out[n-1].Count += e.Count
			if out[n-1].Count == 0 {
				out = out[:n-1]
			}
			continue
		}
		if e.Count != 0 {
			out = append(out, e)
		}
	}
	return out
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func appendBytes(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}

// Source reads a stored run: n bytes at off.
type Source interface {
	ReadAt(ctx context.Context, off, n int64) ([]byte, error)
}

// Bytes is a run held in memory (an inline run), as a Source.
type Bytes []byte

// ReadAt implements Source.
func (b Bytes) ReadAt(_ context.Context, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, fmt.Errorf("listindex: read of %d bytes at %d past a run of %d", n, off, len(b))
	}
	return b[off : off+n], nil
}

// Run is an opened run: its block list, and the blocks read so far (a run is immutable, so
// what was read stays true).
type Run struct {
	src    Source
	size   int64
	blocks []blockInfo
	// tail holds the run's last bytes from tailAt, read when it was opened.
	tail   []byte
	tailAt int64
	read   map[int][]Entry
	// Reads counts the requests made to src.
	Reads int
}

// OpenRun opens the run of size bytes that src reads: one read of its end (more when its
// footer is larger).
func OpenRun(ctx context.Context, src Source, size int64) (*Run, error) {
	if size < trailerBytes {
		return nil, errBadRun
	}
	r := &Run{src: src, size: size, read: map[int][]Entry{}}
	n := min(size, tailBytes)
	tail, err := r.fetch(ctx, size-n, n)
	if err != nil {
		return nil, err
	}
	trailer := tail[len(tail)-trailerBytes:]
	if !bytes.Equal(trailer[8:], runMagic) {
		return nil, errBadRun
	}
	footerLen := int64(binary.BigEndian.Uint32(trailer))
	if footerLen+trailerBytes > size {
		return nil, errBadRun
	}
	if footerLen+trailerBytes > n { // a footer larger than the tail read
		n = footerLen + trailerBytes
		if tail, err = r.fetch(ctx, size-n, n); err != nil {
			return nil, err
		}
	}
	r.tail, r.tailAt = tail, size-n
	footer := tail[int64(len(tail))-trailerBytes-footerLen : int64(len(tail))-trailerBytes]
	if crc32.ChecksumIEEE(footer) != binary.BigEndian.Uint32(trailer[4:]) {
		return nil, errBadRun
	}
	if r.blocks, err = parseFooter(footer, size-footerLen-trailerBytes); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Run) fetch(ctx context.Context, off, n int64) ([]byte, error) {
	r.Reads++
	b, err := r.src.ReadAt(ctx, off, n)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != n {
		return nil, fmt.Errorf("listindex: read %d bytes of a run, want %d", len(b), n)
	}
	return b, nil
}

func parseFooter(b []byte, dataEnd int64) ([]blockInfo, error) {
	d := decoder{b: b}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(b)) {
		return nil, errBadRun
	}
	blocks := make([]blockInfo, 0, n)
	for range n {
		bi := blockInfo{first: d.bytes(), last: d.bytes(), off: int64(d.uvarint()), n: int64(d.uvarint()), entries: int(d.uvarint())}
		if d.err != nil || bi.off < 0 || bi.n < 0 || bi.off+bi.n > dataEnd {
			return nil, errBadRun
		}
		blocks = append(blocks, bi)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadRun
	}
	return blocks, nil
}

// Entries is the number of entries the run holds.
func (r *Run) Entries() int {
	n := 0
	for _, b := range r.blocks {
		n += b.entries
	}
	return n
}

// blocksOf reads blocks [i, j) in one request (unless the tail holds them) and decodes them.
func (r *Run) blocksOf(ctx context.Context, i, j int) error {
	for i < j && r.read[i] != nil {
		i++
	}
	for j > i && r.read[j-1] != nil {
		j--
	}
	if i >= j {
		return nil
	}
	off := r.blocks[i].off
	end := r.blocks[j-1].off + r.blocks[j-1].n
	var data []byte
	if off >= r.tailAt {
		data = r.tail[off-r.tailAt : end-r.tailAt]
	} else {
		var err error
		if data, err = r.fetch(ctx, off, end-off); err != nil {
			return err
		}
	}
	for k := i; k < j; k++ {
		b := r.blocks[k]
		entries, err := decodeBlock(data[b.off-off:b.off-off+b.n], b.entries)
		if err != nil {
			return err
		}
		r.read[k] = entries
	}
	return nil
}

func decodeBlock(b []byte, n int) ([]Entry, error) {
	d := decoder{b: b}
	out := make([]Entry, 0, n)
	var prev []byte
	for len(d.b) > 0 {
		shared := d.uvarint()
		rest := d.bytesOf(d.uvarint())
		count := d.varint()
		if d.err != nil || shared > uint64(len(prev)) {
			return nil, errBadRun
		}
		key := make([]byte, 0, int(shared)+len(rest))
		key = append(append(key, prev[:shared]...), rest...)
		out = append(out, Entry{Key: key, Count: int32(count)})
		prev = key
	}
	if d.err != nil || len(out) != n {
		return nil, errBadRun
	}
	return out, nil
}

// decoder reads varints and byte strings, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadRun
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errBadRun
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytesOf(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errBadRun
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) bytes() []byte { return d.bytesOf(d.uvarint()) }

// entries iterates the entries of a run within a key range, fetching blocks as it goes: one
// block at first, then twice as many at each read, so that a short page costs one request and a
// long walk few.
type entries struct {
	run     *Run
	r       KeyRange
	desc    bool
	blk     int  // the block being read; -1 or len(blocks) at the end
	pos     int  // the next entry of blk
	inBlock bool // pos is placed in blk
	ahead   int  // blocks to fetch at the next read
	started bool
	cur     Entry
	err     error
}

// Range iterates the run's entries in r (counts included), in key order or reversed.
func (r *Run) Range(rng KeyRange, desc bool) *entries {
	return &entries{run: r, r: rng, desc: desc, ahead: 1}
}

// start places the iterator on the first block of the range.
func (it *entries) start() {
	bs := it.run.blocks
	if it.desc {
		// The last block whose first key is below Hi.
		it.blk = len(bs) - 1
		if it.r.Hi != nil {
			it.blk = sort.Search(len(bs), func(i int) bool { return bytes.Compare(bs[i].first, it.r.Hi) >= 0 }) - 1
		}
		return
	}
	// The first block whose last key is at or after Lo.
	it.blk = sort.Search(len(bs), func(i int) bool { return bytes.Compare(bs[i].last, it.r.Lo) >= 0 })
}

func (it *entries) next(ctx context.Context) bool {
	if it.err != nil {
		return false
	}
	if !it.started {
		it.started = true
		it.start()
	}
	for it.blk >= 0 && it.blk < len(it.run.blocks) {
		block, err := it.block(ctx)
		if err != nil {
			it.err = err
			return false
		}
		if !it.inBlock { // entering the block: find the range's end in it
			it.inBlock = true
			if it.desc {
				it.pos = len(block) - 1
				if it.r.Hi != nil {
					it.pos = sort.Search(len(block), func(i int) bool { return bytes.Compare(block[i].Key, it.r.Hi) >= 0 }) - 1
				}
			} else {
				it.pos = sort.Search(len(block), func(i int) bool { return bytes.Compare(block[i].Key, it.r.Lo) >= 0 })
			}
		}
		if it.pos >= 0 && it.pos < len(block) {
			e := block[it.pos]
			if it.desc && bytes.Compare(e.Key, it.r.Lo) < 0 || !it.desc && it.r.Hi != nil && bytes.Compare(e.Key, it.r.Hi) >= 0 {
				it.blk = -1 // past the range
				return false
			}
			it.cur = e
			if it.desc {
				it.pos--
			} else {
				it.pos++
			}
			return true
		}
		if it.desc {
			it.blk--
		} else {
			it.blk++
		}
		it.inBlock = false
	}
	return false
}

// block is the current block's entries, reading it (and the next ones, it.ahead in all) if
// needed.
func (it *entries) block(ctx context.Context) ([]Entry, error) {
	if b := it.run.read[it.blk]; b != nil {
		return b, nil
	}
	i, j := it.blk, it.blk+it.ahead
	if it.desc {
		i, j = it.blk-it.ahead+1, it.blk+1
	}
	i, j = max(i, 0), min(j, len(it.run.blocks))
	if err := it.run.blocksOf(ctx, i, j); err != nil {
		return nil, err
	}
	it.ahead = min(it.ahead*2, 64)
	return it.run.read[it.blk], nil
}
