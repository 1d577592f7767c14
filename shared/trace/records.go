package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/errs"
)

// rangeGap is how many unwanted bytes a read may span to join two wanted ranges of one object
// into one GET: a request costs more than reading a few more kilobytes.
const rangeGap = 64 << 10

// readConcurrency bounds the parallel ranged GETs of one read.
const readConcurrency = 16

// LoadRecords reads full span records from their batch objects: the wanted byte ranges of each
// object are joined where they are close and fetched with one ranged GET per run, in parallel.
// The result maps each id of locs to its span, except the ids whose batch object is gone: with
// span retention (PLUME_SPAN_RETENTION_DAYS) the bucket deletes batch objects at the end of
// the retention, and DynamoDB deletes their summaries by TTL only some time after (hours to a
// couple of days), so a summary may briefly outlive its record. Callers treat a missing record
// as an expired span.
func LoadRecords(ctx context.Context, blobs RangeReader, locs map[string]Location) (map[string]Span, error) {
	type want struct {
		id  string
		loc Location
	}
	byKey := map[string][]want{}
	for id, loc := range locs {
		byKey[loc.Key] = append(byKey[loc.Key], want{id, loc})
	}
	type run struct {
		key        string
		start, end int64
		wants      []want
	}
	var runs []run
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		ws := byKey[key]
		slices.SortFunc(ws, func(a, b want) int { return int(a.loc.Offset - b.loc.Offset) })
		cur := run{key: key, start: ws[0].loc.Offset, end: ws[0].loc.Offset + ws[0].loc.Length}
		for _, w := range ws {
			if w.loc.Offset > cur.end+rangeGap {
				runs = append(runs, cur)
				cur = run{key: key, start: w.loc.Offset, end: w.loc.Offset}
			}
			cur.end = max(cur.end, w.loc.Offset+w.loc.Length)
			cur.wants = append(cur.wants, w)
		}
		runs = append(runs, cur)
	}

	out := make(map[string]Span, len(locs))
	results := make([][]Span, len(runs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readConcurrency)
	for i, r := range runs {
		g.Go(func() error {
			data, err := blobs.GetRange(gctx, r.key, r.start, r.end-r.start)
			if errs.CodeOf(err) == errs.CodeNotFound {
				return nil // expired: results[i] stays nil
			}
			if err != nil {
				return fmt.Errorf("read spans from %s: %w", r.key, err)
			}
			spans := make([]Span, len(r.wants))
			for j, w := range r.wants {
				from := w.loc.Offset - r.start
				if err := json.Unmarshal(data[from:from+w.loc.Length], &spans[j]); err != nil {
					return fmt.Errorf("decode span %s at %s+%d: %w", w.id, r.key, w.loc.Offset, err)
				}
			}
			results[i] = spans
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, r := range runs {
		if results[i] == nil {
			continue
		}
		for j, w := range r.wants {
			out[w.id] = results[i][j]
		}
	}
	return out, nil
}
