package ddb

import (
	"context"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/trace"
)

// Which projects still have GSI2 time indexes of spans, traces and sessions (keys.go). The
// lists walked them before the list index existed (listindex.go); they walk them now only for
// a project with records from before it, in a window that starts before the index's first
// record (trace.Queries' coverage). Records of such a project still get their entries, so that
// the walk finds them as well; a project whose time index of a kind holds nothing created
// before IndexedSince (every project created since the list index) is served by the index
// alone, and its records of that kind get no entry: no GSI2 attributes on member items, traces
// and sessions, and no days (dayRegistry): 0.31 write units per span less at "sdk, 20"
// (TestIngestCostPerMillionSpans).
//
// A project does not move the other way: its time index gets no entry before IndexedSince
// once it has none, as IndexedSince only moves back to records the list index holds.

// timeIndexRecheck is how long a project's need of its time index is believed before it is
// looked up again (a project that needs it stops needing it only when its older records are
// indexed).
const timeIndexRecheck = time.Hour

// timeIndexUse remembers, per project and kind, whether its records get time-index entries.
// The writers that ask at once (a stream batch's traces) wait for the first one's look-up.
type timeIndexUse struct{ m sync.Map } // projectID|kind -> *timeIndexCheck

// timeIndexCheck is a look-up: done closes when it ends; needed, err and checked say how.
type timeIndexCheck struct {
	done    chan struct{}
	needed  bool
	err     error
	checked time.Time
}

// timeIndexed reports whether the project's records of kind (trace.IndexSpans, IndexTraces,
// IndexSessions) get entries in the time index: whether it has entries created before the
// list index's IndexedSince (any entry, when nothing of the project is indexed yet). A
// project that needs none is remembered for the store's life; one that does for
// timeIndexRecheck; a failed look-up is done again by the next writer. Two reads and, when the
// project has days before the mark, the first page of their walk.
func (s *TraceStore) timeIndexed(ctx context.Context, projectID, kind string) (bool, error) {
	k := projectID + "|" + kind
	c := &timeIndexCheck{done: make(chan struct{})}
	for {
		prev, loaded := s.timeIndex.m.LoadOrStore(k, c)
		if !loaded {
			break
		}
		p := prev.(*timeIndexCheck)
		select {
		case <-p.done:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		if p.err == nil && (!p.needed || time.Since(p.checked) < timeIndexRecheck) {
			return p.needed, nil
		}
		s.timeIndex.m.CompareAndDelete(k, p) // failed or stale: looked up again
	}
	c.needed, c.err = s.lookUpTimeIndex(ctx, projectID, kind)
	c.checked = time.Now()
	close(c.done)
	return c.needed, c.err
}

// lookUpTimeIndex reads whether the project's time index of kind has entries before its
// IndexedSince (timeIndexed).
func (s *TraceStore) lookUpTimeIndex(ctx context.Context, projectID, kind string) (bool, error) {
	since, ok, err := indexedSince(ctx, s.t, projectID)
	if err != nil {
		return false, err
	}
	r := trace.TimeRange{MaxDays: retentionDaysMax}
	if ok {
		r.To = since.Add(-time.Microsecond)
	}
	var needed bool
	err = s.WalkIndex(ctx, projectID, kind, r, func(ids []string) (bool, error) {
		needed = len(ids) > 0
		return !needed, nil
	})
	return needed, err
}

// retentionDaysMax bounds the walk for entries before the index's mark: as far back as a
// project may keep spans (as trace.Queries' coverage).
const retentionDaysMax = 3660
