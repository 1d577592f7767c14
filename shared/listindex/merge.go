package listindex

import (
	"bytes"
	"container/heap"
	"context"
)

// Scan is the live keys of rng in runs: their entries merged in key order (or reversed), the
// counts of a key added up over the runs, and the keys whose total is above zero yielded.
// Blocks are read as the scan reaches them.
func Scan(runs []*Run, rng KeyRange, desc bool) Iter {
	m := &merge{desc: desc}
	for _, r := range runs {
		m.pending = append(m.pending, r.Range(rng, desc))
	}
	return m
}

// Compact is the entries of runs merged into one sorted list, each key with its total count,
// the keys whose total is zero left out: what a new run replacing them holds (EncodeRun).
func Compact(ctx context.Context, runs []*Run) ([]Entry, error) {
	m := &merge{all: true}
	for _, r := range runs {
		m.pending = append(m.pending, r.Range(KeyRange{Lo: nil}, false))
	}
	var out []Entry
	for m.Next(ctx) {
		out = append(out, Entry{Key: m.key, Count: m.count})
	}
	return out, m.err
}

// merge is a k-way merge of entry iterators.
type merge struct {
	desc bool
	all  bool // yield every key with a non-zero total (compaction), not only live ones
	// pending iterators are started at the first Next.
	pending []*entries
	h       entryHeap
	key     []byte
	count   int32
	err     error
}

func (m *merge) Next(ctx context.Context) bool {
	if m.err != nil {
		return false
	}
	if m.pending != nil {
		m.h = entryHeap{desc: m.desc}
		for _, it := range m.pending {
			if it.next(ctx) {
				m.h.its = append(m.h.its, it)
			} else if it.err != nil {
				m.err = it.err
				return false
			}
		}
		m.pending = nil
		heap.Init(&m.h)
	}
	for len(m.h.its) > 0 {
		top := m.h.its[0]
		key := top.cur.Key
		var total int32
		// Add up the counts of key in every run, advancing each past it.
		for len(m.h.its) > 0 && bytes.Equal(m.h.its[0].cur.Key, key) {
			it := m.h.its[0]
			total += it.cur.Count
			if it.next(ctx) {
				heap.Fix(&m.h, 0)
			} else {
				if it.err != nil {
					m.err = it.err
					return false
				}
				heap.Pop(&m.h)
			}
		}
		if total > 0 || m.all && total != 0 {
			m.key, m.count = key, total
			return true
		}
	}
	return false
}

func (m *merge) Key() []byte { return m.key }
func (m *merge) Err() error  { return m.err }

// entryHeap orders iterators by their current key, least first (greatest when desc).
type entryHeap struct {
	its  []*entries
	desc bool
}

func (h entryHeap) Len() int { return len(h.its) }
func (h entryHeap) Less(i, j int) bool {
	c := bytes.Compare(h.its[i].cur.Key, h.its[j].cur.Key)
	if h.desc {
		return c > 0
	}
	return c < 0
}
func (h entryHeap) Swap(i, j int) { h.its[i], h.its[j] = h.its[j], h.its[i] }
func (h *entryHeap) Push(x any)   { h.its = append(h.its, x.(*entries)) }
func (h *entryHeap) Pop() any {
	old := h.its
	it := old[len(old)-1]
	h.its = old[:len(old)-1]
	return it
}

// Concat is the iterators that opens returns, one after the other, each opened when the one
// before it ends: for ranges that follow each other in the scan's order (the days of a window
// in a dimension where created_at follows one value), so that a page from the newest day never
// opens the older ones.
func Concat(opens ...func(context.Context) (Iter, error)) Iter {
	return &concat{opens: opens}
}

type concat struct {
	opens []func(context.Context) (Iter, error)
	cur   Iter
	err   error
}

func (c *concat) Next(ctx context.Context) bool {
	for c.err == nil {
		if c.cur != nil {
			if c.cur.Next(ctx) {
				return true
			}
			if c.err = c.cur.Err(); c.err != nil {
				return false
			}
		}
		if len(c.opens) == 0 {
			return false
		}
		c.cur, c.err = c.opens[0](ctx)
		c.opens = c.opens[1:]
	}
	return false
}

func (c *concat) Key() []byte { return c.cur.Key() }
func (c *concat) Err() error  { return c.err }
