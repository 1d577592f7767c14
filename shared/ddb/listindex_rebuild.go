package ddb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/trace"
)

// Reindexing a project (plume admin reindex): its days' partitions rebuilt from its records as
// stored, and the index's marks moved back to its first day.
//
// The stream consumer indexes changes from the first one it reads of a project: a record it saw
// created has all its keys; one created before has only the changes seen since (the keys it
// gained, less those it lost). So a project with records from before the list index
// (IndexedSince after its first record) is served by the walk of its time index for windows
// before the mark, and one with records from before the bands (RangeBandsSince) decides ranges
// on those days without them. RebuildDay makes one day's partition of one kind hold exactly the
// keys of the day's records as stored, bands included; Reindex rebuilds the days from the
// project's first through the later mark's, newest first, and moves each mark back over the
// unbroken stretch of days it rebuilt from the mark's own.
//
// Exactly once: a day is rebuilt only when none of its records changed for markLife (the
// stream's 24 hours and an hour): each change of them has been applied by then, or has left the
// stream, and no more will come but those of changes made after the read. The partition's runs
// are replaced by runs of the records' keys in one update conditional on the manifest's
// version, so that a run appended between the read and the replacement (a change made after
// the read) fails it, and the day is reported busy; a change applied after the replacement adds
// its difference from what was read, as for any record. Runs written for a replacement that
// does not happen are deleted (no manifest listed them, so no reader has).
//
// Finding the records: by the project's time index (every record of a project from before the
// list index has its entry: timeindex.go) and by the created_at keys of the partition's own
// runs (the records the consumer saw created). A span's time-index entry is its member item's,
// stamped by the first span of a stream batch, so spans are looked for from the day before.

// ReindexQuiet is how long a day's records must have been left unchanged for RebuildDay to
// rebuild it.
const ReindexQuiet = markLife

// rebuildChunk is how many records one run of a rebuild holds: about 10 MB of keys of spans.
const rebuildChunk = 50_000

// DayRebuild is what RebuildDay found and did of one partition.
type DayRebuild struct {
	Kind listindex.Kind
	Day  time.Time
	// Records are the day's records found, Keys their index keys, Runs the runs that now hold
	// them (0 when nothing was replaced).
	Records, Keys, Runs int
	// Replaced is how many runs the partition had before.
	Replaced int
	// LastChange is the latest change of a record of the day seen (the records are read until
	// one is too recent).
	LastChange time.Time
	// Busy is true when the day was not rebuilt: a record changed less than markLife ago, or
	// the partition changed while it was rebuilt. Retry after LastChange plus markLife.
	Busy bool
}

// RebuildDay rebuilds the partition of kind of projectID for the UTC day that holds day (see
// above); with dryRun it reads and counts, and writes nothing.
func (s *ListIndexStore) RebuildDay(ctx context.Context, traces *TraceStore, projectID string, kind listindex.Kind, day time.Time, dryRun bool) (DayRebuild, error) {
	p := lxPart{projectID: projectID, kind: kind, day: listIndexSK(day)}
	out := DayRebuild{Kind: kind, Day: p.dayTime()}
	now := s.cfg.Now()
	if ttl := s.expiry(p); ttl != 0 && ttl <= now.Unix() {
		return out, nil // past the retention: its records have expired too
	}
	m, err := s.manifest(ctx, p)
	if err != nil {
		return out, err
	}
	out.Replaced = len(m.runs)
	ids, err := s.dayIDs(ctx, traces, p, m)
	if err != nil {
		return out, err
	}
	var written []lxRun
	bands := map[listindex.Dim][]string{}
	for chunk := range slices.Chunk(ids, rebuildChunk) {
		items, err := traces.t.batchGet(ctx, recordKeys(p, chunk))
		if err != nil {
			return out, s.deleteRuns(ctx, p, written, err)
		}
		var entries []listindex.Entry
		for _, it := range items {
			rec, ok := lxRecordOf(it)
			if !ok || rec.part != p {
				continue // a record of another day, found by its time-index entry
			}
			out.Records++
			if at := timeAttr(it, "ua"); at.After(out.LastChange) {
				out.LastChange = at
			}
			for _, k := range rec.keys {
				entries = append(entries, listindex.Entry{Key: k, Count: 1})
			}
		}
		out.Keys += len(entries)
		if now.Sub(out.LastChange) < markLife {
			out.Busy = true
			return out, s.deleteRuns(ctx, p, written, nil)
		}
		if dryRun || len(entries) == 0 {
			continue
		}
		run, err := placeRun(runID("rebuild\x00"+uuid.NewString()), entries, s.inlineMax())
		if err != nil {
			return out, s.deleteRuns(ctx, p, written, err)
		}
		if err := s.putRun(ctx, p, run); err != nil {
			return out, s.deleteRuns(ctx, p, written, err)
		}
		written = append(written, run)
		for dim, bs := range bandsOf(entries) {
			for _, b := range bs {
				if !slices.Contains(bands[dim], b) {
					bands[dim] = append(bands[dim], b)
				}
			}
		}
	}
	if dryRun || len(m.runs) == 0 && len(written) == 0 {
		return out, nil
	}
	inputs := slices.Collect(maps.Values(m.runs))
	err = s.replace(ctx, p, m, inputs, written, bands)
	if isConditionFailed(err) {
		out.Busy = true
		return out, s.deleteRuns(ctx, p, written, nil)
	}
	if err != nil {
		return out, err
	}
	out.Runs = len(written)
	var inline []string
	for _, r := range inputs {
		if !r.InBucket {
			inline = append(inline, r.ID)
		}
	}
	return out, s.expireInline(ctx, p, inline)
}

