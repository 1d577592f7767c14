package ddb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
)

// IndexedSince is the earliest created_at of the project's records the index holds: every
// record created from then on is in the index (once the consumer has caught up with the
// stream); ok is false when nothing of the project was indexed (trace.Queries' coverage).
func (s *ListIndexStore) IndexedSince(ctx context.Context, projectID string) (since time.Time, ok bool, err error) {
	return indexedSince(ctx, s.t, projectID)
}

func indexedSince(ctx context.Context, t *Table, projectID string) (since time.Time, ok bool, err error) {
	return sinceAttr(ctx, t, projectID, attrLXSince)
}

// RangeBandsSince is the earliest created_at from which every record of the project the index
// holds has its keys of duration and cost bands with their numbers (listindex.BandKey,
// markBands); ok is false when the index has not marked it yet.
func (s *ListIndexStore) RangeBandsSince(ctx context.Context, projectID string) (since time.Time, ok bool, err error) {
	return sinceAttr(ctx, s.t, projectID, attrLXBands)
}

// sinceAttr reads the time attribute name of the project's IndexedSince item; ok is false when
// it has none.
func sinceAttr(ctx context.Context, t *Table, projectID, name string) (since time.Time, ok bool, err error) {
	out, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: key(indexedSincePK(projectID), skIndexedSince)})
	if err != nil {
		return time.Time{}, false, storageErr("read the list index's start", err)
	}
	if out.Item[name] == nil {
		return time.Time{}, false, nil
	}
	return timeAttr(out.Item, name), true, nil
}

// Partitions returns the partitions of kind of the days of [from, to), in day order, as their
// manifests list them: one Query, eventually consistent (the index follows the stream, a
// second or so behind the writes, anyway). Days without a manifest have no records; expired
// partitions are left out.
func (s *ListIndexStore) Partitions(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time) ([]IndexPartition, error) {
	if !from.Before(to) {
		return nil, nil
	}
	cond := partition(listIndexPK(projectID, kind)).
		And(expression.Key(infra.AttrSK).Between(expression.Value(listIndexSK(from)), expression.Value(listIndexSK(to.Add(-time.Microsecond)))))
	now := s.cfg.Now().Unix()
	var out []IndexPartition
	err := s.t.query(ctx, cond, queryOpts{eventual: true}, func(it map[string]types.AttributeValue) error {
		m, err := decodeManifest(it)
		if err != nil {
			return err
		}
		if m.ttl != 0 && m.ttl <= now {
			return nil
		}
		day, err := time.Parse(listIndexDayLayout, strAttr(it, infra.AttrSK))
		if err != nil {
			return fmt.Errorf("list index manifest day %q: %w", strAttr(it, infra.AttrSK), err)
		}
		p := IndexPartition{ProjectID: projectID, Kind: kind, Day: day, Runs: slices.Collect(maps.Values(m.runs)), Bands: m.bands}
		slices.SortFunc(p.Runs, func(a, b IndexRun) int { return strings.Compare(a.ID, b.ID) })
		out = append(out, p)
		return nil
	})
	return out, err
}

// RunSource is a run's bytes: what listindex.OpenRun opens (with Run.Size).
type RunSource struct {
	Run    IndexRun
	Source listindex.Source
}

// Sources returns the runs of p as sources: the runs stored in the table read at once (one
// BatchGetItem per 100, eventually consistent, then strongly for any not seen yet), those in
// the bucket read by ranged GETs as the reader asks.
//
// Sources returns errs.NotFound when a run is gone: a compaction replaced it after p was
// listed, and longer ago than readers are given (replacedGrace); list the partitions again.
func (s *ListIndexStore) Sources(ctx context.Context, p IndexPartition) ([]RunSource, error) {
	part := lxPart{projectID: p.ProjectID, kind: p.Kind, day: listIndexSK(p.Day)}
	bodies, err := s.inlineRuns(ctx, part, p.Runs, false)
	if err != nil {
		return nil, err
	}
	out := make([]RunSource, len(p.Runs))
	for i, r := range p.Runs {
		out[i].Run = r
		if r.InBucket {
			out[i].Source = &objectRun{blobs: s.blobs, key: listIndexObjectKey(p.ProjectID, p.Kind, p.Day, r.ID)}
			continue
		}
		out[i].Source = listindex.Bytes(bodies[r.ID])
	}
	return out, nil
}

// OpenRuns opens every run of p (listindex.OpenRun: a read of each run's end), in parallel.
func (s *ListIndexStore) OpenRuns(ctx context.Context, p IndexPartition) ([]*listindex.Run, error) {
	sources, err := s.Sources(ctx, p)
	if err != nil {
		return nil, err
	}
	runs := make([]*listindex.Run, len(sources))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(lxConcurrency)
	for i, src := range sources {
		g.Go(func() error {
			r, err := listindex.OpenRun(ctx, src.Source, src.Run.Size)
			if err != nil {
				return fmt.Errorf("open list index run %s: %w", src.Run.ID, err)
			}
			runs[i] = r
			return nil
		})
	}
	return runs, g.Wait()
}

// inlineRuns reads the runs of p stored in the table (those of runs that are), by id:
// eventually consistent first (strongly with consistent), then strongly for those not seen.
func (s *ListIndexStore) inlineRuns(ctx context.Context, p lxPart, runs []IndexRun, consistent bool) (map[string][]byte, error) {
	var inline []IndexRun
	for _, r := range runs {
		if !r.InBucket {
			inline = append(inline, r)
		}
	}
	out := map[string][]byte{}
	for chunk := range slices.Chunk(inline, 100) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		size := map[string]int64{}
		for i, r := range chunk {
			keys[i] = key(p.runsPK(), r.ID)
			size[r.ID] = r.Size
		}
		req := map[string]types.KeysAndAttributes{s.t.name: {Keys: keys, ConsistentRead: aws.Bool(consistent)}}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 0 {
				if attempt > maxBatchRetries {
					return nil, errs.Unavailable("storage is busy; retry the request")
				}
				if err := sleep(ctx, backoff(attempt)); err != nil {
					return nil, err
				}
			}
			res, err := s.t.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, storageErr(fmt.Sprintf("read list index runs of %s", p), err)
			}
			for _, it := range res.Responses[s.t.name] {
				id := strAttr(it, infra.AttrSK)
				z, ok := it[attrLXRunBytes].(*types.AttributeValueMemberB)
				if !ok {
					return nil, fmt.Errorf("list index %s: run %s has no bytes", p, id)
				}
				body, err := inflate(z.Value, size[id])
				if err != nil {
					return nil, fmt.Errorf("list index %s: run %s: %w", p, id, err)
				}
				out[id] = body
			}
			req = res.UnprocessedKeys
		}
	}
	var missing []IndexRun
	for _, r := range inline {
		if _, ok := out[r.ID]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	if consistent {
		id := missing[0].ID
		return nil, fmt.Errorf("list index %s: run %s: %w", p, id, errs.NotFound("list index run %s is gone; list the partitions again", id))
	}
	more, err := s.inlineRuns(ctx, p, missing, true)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, more)
	return out, nil
}

// objectRun reads a run stored in the bucket by ranged GETs.
type objectRun struct {
	blobs RunBlobs
	key   string
}

// ReadAt implements listindex.Source.
func (r *objectRun) ReadAt(ctx context.Context, off, n int64) ([]byte, error) {
	return r.blobs.GetRange(ctx, r.key, off, n)
}
