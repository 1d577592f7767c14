// Package projectdelete deletes a project: every item and object of it (plume admin
// delete-project), the one operation that scans the table.
//
// What belongs to a project: every item whose partition key starts with P#<project> (the
// project partition itself, prompts, version pointers, spans with their feedback, evaluations
// and claims, traces, sessions, completions, judges, optimization runs, cached model calls,
// rate-limit shards ...), and two kinds of items outside it: the lookup item of each API key
// (APIKEY#<sha256>) and each feedback link (FLINK#<sha256>). Everything else that names the
// project (the PROJECTS and ORUNS#ACTIVE partitions) is an index entry of one of those items,
// gone with it (an earlier release's write notes, NOTES#<n>, and pending deltas' PENDING#<n>
// entries are not deleted here). In the bucket, the objects under ObjectPrefixes.
//
// Order, and why:
//
//  1. The marker (DELETE#<project> / DELETION), so that an interrupted run can be resumed and
//     the operator can see one is under way.
//  2. The project item: creating a key requires it, so no key can be added from here on. Then
//     every key: its lookup item first (what authenticates a request), then its listing item
//     (which is how the lookup is found again if the run stops in between).
//  3. The feedback links, the other way in (public pages that write feedback).
//  4. A wait of Options.Grace after the keys went: API functions trust a resolved key for up to
//     auth.MaxCacheTTL, so writes can still arrive until then.
//  5. The objects. A judge runner or optimizer still busy with this project then fails to
//     read its span batches and checkpoints instead of writing items the next phase has passed.
//  6. Every item left, found by one parallel Scan filtered on the keys above (Store.Scan). Most
//     partitions could be found through indexes (prompts, judges, days of the time indexes
//     ...), but cached model calls and items about prompts or spans that do not exist are in no
//     index: only a Scan finds everything. Since a Scan reads the whole table whatever it
//     returns, also querying the partitions that can be enumerated would only add cost; the
//     Scan serves them all. Its cost is the table's size (0.5 read units per 4 KB, all
//     projects' items included), not the project's.
//  7. The marker.
//
// Each phase is idempotent (deleting what is gone is no error, and listing or scanning again
// finds only what is left); the marker records the phase and, during the Scan, the last key of
// each segment, so a resumed run does not scan again what it has passed.
package projectdelete

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/trace"
	"golang.org/x/sync/errgroup"
)

// DefaultScanSegments is the parallel Scan's default number of segments.
const DefaultScanSegments = 4

// BatchMax is the most items Store.DeleteItems takes at once (BatchWriteItem's limit).
const BatchMax = 25

// The phases of a deletion, in order.
const (
	PhaseKeys    = "keys"
	PhaseLinks   = "links"
	PhaseWait    = "wait"
	PhaseObjects = "objects"
	PhaseItems   = "items"
)

// CursorDone is the cursor of a Scan segment that has finished.
const CursorDone = "done"

// Item kinds, as Result counts them (Store.ItemKind names the others).
const (
	KindProject      = "project"
	KindKey          = "key"
	KindKeyLookup    = "key_lookup"
	KindFeedbackLink = "feedback_link"
	KindOther        = "other"
)

// ObjectPrefixes are the prefixes of every object of a project in the bucket: span batches
// (trace.BatchPrefix), attachments, judge backfills (judge.BackfillPrefix), optimization
// checkpoints (functions/optimizer's checkpointKey), the list index's runs
// (listindex.ObjectPrefix), dataset versions (dataset.ObjectPrefix) and judge requests about
// experiments (dataset.JudgeRequestPrefix).
func ObjectPrefixes(projectID string) []string {
	return []string{
		trace.BatchPrefix(projectID),
		"attachments/project=" + projectID + "/",
		judge.BackfillPrefix + "project=" + projectID + "/",
		"optimizations/project=" + projectID + "/",
		listindex.ObjectPrefix(projectID),
		dataset.ObjectPrefix(projectID),
		dataset.JudgeRequestPrefix + "project=" + projectID + "/",
	}
}

