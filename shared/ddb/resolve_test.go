package ddb

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Writes and spans are numbered in these tests: wid(3) is write W3, sid(2) span 2.

func wid(n int) string { return fmt.Sprintf("00000000-0000-7000-8000-%012d", n) }
func sid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// numOf is the number of a write or span id.
func numOf(t testing.TB, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id[len(id)-12:])
	require.NoError(t, err, id)
	return n
}

func idBytes(id string) []byte {
	u := uuid.MustParse(id)
	return u[:]
}

// fresh is the change of a span its write creates (its put requires that the span not exist).
func fresh(span int) entryAttr { return entryAttr{Span: idBytes(sid(span)), New: true} }

// over is the change of a span whose summary the write prev stored (its put requires that the
// summary still record prev).
func over(span, prev int) entryAttr {
	return entryAttr{Span: idBytes(sid(span)), Prev: idBytes(wid(prev))}
}

// overLegacy is the change of a span whose summary recorded no write id (its put is conditioned
// on the summary's update time, which resolve cannot see).
func overLegacy(span int) entryAttr { return entryAttr{Span: idBytes(sid(span))} }

func counts(e entryAttr, errors int, cost float64, slug string) entryAttr {
	e.Errors, e.Cost, e.Slug = errors, cost, slug
	return e
}

// item is write w's pending item with the given span changes.
func item(w int, changes ...entryAttr) pendingItem {
	p := newPending("T#trace", time.UnixMicro(int64(w)), wid(w))
	p.Entries = changes
	return p
}

// own sets what an item adds besides its span changes.
func own(p pendingItem, spans, errors int, cost float64) pendingItem {
	p.Spans, p.Errors, p.Cost = spans, errors, cost
	return p
}

func withRoot(p pendingItem, span int) pendingItem {
	p.Root = &rootAttr{SpanID: sid(span), Name: "root"}
	return p
}

// outcome is what resolve decided for one returned item.
type outcome struct {
	write       int
	void        bool
	spans       int
	errors      int
	cost        float64
	members     []int
	completions []string // "slug span"
	shrink      bool
	root        int // the root's span, 0 for none
}

func outcomes(t *testing.T, items []pendingItem) []outcome {
	t.Helper()
	var out []outcome
	for _, p := range items {
		o := outcome{write: numOf(t, p.id()), void: p.void, spans: p.Spans, errors: p.Errors, cost: p.Cost, shrink: p.Shrink}
		for _, m := range p.Members {
			o.members = append(o.members, numOf(t, idOf(m)))
		}
		for _, c := range p.Completions {
			o.completions = append(o.completions, fmt.Sprintf("%s %d", c.Slug, numOf(t, idOf(c.Span))))
		}
		if p.Root != nil {
			o.root = numOf(t, p.Root.SpanID)
		}
		out = append(out, o)
	}
	return out
}

// undecided is p without the fields resolve decides.
func undecided(p pendingItem) pendingItem {
	p.Spans, p.Errors, p.Cost, p.Members, p.Completions, p.Shrink, p.Root = 0, 0, 0, nil, nil, false, nil
	return p
}