// timeIndexOf is the time index that lists the records of each kind.
var timeIndexOf = map[listindex.Kind]string{listindex.Spans: trace.IndexSpans, listindex.Traces: trace.IndexTraces, listindex.Sessions: trace.IndexSessions}

// dayIDs are the ids of p's records, as far as the project's time index and p's runs (m) know
// them, each once; some may be of other days.
func (s *ListIndexStore) dayIDs(ctx context.Context, traces *TraceStore, p lxPart, m lxManifest) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	from, to := p.dayTime(), p.dayTime().Add(24*time.Hour)
	if p.kind == listindex.Spans {
		from = from.Add(-24 * time.Hour)
	}
	err := traces.WalkIndex(ctx, p.projectID, timeIndexOf[p.kind], trace.TimeRange{From: from, To: to}, func(page []string) (bool, error) {
		for _, id := range page {
			add(id)
		}
		return true, nil
	})
	if err != nil || len(m.runs) == 0 {
		return ids, err
	}
	runs, err := s.readRuns(ctx, p, slices.Collect(maps.Values(m.runs)))
	if err != nil {
		return nil, err
	}
	it := listindex.Scan(runs, listindex.DimRange(listindex.DimCreated), false)
	for it.Next(ctx) {
		k, err := listindex.Parse(it.Key())
		if err != nil {
			return nil, fmt.Errorf("list index %s: %w", p, err)
		}
		add(k.ID)
	}
	return ids, it.Err()
}

// recordKeys are the table keys of the records of p's kind named ids.
func recordKeys(p lxPart, ids []string) []map[string]types.AttributeValue {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		switch p.kind {
		case listindex.Spans:
			keys[i] = key(spanPK(p.projectID, id), skSpan)
		case listindex.Traces:
			keys[i] = key(tracePK(p.projectID, id), skTrace)
		default:
			keys[i] = key(sessionPK(p.projectID, id), skSession)
		}
	}
	return keys
}

// deleteRuns deletes runs of p that no manifest lists (a rebuild's that did not replace the
// partition's), and returns cause, or the first failure to delete when there is no cause.
func (s *ListIndexStore) deleteRuns(ctx context.Context, p lxPart, runs []lxRun, cause error) error {
	var objects []string
	for _, r := range runs {
		if r.InBucket {
			objects = append(objects, listIndexObjectKey(p.projectID, p.kind, p.dayTime(), r.ID))
			continue
		}
		if _, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(p.runsPK(), r.ID)}); err != nil && cause == nil {
			cause = storageErr(fmt.Sprintf("list index %s: delete run %s", p, r.ID), err)
		}
	}
	if len(objects) > 0 {
		if err := s.blobs.Delete(ctx, objects...); err != nil && cause == nil {
			cause = fmt.Errorf("list index %s: delete runs: %w", p, err)
		}
	}
	return cause
}

// Reindexed is what Reindex did.
type Reindexed struct {
	// From and Through are the first and last days to rebuild; Days what was found and done of
	// each partition, newest day first.
	From, Through time.Time
	Days          []DayRebuild
	// Since and BandsSince are the marks (IndexedSince, RangeBandsSince) before and after; a
	// zero time is none.
	SinceBefore, SinceAfter, BandsBefore, BandsAfter time.Time
	// Done is true when every day was rebuilt (with dryRun: could be): every record of the
	// project is in the index, with its bands.
	Done bool
}