// Marker is the record of a deletion under way.
type Marker struct {
	ProjectID     string
	Phase         string
	StartedAt     time.Time
	KeysDeletedAt *time.Time
	Segments      int
	// Cursors is, by segment, the last key each Scan segment has finished (Store.Scan's next),
	// or CursorDone.
	Cursors map[string]string
}

// ItemKey is an item's primary key.
type ItemKey struct{ PK, SK string }

// ScanPage is one page of a Scan segment: the keys of the project's items on it, and the
// cursor to resume the segment after it ("" on its last page).
type ScanPage struct {
	Keys []ItemKey
	Next string
	// Scanned is how many items the page read, over every project, and Units the read
	// capacity it consumed.
	Scanned int
	Units   float64
}

// Store is the table side of deleting a project (implemented by ddb.ProjectDeletionStore).
type Store interface {
	// Marker reads the project's deletion marker (strongly consistent); false when there is
	// none.
	Marker(ctx context.Context, projectID string) (Marker, bool, error)
	// PutMarker writes m.
	PutMarker(ctx context.Context, m Marker) error
	// SetMarker sets one attribute of the project's marker ("phase", "keys_deleted_at",
	// "cursors.<segment>"), which must still exist: errs.Conflict when another run finished.
	SetMarker(ctx context.Context, projectID, name string, value any) error
	// DeleteMarker deletes the project's marker.
	DeleteMarker(ctx context.Context, projectID string) error
	// HasProject reports whether the project item exists (strongly consistent).
	HasProject(ctx context.Context, projectID string) (bool, error)
	// DeleteProject deletes the project item, reporting whether there was one.
	DeleteProject(ctx context.Context, projectID string) (bool, error)
	// Keys reads the project's keys: each one's lookup item and listing item.
	Keys(ctx context.Context, projectID string) (lookups, listings []ItemKey, err error)
	// FeedbackLinks reads the project's feedback links (eventually consistent: a link the
	// index has not caught up with is found by the Scan).
	FeedbackLinks(ctx context.Context, projectID string) ([]ItemKey, error)
	// Scan reads segment of segments from cursor ("" for its start), limit items a page (0:
	// DynamoDB's 1 MB pages), and calls page with each page's keys of the project's items.
	Scan(ctx context.Context, projectID string, segment, segments int, cursor string, limit int32, page func(ScanPage) error) error
	// DeleteItems deletes up to BatchMax items in one batch, retrying the unprocessed.
	DeleteItems(ctx context.Context, keys []ItemKey) error
	// ItemKind names the kind of the item at k of project: KindProject, KindKey,
	// KindKeyLookup, KindFeedbackLink, a partition's kind ("prompt", "span", "trace" ...) or
	// KindOther.
	ItemKind(projectID string, k ItemKey) string
}

// Object is an object of the bucket as a listing gives it.
type Object struct {
	Key  string
	Size int64
}

// Bucket is the bucket side of deleting a project.
type Bucket interface {
	// List calls page with each page of the objects whose key starts with prefix (S3
	// ListObjectsV2: up to 1,000 a page), in key order.
	List(ctx context.Context, prefix string, page func([]Object) error) error
	// Delete deletes up to 1,000 objects (S3 DeleteObjects). Keys with no object are no error.
	Delete(ctx context.Context, keys []string) error
}