// TestResolve: each rule of resolve's doc comment, with the exact items it returns.
func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		pend    []pendingItem
		writes  map[int]int // span -> the write its summary records (0: a summary without write id)
		stored  [][2]int    // {write, span}: puts their own writer saw succeed
		settled []int       // writes whose request no longer puts summaries
		want    []outcome
	}{
		{
			name:   "a new span its own writer saw stored counts",
			pend:   []pendingItem{item(1, fresh(1))},
			stored: [][2]int{{1, 1}},
			want:   []outcome{{write: 1, spans: 1, members: []int{1}}},
		},
		{
			name:   "changes count when the summary names their write",
			pend:   []pendingItem{item(1, fresh(1), over(2, 9))},
			writes: map[int]int{1: 1, 2: 1},
			want:   []outcome{{write: 1, spans: 1, members: []int{1}}},
		},
		{
			name: "chain W1 <- W2, the summary names W2: both count, though W1's own put could no longer land",
			pend: []pendingItem{
				item(1, counts(fresh(1), 1, 0.5, "")),
				item(2, counts(over(1, 1), -1, 0.25, "")),
			},
			writes: map[int]int{1: 2},
			want: []outcome{
				{write: 1, spans: 1, errors: 1, cost: 0.5, members: []int{1}},
				{write: 2, errors: -1, cost: 0.25},
			},
		},
		{
			name:   "chain W1 <- W2 <- W3, the summary names W3: all three count",
			pend:   []pendingItem{item(1, fresh(1)), item(2, over(1, 1)), item(3, over(1, 2))},
			writes: map[int]int{1: 3},
			want:   []outcome{{write: 1, spans: 1, members: []int{1}}, {write: 2}, {write: 3}},
		},
		{
			name:   "a chain starts at a stored change too",
			pend:   []pendingItem{item(1, fresh(1)), item(2, over(1, 1))},
			stored: [][2]int{{2, 1}},
			want:   []outcome{{write: 1, spans: 1, members: []int{1}}, {write: 2}},
		},
		{
			name:   "the summary names W1: W1 counts, W2's put may still land so W2 waits",
			pend:   []pendingItem{item(1, fresh(1)), item(2, over(1, 1))},
			writes: map[int]int{1: 1},
			want:   []outcome{{write: 1, spans: 1, members: []int{1}}},
		},
		{
			name:    "the summary names W1 and W2 is settled: W2's change is dropped",
			pend:    []pendingItem{item(1, fresh(1)), item(2, over(1, 1))},
			writes:  map[int]int{1: 1},
			settled: []int{2},
			want:    []outcome{{write: 1, spans: 1, members: []int{1}}, {write: 2, void: true}},
		},
		{
			name:   "a new span now stored by another write is dead: dropped though not settled",
			pend:   []pendingItem{item(1, fresh(1))},
			writes: map[int]int{1: 9},
			want:   []outcome{{write: 1, void: true}},
		},
		{
			name:   "a new span whose summary records no write id is dead",
			pend:   []pendingItem{item(1, fresh(1))},
			writes: map[int]int{1: 0},
			want:   []outcome{{write: 1, void: true}},
		},
		{
			name:   "a change whose Prev names a replaced write is dead: dropped though not settled",
			pend:   []pendingItem{item(2, over(1, 1))},
			writes: map[int]int{1: 9},
			want:   []outcome{{write: 2, void: true}},
		},
		{
			name:   "a change conditioned on the update time is never dead: it waits",
			pend:   []pendingItem{item(1, overLegacy(1))},
			writes: map[int]int{1: 9},
		},
		{
			name:    "a change conditioned on the update time is dropped once settled",
			pend:    []pendingItem{item(1, overLegacy(1))},
			writes:  map[int]int{1: 9},
			settled: []int{1},
			want:    []outcome{{write: 1, void: true}},
		},
		{
			name: "an undecided change of an unsettled write waits, with its item's counted changes",
			pend: []pendingItem{item(1, fresh(1), fresh(2))},
			// span 1 has no summary yet: W1's put may still land
			writes: map[int]int{2: 1},
		},
		{
			name:    "an undecided change of a settled write is dropped",
			pend:    []pendingItem{item(1, fresh(1), fresh(2))},
			writes:  map[int]int{2: 1},
			settled: []int{1},
			want:    []outcome{{write: 1, spans: 1, members: []int{2}, shrink: true}},
		},
		{
			name: "an item whose counted change replaced a waiting item's change waits too",
			pend: []pendingItem{
				item(1, fresh(1), fresh(2)), // span 2 undecided
				item(2, over(1, 1)),
				item(3, fresh(3)),
			},
			writes: map[int]int{1: 2, 3: 3},
			want:   []outcome{{write: 3, spans: 1, members: []int{3}}},
		},
		{
			name: "waiting spreads across several items, in any order",
			pend: []pendingItem{
				item(3, over(3, 2)),
				item(2, over(1, 1), fresh(3)),
				item(1, fresh(1), fresh(2)), // span 2 undecided
				item(4, over(4, 9)),         // replaced a write that is not pending
			},
			writes: map[int]int{1: 2, 3: 3, 4: 4},
			want:   []outcome{{write: 4}},
		},
		{
			name: "a void item is returned with its keys only",
			pend: []pendingItem{func() pendingItem {
				p := withRoot(own(item(1, fresh(1), fresh(2)), 2, 1, 0.5), 1)
				p.Session, p.Tags, p.Start, p.End = "s", map[string]string{"k": "v"}, new(int64(5)), new(int64(6))
				p.Explicit, p.Batch, p.Shrink = &explicitAttr{Name: "x"}, "b", true
				return p
			}()},
			writes: map[int]int{1: 9, 2: 9},
			want:   []outcome{{write: 1, void: true}},
		},
		{
			name:    "a partial drop sets Shrink and drops the root with its change",
			pend:    []pendingItem{withRoot(item(1, fresh(1), fresh(2)), 1)},
			writes:  map[int]int{2: 1},
			settled: []int{1},
			want:    []outcome{{write: 1, spans: 1, members: []int{2}, shrink: true}},
		},
		{
			name:    "a partial drop keeps the root when its change counted",
			pend:    []pendingItem{withRoot(item(1, fresh(1), fresh(2)), 2)},
			writes:  map[int]int{2: 1},
			settled: []int{1},
			want:    []outcome{{write: 1, spans: 1, members: []int{2}, shrink: true, root: 2}},
		},
		{
			name:   "nothing dropped: no Shrink, the root kept",
			pend:   []pendingItem{withRoot(item(1, fresh(1), fresh(2)), 1)},
			writes: map[int]int{1: 1, 2: 1},
			want:   []outcome{{write: 1, spans: 2, members: []int{1, 2}, root: 1}},
		},
		{
			name: "members list new spans, completions changes with a slug, counts add to the item's own",
			pend: []pendingItem{own(item(1,
				counts(fresh(1), 1, 0.5, "greet"),
				counts(over(2, 9), -1, 0.25, "ask"),
				fresh(3),
			), 1, 1, 0.25)},
			writes: map[int]int{1: 1, 2: 1, 3: 1},
			want: []outcome{{write: 1, spans: 3, errors: 1, cost: 1, members: []int{1, 3},
				completions: []string{"greet 1", "ask 2"}}},
		},
		{
			name: "dropped changes add nothing",
			pend: []pendingItem{own(item(1,
				counts(fresh(1), 1, 0.5, "greet"),
				counts(fresh(2), 1, 0.25, "ask"),
			), 1, 1, 0.25)},
			writes: map[int]int{1: 1, 2: 9},
			want: []outcome{{write: 1, spans: 2, errors: 2, cost: 0.75, members: []int{1},
				completions: []string{"greet 1"}, shrink: true}},
		},
		{
			name: "an item without span changes is applied as it is",
			pend: []pendingItem{own(item(1), 0, 1, 0.5)},
			want: []outcome{{write: 1, errors: 1, cost: 0.5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writes := map[string]string{}
			for span, w := range tt.writes {
				writes[sid(span)] = ""
				if w != 0 {
					writes[sid(span)] = wid(w)
				}
			}
			stored := map[change]bool{}
			for _, c := range tt.stored {
				stored[change{wid(c[0]), sid(c[1])}] = true
			}
			settled := func(p pendingItem) bool { return slices.Contains(tt.settled, numOf(t, p.id())) }

			got := resolve(tt.pend, writes, stored, settled)
			assert.Equal(t, tt.want, outcomes(t, got))
			in := map[string]pendingItem{}
			for _, p := range tt.pend {
				in[p.id()] = p
			}
			for _, p := range got {
				if p.void {
					assert.Equal(t, pendingItem{PK: in[p.id()].PK, SK: in[p.id()].SK, At: in[p.id()].At, void: true}, p)
				} else {
					assert.Equal(t, undecided(in[p.id()]), undecided(p), "fields resolve does not decide")
				}
			}
		})
	}
}

