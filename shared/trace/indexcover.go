package trace

import (
	"context"
	"sync"

	"github.com/plumehq/plume/shared/listindex"
)

// Which lists the list index serves. The stream consumer indexes a project from its first
// change on, and marks the earliest created_at it has indexed (IndexedSince). A window that
// starts at or after the mark is wholly in the index; one that starts before it is too when the
// project stored nothing of the kind before the mark (a project created after the index was
// deployed: the consumer's first change is its first record). A project stored before the index
// existed, and every project of a table without a stream (plume-local's tests), keep the walk of
// the time index for such windows.

// indexCoverage remembers the projects and kinds whose records are all indexed: a record is
// never created in the past, so the answer stays true.
type indexCoverage struct{ whole sync.Map } // key: projectID + "/" + kind

// servedByIndex reports whether the list index holds every record of kind created in the
// window of c.
func (q *Queries) servedByIndex(ctx context.Context, projectID string, kind listindex.Kind, c Common) (bool, error) {
	if q.index == nil {
		return false, nil
	}
	from, _ := windowOf(c, q.now())
	if _, ok := q.covered.whole.Load(projectID + "/" + string(kind)); ok {
		return true, nil
	}
	since, ok, err := q.index.IndexedSince(ctx, projectID)
	if err != nil || !ok {
		return false, err
	}
	if !from.Before(since) {
		return true, nil
	}
	// Records before the mark: one walk of the time index up to it, stopped at the first.
	var before bool
	walk := map[listindex.Kind]string{listindex.Spans: IndexSpans, listindex.Traces: IndexTraces, listindex.Sessions: IndexSessions}[kind]
	err = q.r.WalkIndex(ctx, projectID, walk, TimeRange{To: since, MaxDays: retentionDaysMax}, func(ids []string) (bool, error) {
		before = len(ids) > 0
		return !before, nil
	})
	if err != nil {
		return false, err
	}
	if !before {
		q.covered.whole.Store(projectID+"/"+string(kind), true)
	}
	return !before, nil
}

// retentionDaysMax bounds the walk for records before the index's mark: as far back as a
// project may keep spans.
const retentionDaysMax = 3660
