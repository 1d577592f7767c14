package ddb

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/listindex"
)

// Compaction keeps a partition's runs few, so that a read opens few: when a partition has more
// than MaxRuns runs, or its runs in the table hold more than MaxInlineBytes, the consumer that
// appended the last run merges the smallest into one (listindex.Compact adds up the counts of
// a key and drops zero totals) and replaces them in the manifest by one update conditional on
// its version.
//
// Which runs: every run stored in the table (reading them costs read units for as long as they
// are listed, and they are small), then the smallest of the bucket, until the partition is down to MaxRuns/2 runs,
// with no more than MaxMergeBytes merged. Merging the smallest first is size-tiered: a run is
// merged again only with runs of about its size, so a record's entry is rewritten about
// log(partition / batch) times over a day, not once per compaction.
//
// The merged run is placed like any run (inlineMax), named by the ids it replaces, so that
// two consumers compacting the same runs write the same run. Replaced runs stay readable for
// readers that listed them: one of the bucket is listed as replaced (x#) and deleted by a
// later compaction after replacedGrace; one of the table is expired (expireInline). The same
// update removes the marks of shards that have not moved for markLife.
//
// A compaction whose update finds the version changed reads the manifest again: if every run
// it merged is still listed (other batches were appended), it replaces them under the new
// version; if not (another compaction took some), its merged run is discarded, unless that one
// listed the same run. A failed compaction loses nothing: its runs stay listed, and the next
// append to the partition compacts again.

// compactionDue reports whether m's partition should be compacted.
func (s *ListIndexStore) compactionDue(m lxManifest) bool {
	return len(m.runs) > s.cfg.MaxRuns || m.inlineBytes() > s.cfg.MaxInlineBytes
}