// TestResolveProperties checks resolve on random small pending sets (seeded, so the same every
// run) against its rules stated another way: each returned once, in pend's order; the changes
// counted are exactly those the summaries' chains reach (computed here as a fixed point);
// nothing returned is undecided or depends on a waiting item; nothing left out could have been
// returned; the same input gives the same output.
func TestResolveProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 1000 {
		pend, writes, stored, settledSet := randomPending(rng)
		settled := func(p pendingItem) bool { return settledSet[p.id()] }
		got := resolve(pend, writes, stored, settled)
		again := resolve(pend, writes, stored, settled)
		if !assert.Equal(t, got, again, "round %d: not deterministic", round) {
			return
		}

		// The oracle: counted changes as a fixed point of "the summary or the writer says it
		// landed, or a counted change replaced it".
		has := map[change]entryAttr{}
		for _, p := range pend {
			for _, e := range p.Entries {
				has[change{p.id(), idOf(e.Span)}] = e
			}
		}
		isPending := func(c change) bool { _, ok := has[c]; return ok }
		counted := map[change]bool{}
		for c := range has {
			counted[c] = stored[c] || writes[c.span] == c.write
		}
		for grew := true; grew; {
			grew = false
			for c, e := range has {
				if prev := (change{idOf(e.Prev), c.span}); counted[c] && len(e.Prev) > 0 && isPending(prev) && !counted[prev] {
					counted[prev], grew = true, true
				}
			}
		}
		dropped := func(p pendingItem, e entryAttr) bool {
			w, ok := writes[idOf(e.Span)]
			return !counted[change{p.id(), idOf(e.Span)}] && (settled(p) || (ok && (e.New || (len(e.Prev) > 0 && w != idOf(e.Prev)))))
		}
		decided := func(p pendingItem) bool {
			for _, e := range p.Entries {
				if !counted[change{p.id(), idOf(e.Span)}] && !dropped(p, e) {
					return false
				}
			}
			return true
		}

		returned := map[string]bool{}
		last := -1
		for _, p := range got {
			require.False(t, returned[p.id()], "round %d: %s returned twice", round, p.id())
			returned[p.id()] = true
			i := slices.IndexFunc(pend, func(q pendingItem) bool { return q.id() == p.id() })
			require.Greater(t, i, last, "round %d: %s not in pend's order", round, p.id())
			last = i
			in := pend[i]
			require.True(t, decided(in), "round %d: %s returned undecided", round, p.id())

			var want []string
			for _, e := range in.Entries {
				if counted[change{in.id(), idOf(e.Span)}] {
					want = append(want, idOf(e.Span))
				}
			}
			var listed []string
			for _, c := range p.Completions { // every change of these items names a prompt
				listed = append(listed, idOf(c.Span))
			}
			assert.Equal(t, want, listed, "round %d: %s counted changes", round, p.id())
		}
		// Every item returned whose counted change replaced a counted change of another pending
		// item came with it; every decided item that is left out replaced one left out.
		for _, p := range pend {
			for _, e := range p.Entries {
				prev := change{idOf(e.Prev), idOf(e.Span)}
				if returned[p.id()] && counted[change{p.id(), idOf(e.Span)}] && counted[prev] && isPending(prev) {
					assert.True(t, returned[prev.write], "round %d: %s returned without %s", round, p.id(), prev.write)
				}
			}
			if !returned[p.id()] && decided(p) {
				assert.True(t, slices.ContainsFunc(p.Entries, func(e entryAttr) bool {
					prev := change{idOf(e.Prev), idOf(e.Span)}
					return counted[change{p.id(), idOf(e.Span)}] && counted[prev] && isPending(prev) && !returned[prev.write]
				}), "round %d: decided %s left out", round, p.id())
			}
		}
		if t.Failed() {
			return
		}
	}
}

