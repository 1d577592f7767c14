package ddb

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
)

// Scan implements trace.IndexScanner: the live keys of r in the partitions of kind of the days
// of [from, to), in key order or reversed. One Query lists the partitions. A range of one value
// (listindex.SingleValue: the default order, an equality filter) reads its days one after the
// other, newest first when desc, opening a day's runs only when the days before it are spent;
// any other range (a sort key) merges the runs of every day, each opened (one read of its end)
// before the first key.
func (s *ListIndexStore) Scan(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time, r listindex.KeyRange, desc bool) (listindex.Iter, error) {
	for attempt := 0; ; attempt++ {
		it, err := s.scan(ctx, projectID, kind, from, to, r, desc)
		// A run replaced by a compaction after the partitions were listed: list them again.
		if errs.CodeOf(err) == errs.CodeNotFound && attempt < 2 {
			continue
		}
		return it, err
	}
}

func (s *ListIndexStore) scan(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time, r listindex.KeyRange, desc bool) (listindex.Iter, error) {
	parts, err := s.Partitions(ctx, projectID, kind, from.Truncate(24*time.Hour), to.Add(24*time.Hour).Truncate(24*time.Hour))
	if err != nil {
		return nil, err
	}
	if desc {
		slices.Reverse(parts)
	}
	if listindex.SingleValue(r) {
		opens := make([]func(context.Context) (listindex.Iter, error), len(parts))
		for i, p := range parts {
			opens[i] = func(ctx context.Context) (listindex.Iter, error) {
				runs, err := s.OpenRuns(ctx, p)
				if err != nil {
					return nil, err
				}
				return listindex.Scan(runs, r, desc), nil
			}
		}
		return listindex.Concat(opens...), nil
	}
	runs := make([][]*listindex.Run, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(lxConcurrency)
	for i, p := range parts {
		g.Go(func() error {
			var err error
			runs[i], err = s.OpenRuns(gctx, p)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return listindex.Scan(slices.Concat(runs...), r, desc), nil
}

// ScanRanges implements trace.IndexScanner: Scan of each of ranges, ranges of one value
// (listindex.SingleValue) each, over the partitions listed once (one Query), each day's runs
// opened once, when the first range reaches it, and read by every range (a merge of an
// equality filter's values, or of a range's bands).
func (s *ListIndexStore) ScanRanges(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time, ranges []listindex.KeyRange, desc bool) ([]listindex.Iter, error) {
	parts, err := s.Partitions(ctx, projectID, kind, from.Truncate(24*time.Hour), to.Add(24*time.Hour).Truncate(24*time.Hour))
	if err != nil {
		return nil, err
	}
	if desc {
		slices.Reverse(parts)
	}
	days := make([]func(context.Context) ([]*listindex.Run, error), len(parts))
	for i, p := range parts {
		var mu sync.Mutex
		var runs []*listindex.Run
		var opened bool
		days[i] = func(ctx context.Context) ([]*listindex.Run, error) {
			mu.Lock()
			defer mu.Unlock()
			if opened {
				return runs, nil
			}
			r, err := s.OpenRuns(ctx, p)
			if err != nil {
				return nil, err // the next range to reach the day tries again
			}
			runs, opened = r, true
			return runs, nil
		}
	}
	its := make([]listindex.Iter, len(ranges))
	for i, r := range ranges {
		var opens []func(context.Context) (listindex.Iter, error)
		for d, open := range days {
			if !mayHold(parts[d], r) {
				continue
			}
			opens = append(opens, func(ctx context.Context) (listindex.Iter, error) {
				runs, err := open(ctx)
				if err != nil {
					return nil, err
				}
				return listindex.Scan(runs, r, desc), nil
			})
		}
		its[i] = listindex.Concat(opens...)
	}
	return its, nil
}

// mayHold reports whether partition p may hold keys of r: false for the range of a band p
// does not list, when it lists its bands (IndexPartition.Bands; a partition that lists none
// was written before them).
func mayHold(p IndexPartition, r listindex.KeyRange) bool {
	if len(r.Lo) == 0 || len(p.Bands) == 0 {
		return true
	}
	dim := listindex.Dim(r.Lo[0])
	if lxBandsAttr[dim] == "" {
		return true
	}
	for _, b := range p.Bands[dim] {
		if bytes.HasPrefix(r.Lo, listindex.Prefix(dim, listindex.BandValue(b))) {
			return true
		}
	}
	return false
}