// Options shape a project's deletion.
type Options struct {
	// DryRun counts what would be deleted and deletes nothing (no marker either).
	DryRun bool
	// Grace is how long to wait after the keys are deleted before deleting data: the longest
	// the API trusts a resolved key (auth.MaxCacheTTL; 0 in tests, or when the API is stopped).
	Grace time.Duration
	// Segments is the parallel Scan's number of segments (0: DefaultScanSegments). A resumed
	// run keeps the number its marker records.
	Segments int
	// ScanLimit caps the items a Scan page reads (0: DynamoDB's 1 MB pages).
	ScanLimit int32
	// AfterBatch, when set, is called after every batch a run deletes (a BatchWriteItem or a
	// DeleteObjects request), with the kind of what it deleted ("objects" or an item kind) and
	// the number of batches so far. Tests interrupt a run from it.
	AfterBatch func(kind string, batches int)
	// Progress, when set, is told when each phase starts.
	Progress func(phase string)
	// Sleep waits d or until ctx ends (nil: a timer). Tests replace it to skip the grace.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Result is what a run deleted (or, in a dry run, found).
type Result struct {
	ProjectID string `json:"project_id"`
	DryRun    bool   `json:"dry_run"`
	// Resumed is true when the run continued one that had stopped.
	Resumed bool `json:"resumed"`
	// Items counts the table's items by kind (Store.ItemKind).
	Items map[string]int `json:"items"`
	// Objects and Bytes count the bucket's objects by prefix ("spans", "attachments" ...).
	Objects map[string]int   `json:"objects"`
	Bytes   map[string]int64 `json:"bytes"`
	// Scanned is how many items the Scan read, over every project, and ScanUnits the read
	// capacity it consumed: the cost of the Scan.
	Scanned   int     `json:"scanned"`
	ScanUnits float64 `json:"scan_read_units"`
}

// TotalItems is the number of items in r.
func (r *Result) TotalItems() int { return total(r.Items) }

// TotalObjects is the number of objects in r.
func (r *Result) TotalObjects() int { return total(r.Objects) }

// TotalBytes is the size of the objects in r.
func (r *Result) TotalBytes() int64 { return total(r.Bytes) }

func total[V int | int64](m map[string]V) V {
	var n V
	for _, v := range m {
		n += v
	}
	return n
}

// Deleter deletes projects: every item and object of one (see the order above).
type Deleter struct {
	store  Store
	bucket Bucket
}

// New returns a deleter of projects in store and bucket.
func New(store Store, bucket Bucket) *Deleter {
	return &Deleter{store: store, bucket: bucket}
}

// deletion is one run.
type deletion struct {
	d      *Deleter
	pid    string
	opts   Options
	marker Marker

	mu      sync.Mutex
	res     Result
	batches int
}

// Delete deletes every item and object of the project, or with opts.DryRun counts them. A run
// that stops (an error, a cancelled context, a killed process) is resumed by running Delete
// again; so is one whose project item is already gone.
//
// Delete returns errs.NotFound when there is neither the project nor a deletion of it under
// way, and the storage's errors (errs.Unavailable when throttled) otherwise.
func (d *Deleter) Delete(ctx context.Context, projectID string, opts Options) (*Result, error) {
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Segments <= 0 {
		opts.Segments = DefaultScanSegments
	}
	r := &deletion{d: d, pid: projectID, opts: opts, res: Result{
		ProjectID: projectID, DryRun: opts.DryRun,
		Items: map[string]int{}, Objects: map[string]int{}, Bytes: map[string]int64{},
	}}
	marker, found, err := d.store.Marker(ctx, projectID)
	if err != nil {
		return nil, err
	}
	hasProject, err := d.store.HasProject(ctx, projectID)
	if err != nil {
		return nil, err
	}
	if !found && !hasProject {
		return nil, errs.NotFound("project %s not found, and no deletion of it is under way", projectID)
	}
	r.res.Resumed = found
	if opts.DryRun {
		return r.dryRun(ctx, hasProject)
	}
	if !found {
		marker = Marker{ProjectID: projectID, Phase: PhaseKeys, StartedAt: opts.Now().UTC(), Segments: opts.Segments, Cursors: map[string]string{}}
		if err := d.store.PutMarker(ctx, marker); err != nil {
			return nil, err
		}
	}
	r.marker = marker
	if err := r.run(ctx); err != nil {
		return &r.res, err
	}
	return &r.res, nil
}

// step is a phase and what it runs.
type step struct {
	phase string
	run   func(context.Context) error
}

// run continues the deletion from the marker's phase.
func (r *deletion) run(ctx context.Context) error {
	steps := []step{
		{PhaseKeys, r.deleteKeys},
		{PhaseLinks, r.deleteLinks},
		{PhaseWait, r.wait},
		{PhaseObjects, r.deleteObjects},
		{PhaseItems, r.deleteItems},
	}
	start := slices.IndexFunc(steps, func(s step) bool { return s.phase == r.marker.Phase })
	if start < 0 {
		return fmt.Errorf("deletion of project %s: unknown phase %q", r.pid, r.marker.Phase)
	}
	for i := start; i < len(steps); i++ {
		if r.opts.Progress != nil {
			r.opts.Progress(steps[i].phase)
		}
		if err := steps[i].run(ctx); err != nil {
			return fmt.Errorf("delete project %s: %s: %w", r.pid, steps[i].phase, err)
		}
		if i+1 < len(steps) {
			r.marker.Phase = steps[i+1].phase
			if err := r.d.store.SetMarker(ctx, r.pid, "phase", r.marker.Phase); err != nil {
				return err
			}
		}
	}
	return r.d.store.DeleteMarker(ctx, r.pid)
}

// deleteKeys deletes the project item, then every key: lookup before listing item.
func (r *deletion) deleteKeys(ctx context.Context) error {
	deleted, err := r.d.store.DeleteProject(ctx, r.pid)
	if err != nil {
		return err
	}
	if deleted {
		r.count(KindProject, 1)
	}
	lookups, listings, err := r.d.store.Keys(ctx, r.pid)
	if err != nil {
		return err
	}
	if err := r.deleteAll(ctx, KindKeyLookup, lookups); err != nil {
		return err
	}
	if err := r.deleteAll(ctx, KindKey, listings); err != nil {
		return err
	}
	now := r.opts.Now().UTC()
	r.marker.KeysDeletedAt = &now
	return r.d.store.SetMarker(ctx, r.pid, "keys_deleted_at", now)
}

func (r *deletion) deleteLinks(ctx context.Context) error {
	links, err := r.d.store.FeedbackLinks(ctx, r.pid)
	if err != nil {
		return err
	}
	return r.deleteAll(ctx, KindFeedbackLink, links)
}

// wait lets the API's cached keys expire: Grace after the keys were deleted.
func (r *deletion) wait(ctx context.Context) error {
	if r.marker.KeysDeletedAt == nil || r.opts.Grace <= 0 {
		return nil
	}
	if left := r.marker.KeysDeletedAt.Add(r.opts.Grace).Sub(r.opts.Now()); left > 0 {
		return r.opts.Sleep(ctx, left)
	}
	return nil
}

// deleteObjects deletes every object under the project's prefixes, a listed page at a time.
func (r *deletion) deleteObjects(ctx context.Context) error {
	return r.eachObjectPage(ctx, func(kind string, page []Object) error {
		keys := make([]string, len(page))
		for i, o := range page {
			keys[i] = o.Key
		}
		if err := r.d.bucket.Delete(ctx, keys); err != nil {
			return err
		}
		r.countObjects(kind, page)
		r.afterBatch("objects")
		return nil
	})
}

// eachObjectPage calls page with each listed page of objects under the project's prefixes,
// with the kind of the prefix ("spans", "attachments" ...).
func (r *deletion) eachObjectPage(ctx context.Context, page func(kind string, objects []Object) error) error {
	for _, prefix := range ObjectPrefixes(r.pid) {
		kind, _, _ := strings.Cut(prefix, "/")
		err := r.d.bucket.List(ctx, prefix, func(objects []Object) error {
			if len(objects) == 0 {
				return nil
			}
			return page(kind, objects)
		})
		if err != nil {
			return fmt.Errorf("objects under %q: %w", prefix, err)
		}
	}
	return nil
}

// deleteItems runs the parallel Scan, each segment deleting what it finds and recording its
// last key in the marker once the page's items are gone.
func (r *deletion) deleteItems(ctx context.Context) error {
	return r.scan(ctx, func(ctx context.Context, segment int, page ScanPage) error {
		byKind := map[string][]ItemKey{}
		for _, k := range page.Keys {
			kind := r.d.store.ItemKind(r.pid, k)
			byKind[kind] = append(byKind[kind], k)
		}
		for _, kind := range slices.Sorted(maps.Keys(byKind)) {
			if err := r.deleteAll(ctx, kind, byKind[kind]); err != nil {
				return err
			}
		}
		return r.d.store.SetMarker(ctx, r.pid, "cursors."+strconv.Itoa(segment), cmp.Or(page.Next, CursorDone))
	})
}

// scan runs the parallel Scan from the marker's cursors, calling page with each segment's
// pages.
func (r *deletion) scan(ctx context.Context, page func(ctx context.Context, segment int, p ScanPage) error) error {
	segments := r.marker.Segments
	if segments <= 0 {
		segments = r.opts.Segments
	}
	g, ctx := errgroup.WithContext(ctx)
	for seg := range segments {
		cursor := r.marker.Cursors[strconv.Itoa(seg)]
		if cursor == CursorDone {
			continue
		}
		g.Go(func() error {
			return r.d.store.Scan(ctx, r.pid, seg, segments, cursor, r.opts.ScanLimit, func(p ScanPage) error {
				r.mu.Lock()
				r.res.Scanned += p.Scanned
				r.res.ScanUnits += p.Units
				r.mu.Unlock()
				return page(ctx, seg, p)
			})
		})
	}
	return g.Wait()
}

// dryRun counts what a deletion would delete, with the same reads, and writes nothing.
func (r *deletion) dryRun(ctx context.Context, hasProject bool) (*Result, error) {
	r.marker = Marker{Segments: r.opts.Segments}
	seen := map[ItemKey]bool{}
	if hasProject {
		r.count(KindProject, 1)
	}
	lookups, _, err := r.d.store.Keys(ctx, r.pid)
	if err != nil {
		return nil, err
	}
	r.count(KindKeyLookup, len(lookups))
	links, err := r.d.store.FeedbackLinks(ctx, r.pid)
	if err != nil {
		return nil, err
	}
	r.count(KindFeedbackLink, len(links))
	for _, k := range slices.Concat(lookups, links) {
		seen[k] = true
	}
	err = r.eachObjectPage(ctx, func(kind string, objects []Object) error {
		r.countObjects(kind, objects)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = r.scan(ctx, func(_ context.Context, _ int, page ScanPage) error {
		for _, k := range page.Keys {
			// The project item and the key lookups and links counted above.
			if kind := r.d.store.ItemKind(r.pid, k); kind != KindProject && !seen[k] {
				r.count(kind, 1)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &r.res, nil
}

// deleteAll deletes items in batches of BatchMax.
func (r *deletion) deleteAll(ctx context.Context, kind string, keys []ItemKey) error {
	for chunk := range slices.Chunk(keys, BatchMax) {
		if err := r.d.store.DeleteItems(ctx, chunk); err != nil {
			return fmt.Errorf("delete %s: %w", kind, err)
		}
		r.count(kind, len(chunk))
		r.afterBatch(kind)
	}
	return nil
}

func (r *deletion) count(kind string, n int) {
	r.mu.Lock()
	r.res.Items[kind] += n
	r.mu.Unlock()
}

func (r *deletion) countObjects(kind string, objects []Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Objects[kind] += len(objects)
	for _, o := range objects {
		r.res.Bytes[kind] += o.Size
	}
}

func (r *deletion) afterBatch(kind string) {
	r.mu.Lock()
	r.batches++
	n := r.batches
	r.mu.Unlock()
	if r.opts.AfterBatch != nil {
		r.opts.AfterBatch(kind, n)
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