// randomPending is a small random heal's input: up to 5 writes (W1..W5 in time order, some
// already applied) changing up to 4 spans, each change replacing the span's previous writer (or
// an applied write, W9, or a summary without write id), summaries recording any write or none.
func randomPending(rng *rand.Rand) ([]pendingItem, map[string]string, map[change]bool, map[string]bool) {
	nw, ns := 1+rng.IntN(5), 1+rng.IntN(4)
	entries := make([][]entryAttr, nw+1)
	writes := map[string]string{}
	for s := 1; s <= ns; s++ {
		prev := 0 // the span's last writer; 0: none yet
		if rng.IntN(4) == 0 {
			prev = 9
		}
		for w := 1; w <= nw; w++ {
			if rng.IntN(2) == 0 {
				continue
			}
			e := fresh(s)
			switch {
			case prev != 0:
				e = over(s, prev)
			case rng.IntN(4) == 0:
				e = overLegacy(s)
			}
			e.Slug = "p"
			entries[w] = append(entries[w], e)
			prev = w
		}
		switch rng.IntN(4) {
		case 0: // no summary
		case 1:
			writes[sid(s)] = ""
		case 2:
			writes[sid(s)] = wid(9)
		default:
			writes[sid(s)] = wid(1 + rng.IntN(nw))
		}
	}
	var pend []pendingItem
	stored := map[change]bool{}
	settled := map[string]bool{}
	for w := 1; w <= nw; w++ {
		if rng.IntN(5) == 0 {
			continue // applied already
		}
		p := item(w, entries[w]...)
		if len(p.Entries) > 0 && rng.IntN(2) == 0 {
			p.Root = &rootAttr{SpanID: idOf(p.Entries[rng.IntN(len(p.Entries))].Span)}
		}
		for _, e := range p.Entries {
			if rng.IntN(6) == 0 {
				stored[change{wid(w), idOf(e.Span)}] = true
			}
		}
		settled[wid(w)] = rng.IntN(3) == 0
		pend = append(pend, p)
	}
	return pend, writes, stored, settled
}