// mergePlan picks the runs of m to merge (nil: none).
func (s *ListIndexStore) mergePlan(m lxManifest) []IndexRun {
	// The runs of the table first, all taken, then those of the bucket, smallest first.
	runs := slices.SortedFunc(maps.Values(m.runs), func(a, b IndexRun) int {
		return cmp.Or(cmp.Compare(boolInt(a.InBucket), boolInt(b.InBucket)), cmp.Compare(a.Size, b.Size), strings.Compare(a.ID, b.ID))
	})
	need := len(runs) - s.cfg.MaxRuns/2 + 1 // merging that many leaves MaxRuns/2
	var chosen []IndexRun
	var total int64
	for _, r := range runs {
		if r.InBucket && len(chosen) >= need {
			break
		}
		if len(chosen) > 0 && total+r.Size > s.cfg.MaxMergeBytes {
			break
		}
		chosen = append(chosen, r)
		total += r.Size
	}
	if len(chosen) < 2 {
		return nil
	}
	return chosen
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compact merges runs of partition p, whose manifest is m (see above).
func (s *ListIndexStore) compact(ctx context.Context, p lxPart, m lxManifest) error {
	inputs := s.mergePlan(m)
	if inputs == nil {
		return nil
	}
	runs, err := s.readRuns(ctx, p, inputs)
	if err != nil {
		return err
	}
	entries, err := listindex.Compact(ctx, runs)
	if err != nil {
		return fmt.Errorf("list index %s: merge %d runs: %w", p, len(inputs), err)
	}
	ids := make([]string, len(inputs))
	for i, r := range inputs {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	var out *lxRun
	if len(entries) > 0 {
		run, err := placeRun(runID("compaction\x00"+strings.Join(ids, "\x00")), entries, s.inlineMax())
		if err != nil {
			return err
		}
		if err := s.putRun(ctx, p, run); err != nil {
			return err
		}
		out = &run
	}
	var outs []lxRun
	if out != nil {
		outs = []lxRun{*out}
	}
	for range lxRetries {
		err := s.replace(ctx, p, m, inputs, outs, nil)
		if err == nil {
			var inline []string
			for _, r := range inputs {
				if !r.InBucket {
					inline = append(inline, r.ID)
				}
			}
			return s.expireInline(ctx, p, inline)
		}
		if !isConditionFailed(err) {
			return err
		}
		if m, err = s.manifest(ctx, p); err != nil {
			return err
		}
		if !slices.ContainsFunc(inputs, func(r IndexRun) bool { _, ok := m.runs[r.ID]; return !ok }) {
			continue // only appended to: replace under the new version
		}
		// Another compaction took some of the runs.
		if out == nil {
			return nil
		}
		if _, listed := m.runs[out.ID]; listed {
			return nil
		}
		return s.discard(ctx, p, out.IndexRun)
	}
	return nil // the partition is busy; the next append compacts again
}

// replace lists outs in place of inputs in p's manifest, whose version must still be m's (a
// manifest of version 0 must not exist yet), adds bands to its band sets, and tidies it:
// replaced runs of the bucket past their grace deleted, stale marks removed.
func (s *ListIndexStore) replace(ctx context.Context, p lxPart, m lxManifest, inputs []IndexRun, outs []lxRun, bands map[listindex.Dim][]string) error {
	now := s.cfg.Now()
	var gone []string
	for id, at := range m.replaced {
		if _, listed := m.runs[id]; !listed && now.Unix()-at >= int64(replacedGrace.Seconds()) {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	up := expression.Add(expression.Name(attrLXVersion), expression.Value(1))
	for _, r := range inputs {
		up = up.Remove(expression.NameNoDotSplit(lxRunPrefix + r.ID))
		if r.InBucket {
			up = up.Set(expression.NameNoDotSplit(lxReplacedPrefix+r.ID), expression.Value(now.Unix()))
		}
	}
	for _, out := range outs {
		up = up.Set(expression.NameNoDotSplit(lxRunPrefix+out.ID), expression.Value(runDescriptor(out.IndexRun)))
	}
	for dim, bs := range bands {
		up = up.Add(expression.Name(lxBandsAttr[dim]), expression.Value(&types.AttributeValueMemberNS{Value: bs}))
	}
	if ttl := s.expiry(p); ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	for chunk := range slices.Chunk(gone, 1000) {
		keys := make([]string, len(chunk))
		for i, id := range chunk {
			keys[i] = listIndexObjectKey(p.projectID, p.kind, p.dayTime(), id)
		}
		if err := s.blobs.Delete(ctx, keys...); err != nil {
			return fmt.Errorf("list index %s: delete replaced runs: %w", p, err)
		}
	}
	for _, id := range gone {
		up = up.Remove(expression.NameNoDotSplit(lxReplacedPrefix + id))
	}
	for name, mark := range m.marks {
		if len(mark) == seqBytesLen+4 && now.Unix()-int64(binary.BigEndian.Uint32(mark[seqBytesLen:])) > int64(markLife.Seconds()) {
			up = up.Remove(expression.NameNoDotSplit(name))
		}
	}
	cond := expression.Name(attrLXVersion).Equal(expression.Value(m.version))
	if m.version == 0 {
		cond = expression.AttributeNotExists(expression.Name(attrLXVersion))
	}
	_, err := s.update(ctx, p, up, &cond)
	return err
}

// readRuns reads and opens runs of p whole, for merging.
func (s *ListIndexStore) readRuns(ctx context.Context, p lxPart, runs []IndexRun) ([]*listindex.Run, error) {
	bodies, err := s.inlineRuns(ctx, p, runs, true)
	if err != nil {
		return nil, err
	}
	out := make([]*listindex.Run, len(runs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(lxConcurrency)
	for i, r := range runs {
		g.Go(func() error {
			body := bodies[r.ID]
			if r.InBucket {
				var err error
				if body, err = s.blobs.Get(gctx, listIndexObjectKey(p.projectID, p.kind, p.dayTime(), r.ID)); err != nil {
					return fmt.Errorf("list index %s: read run %s: %w", p, r.ID, err)
				}
			}
			run, err := listindex.OpenRun(gctx, listindex.Bytes(body), int64(len(body)))
			if err != nil {
				return fmt.Errorf("list index %s: open run %s: %w", p, r.ID, err)
			}
			out[i] = run
			return nil
		})
	}
	return out, g.Wait()
}
