package ddb

// The decision of a trace's heal (the protocol is described at the top of pending.go): which
// span changes of the pending items count, which wait and which drop. It is a pure function of
// what the heal read, so its rules are tested case by case (resolve_test.go) as well as against
// real failures (shared/trace's TestIngestCrashAtEveryStep).

// change is one span's change by one write.
type change struct{ write, span string }

// resolve decides which pending items a heal applies, and what each adds.
//
// Its inputs are what the heal read: pend, the pending items in the order they are applied;
// writes, for each span of their changes that has a summary, the write id the summary now
// records ("" for one stored before summaries recorded their write; a span without summary is
// absent); stored, the changes whose summary put their own writer saw succeed; and settled,
// whether an item's request no longer puts summaries (the caller's own writes, or writes older
// than trace.PendingGrace).
//
// The rules, for the change of span s by write W (an entry of W's pending item):
//
//   - Counted: W's summary put took effect. The change is in stored, or writes[s] is W, or
//     writes[s] is a later write whose chain of Prev links through the pending changes of s
//     leads back to W (writes[s] = W3, W3's change of s replaced W2's, W2's replaced W's: all
//     three count). The chain ends at a write without a pending change of s.
//   - Dead: the change is not counted and its put can never take effect, because its
//     condition names a version that is gone: it is New and s now has a summary, or its Prev
//     names a write id and the summary of s now records another one. Nothing deletes summaries
//     and write ids are unique, so a dead change stays dead: a re-send that stored the span
//     decides the failed write at once.
//   - Dropped: a change that is not counted and is dead, or whose item is settled. A change
//     neither counted nor dropped is undecided.
//   - Waiting: an item with an undecided change waits, and so does an item with a counted
//     change that replaced a counted change of a waiting item (its difference is relative to
//     the waiting one's version), and so on along such links. A waiting item is not returned.
//
// Every other item is returned, in pend's order, with its own Spans, Errors and Cost plus those
// of its counted changes (one span per New change), Members listing the spans of its counted
// New changes and Completions its counted changes that name a prompt (Slug). Then:
//
//   - Void: if it has changes and all were dropped, it adds nothing: it is returned as its PK,
//     SK and At with void set, to be deleted only.
//   - Shrink: if some but not all were dropped, it gets Shrink (its start and end may come from
//     spans that were not stored) and keeps its Root only if the root span's change counted.
//
// An item without changes (a POST /traces write) is returned as it is.
func resolve(pend []pendingItem, writes map[string]string, stored map[change]bool, settled func(pendingItem) bool) []pendingItem {
	byChange := map[change]entryAttr{}
	pendingWrite := map[string]bool{}
	for _, p := range pend {
		pendingWrite[p.id()] = true
		for _, e := range p.Entries {
			byChange[change{p.id(), idOf(e.Span)}] = e
		}
	}
	counted := map[change]bool{}
	walk := func(w, span string) {
		for range len(pend) { // a chain has at most one change per item
			e, ok := byChange[change{w, span}]
			if !ok || counted[change{w, span}] {
				return
			}
			counted[change{w, span}] = true
			w = idOf(e.Prev)
		}
	}
	for span, w := range writes {
		walk(w, span)
	}
	for c := range stored {
		walk(c.write, c.span)
	}
	// dead reports whether a change's summary put can never take effect: its condition names
	// a version that is gone (a new span that now exists, or a replaced write id; nothing
	// deletes summaries and write ids are unique).
	dead := func(e entryAttr) bool {
		w, exists := writes[idOf(e.Span)]
		return exists && (e.New || (len(e.Prev) > 0 && w != idOf(e.Prev)))
	}
	ready := map[string]bool{}
	for _, p := range pend {
		decided := true
		for _, e := range p.Entries {
			if !counted[change{p.id(), idOf(e.Span)}] && !dead(e) && !settled(p) {
				decided = false
			}
		}
		ready[p.id()] = decided
	}
	for changed := true; changed; {
		changed = false
		for _, p := range pend {
			if !ready[p.id()] {
				continue
			}
			for _, e := range p.Entries {
				span, prev := idOf(e.Span), idOf(e.Prev)
				if counted[change{p.id(), span}] && pendingWrite[prev] && counted[change{prev, span}] && !ready[prev] {
					ready[p.id()], changed = false, true
					break
				}
			}
		}
	}
	var out []pendingItem
	for _, p := range pend {
		if !ready[p.id()] {
			continue
		}
		in, dropped := 0, 0
		for _, e := range p.Entries {
			if !counted[change{p.id(), idOf(e.Span)}] {
				dropped++
				continue
			}
			in++
			p.Spans += btoi(e.New)
			p.Errors += e.Errors
			p.Cost += e.Cost
			if e.New {
				p.Members = append(p.Members, e.Span)
			}
			if e.Slug != "" {
				p.Completions = append(p.Completions, completionAttr{Slug: e.Slug, Span: e.Span})
			}
		}
		if dropped > 0 && in == 0 {
			// None of its spans was stored: it adds nothing, and is only deleted.
			p = pendingItem{PK: p.PK, SK: p.SK, At: p.At, void: true}
		} else if dropped > 0 {
			p.Shrink = true // its start and end may come from spans that were not stored
			if p.Root != nil && !counted[change{p.id(), p.Root.SpanID}] {
				p.Root = nil
			}
		}
		out = append(out, p)
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