// Reindex rebuilds the project's days (see above), from the first day the time index or the
// list index has a record of through the day of the later of the index's two marks, newest
// first, passing over busy days; then it moves each mark back to the start of the earliest day
// from which every day through the mark's own was rebuilt (the days after it the consumer
// holds whole), where that is earlier. With dryRun it reads and counts only. report, when not
// nil, is told of each partition as it is done.
func (s *ListIndexStore) Reindex(ctx context.Context, traces *TraceStore, projectID string, dryRun bool, report func(DayRebuild)) (Reindexed, error) {
	var out Reindexed
	marks, err := s.marks(ctx, projectID)
	if err != nil {
		return out, err
	}
	out.SinceBefore, out.BandsBefore = marks[attrLXSince], marks[attrLXBands]
	out.SinceAfter, out.BandsAfter = out.SinceBefore, out.BandsBefore
	first, last, err := s.recordDays(ctx, traces, projectID)
	if err != nil || first.IsZero() {
		out.Done = err == nil
		return out, err
	}
	out.From, out.Through = first, last
	if !out.SinceBefore.IsZero() && !out.BandsBefore.IsZero() {
		out.Through = dayStart(maxTime(out.SinceBefore, out.BandsBefore))
	}
	rebuilt := map[time.Time]bool{} // days whose three partitions were rebuilt
	out.Done = true
	for day := out.Through; !day.Before(out.From); day = day.AddDate(0, 0, -1) {
		rebuilt[day] = true
		for _, kind := range []listindex.Kind{listindex.Spans, listindex.Traces, listindex.Sessions} {
			r, err := s.RebuildDay(ctx, traces, projectID, kind, day, dryRun)
			if err != nil {
				return out, fmt.Errorf("rebuild %s of %s: %w", kind, day.Format(time.DateOnly), err)
			}
			out.Days = append(out.Days, r)
			if report != nil {
				report(r)
			}
			if r.Busy {
				rebuilt[day], out.Done = false, false
			}
		}
	}
	if dryRun {
		return out, nil
	}
	// reach is the earliest day from which every day through mark's (Through when it has
	// none) was rebuilt; zero when mark's own was not.
	reach := func(mark time.Time) time.Time {
		day := out.Through
		if !mark.IsZero() {
			day = dayStart(mark)
		}
		var at time.Time
		for ; !day.Before(out.From) && rebuilt[day]; day = day.AddDate(0, 0, -1) {
			at = day
		}
		return at
	}
	for name, at := range map[string]time.Time{attrLXSince: reach(out.SinceBefore), attrLXBands: reach(out.BandsBefore)} {
		if err := s.moveMark(ctx, projectID, name, at); err != nil {
			return out, err
		}
	}
	marks, err = s.marks(ctx, projectID)
	out.SinceAfter, out.BandsAfter = marks[attrLXSince], marks[attrLXBands]
	return out, err
}

// moveMark sets the project's mark name (attrLXSince, attrLXBands) to at where it is later or
// missing; nothing for a zero at.
func (s *ListIndexStore) moveMark(ctx context.Context, projectID, name string, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	_, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.t.name,
		Key:                       key(indexedSincePK(projectID), skIndexedSince),
		UpdateExpression:          aws.String("SET #m = :t"),
		ConditionExpression:       aws.String("attribute_not_exists(#m) OR #m > :t"),
		ExpressionAttributeNames:  map[string]string{"#m": name},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": num(at.UnixMicro())}})
	if err != nil && !isConditionFailed(err) {
		return storageErr("move the list index's mark "+name, err)
	}
	return nil
}

// marks reads the project's IndexedSince item: its marks by attribute (absent: none).
func (s *ListIndexStore) marks(ctx context.Context, projectID string) (map[string]time.Time, error) {
	res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name,
		Key: key(indexedSincePK(projectID), skIndexedSince), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, storageErr("read the list index's start", err)
	}
	out := map[string]time.Time{}
	for _, name := range []string{attrLXSince, attrLXBands} {
		if res.Item[name] != nil {
			out[name] = timeAttr(res.Item, name)
		}
	}
	return out, nil
}

// recordDays are the first and last days on which the project's time index or list index has a
// record (zero when none), as far back as a project may keep spans.
func (s *ListIndexStore) recordDays(ctx context.Context, traces *TraceStore, projectID string) (first, last time.Time, err error) {
	now := s.cfg.Now()
	from, to := dayStart(now).AddDate(0, 0, -retentionDaysMax), dayStart(now).AddDate(0, 0, 1)
	note := func(d time.Time) {
		if first.IsZero() || d.Before(first) {
			first = d
		}
		if d.After(last) {
			last = d
		}
	}
	for kind, walk := range timeIndexOf {
		days, err := traces.days.days(ctx, projectID, walk, from, to)
		if err != nil {
			return first, last, err
		}
		for _, d := range days {
			note(dayStart(d))
		}
		parts, err := s.Partitions(ctx, projectID, kind, from, to)
		if err != nil {
			return first, last, err
		}
		for _, p := range parts {
			note(p.Day)
		}
	}
	return first, last, nil
}

func dayStart(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// String names a rebuilt partition as the command prints it.
func (r DayRebuild) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-8s %d records, %d keys", r.Day.Format(time.DateOnly), r.Kind, r.Records, r.Keys)
	switch {
	case r.Busy:
		fmt.Fprintf(&b, ": busy, last change %s", r.LastChange.Format(time.RFC3339))
	case r.Runs > 0 || r.Replaced > 0:
		fmt.Fprintf(&b, ": %d runs in place of %d", r.Runs, r.Replaced)
	}
	return b.String()
}
