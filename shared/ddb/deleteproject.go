package ddb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/trace"
)

// Deleting a project (plume admin delete-project) is the one operation that scans the table.
//
// What belongs to a project: every item whose partition key starts with P#<project> (the
// project partition itself, prompts, version pointers, spans with their feedback, evaluations
// and claims, traces, sessions, completions, judges, optimization runs, cached model calls,
// rate-limit shards ...), and two kinds of items outside it: the lookup item of each API key
// (APIKEY#<sha256>) and each feedback link (FLINK#<sha256>). Everything else that names the
// project (the PROJECTS, ORUNS#ACTIVE and PENDING#<n> partitions) is an index entry of one of
// those items, gone with it; a write note a failed request left (NOTES#<n>, notes.go) names
// the project's traces until the sweeper, finding nothing pending there, deletes it. In the
// bucket, the objects under ObjectPrefixes.
//
// Order, and why:
//
//  1. The marker item (DELETE#<project> / DELETION), so that an interrupted run can be resumed
//     and the operator can see one is under way.
//  2. The project item: CreateKey's transaction requires it, so no key can be added from here
//     on. Then every key: its lookup item first (what authenticates a request), then its
//     listing item (which is how the lookup is found again if the run stops in between).
//  3. The feedback links, the other way in (public pages that write feedback).
//  4. A wait of Options.Grace after the keys went: API functions trust a resolved key for up to
//     auth.MaxCacheTTL, so writes can still arrive until then.
//  5. The objects. A judge runner or optimizer still busy with this project then fails to
//     read its span batches and checkpoints instead of writing items the next phase has passed.
//  6. Every item left, found by one parallel Scan filtered on the keys above. Most partitions
//     could be found through indexes (prompts, judges, days of the time indexes ...), but
//     cached model calls (P#<project>#MC#<hash>) and items about prompts or spans that do not
//     exist are in no index: only a Scan finds everything. Since a Scan reads the whole table
//     whatever it returns, also querying the partitions that can be enumerated would only add
//     cost; the Scan serves them all. Its cost is the table's size (0.5 read units per 4 KB,
//     all projects' items included), not the project's.
//  7. The marker.
//
// Each phase is idempotent (deleting what is gone is no error, and listing or scanning again
// finds only what is left); the marker records the phase and, during the Scan, the last key of
// each segment, so a resumed run does not scan again what it has passed.
const (
	// batchWriteMax is BatchWriteItem's limit.
	batchWriteMax = 25
	// DefaultScanSegments is the parallel Scan's default number of segments.
	DefaultScanSegments = 4
)

// The phases of a deletion, in order.
const (
	phaseKeys    = "keys"
	phaseLinks   = "links"
	phaseWait    = "wait"
	phaseObjects = "objects"
	phaseItems   = "items"
)

// ObjectPrefixes are the prefixes of every object of a project in the bucket: span batches
// (trace.BatchPrefix), attachments (trace.AttachmentPrefix), judge backfills
// (judge.BackfillKey), optimization checkpoints (functions/optimizer's checkpointKey), the
// list index's runs (ListIndexPrefix), dataset versions (dataset.ObjectPrefix) and judge
// requests about experiments (dataset.JudgeRequestKey).
func ObjectPrefixes(projectID string) []string {
	return []string{
		trace.BatchPrefix(projectID),
		"attachments/project=" + projectID + "/",
		judge.BackfillPrefix + "project=" + projectID + "/",
		"optimizations/project=" + projectID + "/",
		ListIndexPrefix(projectID),
		dataset.ObjectPrefix(projectID),
		dataset.JudgeRequestPrefix + "project=" + projectID + "/",
	}
}

// DeleteAPI is what deleting a project needs of DynamoDB: Scan and BatchWriteItem, which no
// request path uses, besides reads and single writes. *dynamodb.Client implements it.
type DeleteAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ DeleteAPI = (*dynamodb.Client)(nil)

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

// DeleteOptions shape a project's deletion.
type DeleteOptions struct {
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

// DeleteResult is what a run deleted (or, in a dry run, found).
type DeleteResult struct {
	ProjectID string `json:"project_id"`
	DryRun    bool   `json:"dry_run"`
	// Resumed is true when the run continued one that had stopped.
	Resumed bool `json:"resumed"`
	// Items counts the DynamoDB items by kind (ItemKind).
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
func (r *DeleteResult) TotalItems() int { return total(r.Items) }

// TotalObjects is the number of objects in r.
func (r *DeleteResult) TotalObjects() int { return total(r.Objects) }

// TotalBytes is the size of the objects in r.
func (r *DeleteResult) TotalBytes() int64 { return total(r.Bytes) }

func total[V int | int64](m map[string]V) V {
	var n V
	for _, v := range m {
		n += v
	}
	return n
}

// ProjectDeleter deletes projects: every item and object of one (see the order above).
type ProjectDeleter struct {
	api    DeleteAPI
	table  string
	bucket Bucket
}

// NewProjectDeleter returns a deleter of projects in table and bucket.
func NewProjectDeleter(api DeleteAPI, table string, bucket Bucket) *ProjectDeleter {
	return &ProjectDeleter{api: api, table: table, bucket: bucket}
}

// deletionItem is the marker of a deletion under way.
type deletionItem struct {
	PK            string     `dynamodbav:"PK"`
	SK            string     `dynamodbav:"SK"`
	ProjectID     string     `dynamodbav:"project_id"`
	Phase         string     `dynamodbav:"phase"`
	StartedAt     time.Time  `dynamodbav:"started_at"`
	KeysDeletedAt *time.Time `dynamodbav:"keys_deleted_at,omitempty"`
	Segments      int        `dynamodbav:"segments"`
	// Cursors is the last key each Scan segment has finished ("PK\x00SK"), or "done".
	Cursors map[string]string `dynamodbav:"cursors"`
}

const cursorDone = "done"

// deletion is one run.
type deletion struct {
	d      *ProjectDeleter
	pid    string
	opts   DeleteOptions
	marker deletionItem

	mu      sync.Mutex
	res     DeleteResult
	batches int
}

// Delete deletes every item and object of the project, or with opts.DryRun counts them. A run
// that stops (an error, a cancelled context, a killed process) is resumed by running Delete
// again; so is one whose project item is already gone.
//
// Delete returns errs.NotFound when there is neither the project nor a deletion of it under
// way, and the storage's errors (errs.Unavailable when throttled) otherwise.
func (d *ProjectDeleter) Delete(ctx context.Context, projectID string, opts DeleteOptions) (*DeleteResult, error) {
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Segments <= 0 {
		opts.Segments = DefaultScanSegments
	}
	r := &deletion{d: d, pid: projectID, opts: opts, res: DeleteResult{
		ProjectID: projectID, DryRun: opts.DryRun,
		Items: map[string]int{}, Objects: map[string]int{}, Bytes: map[string]int64{},
	}}
	var marker deletionItem
	found, err := r.get(ctx, deletionPK(projectID), skDeletion, &marker)
	if err != nil {
		return nil, err
	}
	var project projectItem
	hasProject, err := r.get(ctx, projectPK(projectID), skProject, &project)
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
		marker = deletionItem{
			PK: deletionPK(projectID), SK: skDeletion, ProjectID: projectID, Phase: phaseKeys,
			StartedAt: opts.Now().UTC(), Segments: opts.Segments, Cursors: map[string]string{},
		}
		if err := r.putMarker(ctx, marker); err != nil {
			return nil, err
		}
	}
	r.marker = marker
	if err := r.run(ctx); err != nil {
		return &r.res, err
	}
	return &r.res, nil
}

// run continues the deletion from the marker's phase.
func (r *deletion) run(ctx context.Context) error {
	steps := []struct {
		phase string
		run   func(context.Context) error
	}{
		{phaseKeys, r.deleteKeys},
		{phaseLinks, r.deleteLinks},
		{phaseWait, r.wait},
		{phaseObjects, r.deleteObjects},
		{phaseItems, r.deleteItems},
	}
	start := slices.IndexFunc(steps, func(s struct {
		phase string
		run   func(context.Context) error
	}) bool {
		return s.phase == r.marker.Phase
	})
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
			if err := r.setPhase(ctx, steps[i+1].phase); err != nil {
				return err
			}
		}
	}
	_, err := r.d.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &r.d.table, Key: key(deletionPK(r.pid), skDeletion)})
	if err != nil {
		return storageErr("delete the deletion marker", err)
	}
	return nil
}

// deleteKeys deletes the project item, then every key: lookup before listing item.
func (r *deletion) deleteKeys(ctx context.Context) error {
	out, err := r.d.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &r.d.table, Key: key(projectPK(r.pid), skProject), ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return storageErr("delete the project item", err)
	}
	if out.Attributes != nil {
		r.count(kindProject, 1)
	}
	keys, err := r.keys(ctx)
	if err != nil {
		return err
	}
	lookups := make([]map[string]types.AttributeValue, len(keys))
	listings := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		lookups[i], listings[i] = key(apiKeyPK(k.Hash), skAPIKey), key(k.PK, k.SK)
	}
	if err := r.deleteAll(ctx, kindKeyLookup, lookups); err != nil {
		return err
	}
	if err := r.deleteAll(ctx, kindKey, listings); err != nil {
		return err
	}
	now := r.opts.Now().UTC()
	r.marker.KeysDeletedAt = &now
	return r.update(ctx, expression.Set(expression.Name("keys_deleted_at"), expression.Value(now)))
}

// keys reads the project's key items (strongly consistent).
func (r *deletion) keys(ctx context.Context) ([]keyItem, error) {
	var items []keyItem
	cond := partition(projectPK(r.pid)).And(expression.Key(infra.AttrSK).BeginsWith(prefixKey))
	in, err := queryInput(r.d.table, cond, queryOpts{})
	if err != nil {
		return nil, err
	}
	return items, r.queryAll(ctx, in, decodeInto(&items))
}

// links reads the keys of the project's feedback links (GSI1, eventually consistent: a link
// the index has not caught up with is found by the Scan).
func (r *deletion) links(ctx context.Context) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(feedbackLinksGSI1PK(r.pid)))
	in, err := queryInput(r.d.table, cond, queryOpts{index: infra.IndexGSI1})
	if err != nil {
		return nil, err
	}
	in.ProjectionExpression = aws.String("PK, SK")
	return out, r.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		out = append(out, key(strAttr(item, infra.AttrPK), strAttr(item, infra.AttrSK)))
		return nil
	})
}

func (r *deletion) deleteLinks(ctx context.Context) error {
	links, err := r.links(ctx)
	if err != nil {
		return err
	}
	return r.deleteAll(ctx, kindFeedbackLink, links)
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
	for _, prefix := range ObjectPrefixes(r.pid) {
		kind, _, _ := strings.Cut(prefix, "/")
		err := r.d.bucket.List(ctx, prefix, func(page []Object) error {
			if len(page) == 0 {
				return nil
			}
			keys := make([]string, len(page))
			var size int64
			for i, o := range page {
				keys[i], size = o.Key, size+o.Size
			}
			if err := r.d.bucket.Delete(ctx, keys); err != nil {
				return err
			}
			r.mu.Lock()
			r.res.Objects[kind] += len(page)
			r.res.Bytes[kind] += size
			r.mu.Unlock()
			r.afterBatch("objects")
			return nil
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
	return r.scan(ctx, func(ctx context.Context, segment int, page [][2]string, last map[string]types.AttributeValue) error {
		byKind := map[string][]map[string]types.AttributeValue{}
		for _, k := range page {
			kind := ItemKind(r.pid, k[0], k[1])
			byKind[kind] = append(byKind[kind], key(k[0], k[1]))
		}
		for _, kind := range slices.Sorted(maps.Keys(byKind)) {
			if err := r.deleteAll(ctx, kind, byKind[kind]); err != nil {
				return err
			}
		}
		cursor := cursorDone
		if last != nil {
			cursor = keyString(last)
		}
		return r.update(ctx, expression.Set(expression.Name("cursors."+strconv.Itoa(segment)), expression.Value(cursor)))
	})
}

// scanPage handles one page of a segment: the keys of the project's items on it, and the
// segment's LastEvaluatedKey (nil on its last page).
type scanPage func(ctx context.Context, segment int, keys [][2]string, last map[string]types.AttributeValue) error

// scan runs the parallel Scan from the marker's cursors.
func (r *deletion) scan(ctx context.Context, page scanPage) error {
	segments := r.marker.Segments
	if segments <= 0 {
		segments = r.opts.Segments
	}
	filter := expression.Or(
		expression.Name(infra.AttrPK).Equal(expression.Value(projectPK(r.pid))),
		expression.Name(infra.AttrPK).BeginsWith(projectPK(r.pid)+"#"),
		// Stragglers of the first phases: links the index had not shown, keys whose listing
		// item was gone (an older run's failure, or a hand edit).
		expression.Name(infra.AttrGSI1PK).Equal(expression.Value(feedbackLinksGSI1PK(r.pid))),
		expression.Name(infra.AttrPK).BeginsWith(apiKeyPK("")).And(expression.Name("project_id").Equal(expression.Value(r.pid))),
	)
	expr, err := expression.NewBuilder().WithFilter(filter).
		WithProjection(expression.NamesList(expression.Name(infra.AttrPK), expression.Name(infra.AttrSK))).Build()
	if err != nil {
		return fmt.Errorf("build scan filter: %w", err)
	}
	g, ctx := errgroup.WithContext(ctx)
	for seg := range segments {
		cursor := r.marker.Cursors[strconv.Itoa(seg)]
		if cursor == cursorDone {
			continue
		}
		g.Go(func() error {
			in := &dynamodb.ScanInput{
				TableName: &r.d.table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)),
				FilterExpression: expr.Filter(), ProjectionExpression: expr.Projection(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			}
			if r.opts.ScanLimit > 0 {
				in.Limit = aws.Int32(r.opts.ScanLimit)
			}
			if pk, sk, ok := strings.Cut(cursor, "\x00"); ok {
				in.ExclusiveStartKey = key(pk, sk)
			}
			for {
				out, err := r.d.api.Scan(ctx, in)
				if err != nil {
					return storageErr(fmt.Sprintf("scan segment %d", seg), err)
				}
				keys := make([][2]string, 0, len(out.Items))
				for _, item := range out.Items {
					keys = append(keys, [2]string{strAttr(item, infra.AttrPK), strAttr(item, infra.AttrSK)})
				}
				r.mu.Lock()
				r.res.Scanned += int(out.ScannedCount)
				if out.ConsumedCapacity != nil {
					r.res.ScanUnits += aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
				}
				r.mu.Unlock()
				if err := page(ctx, seg, keys, out.LastEvaluatedKey); err != nil {
					return err
				}
				if len(out.LastEvaluatedKey) == 0 {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	return g.Wait()
}

// dryRun counts what a deletion would delete, with the same reads, and writes nothing.
func (r *deletion) dryRun(ctx context.Context, hasProject bool) (*DeleteResult, error) {
	r.marker = deletionItem{Segments: r.opts.Segments}
	count := r.count
	seen := map[string]bool{}
	if hasProject {
		count(kindProject, 1)
	}
	keys, err := r.keys(ctx)
	if err != nil {
		return nil, err
	}
	count(kindKeyLookup, len(keys))
	for _, k := range keys {
		seen[keyString(key(apiKeyPK(k.Hash), skAPIKey))] = true
	}
	links, err := r.links(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		seen[keyString(l)] = true
	}
	count(kindFeedbackLink, len(links))
	for _, prefix := range ObjectPrefixes(r.pid) {
		kind, _, _ := strings.Cut(prefix, "/")
		err := r.d.bucket.List(ctx, prefix, func(page []Object) error {
			r.res.Objects[kind] += len(page)
			for _, o := range page {
				r.res.Bytes[kind] += o.Size
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list objects under %q: %w", prefix, err)
		}
	}
	err = r.scan(ctx, func(_ context.Context, _ int, page [][2]string, _ map[string]types.AttributeValue) error {
		for _, k := range page {
			// The project item and the key lookups and links counted above.
			if kind := ItemKind(r.pid, k[0], k[1]); kind != kindProject && !seen[k[0]+"\x00"+k[1]] {
				count(kind, 1)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &r.res, nil
}

// Item kinds, as DeleteResult counts them.
const (
	kindProject      = "project"
	kindKey          = "key"
	kindKeyLookup    = "key_lookup"
	kindFeedbackLink = "feedback_link"
	kindOther        = "other"
)

// partitionKinds name the partitions under P#<project>#<tag>#...
var partitionKinds = map[string]string{
	"PROMPT": "prompt", "PV": "version_pointer", "PC": "completions",
	"S": "span", "T": "trace", "SE": "session",
	"J": "judge", "OR": "optimization_run", "MC": "model_call", "RL": "rate_limit",
	prefixListIndex: "list_index",
}

// ItemKind names the kind of the item at pk, sk of project: "project", "key", "key_lookup",
// "feedback_link", a partition's kind ("prompt", "span", "trace" ...), finer for the span
// partition ("feedback", "evaluation", "claim") and the project partition ("price",
// "time_index_days"), and "other" for what none of these describe.
func ItemKind(projectID, pk, sk string) string {
	switch {
	case strings.HasPrefix(pk, apiKeyPK("")):
		return kindKeyLookup
	case strings.HasPrefix(pk, feedbackLinkPK("")):
		return kindFeedbackLink
	case pk == projectPK(projectID):
		switch {
		case sk == skProject:
			return kindProject
		case strings.HasPrefix(sk, prefixKey):
			return kindKey
		case strings.HasPrefix(sk, prefixPrice):
			return "price"
		case strings.HasPrefix(sk, "DAYS#"):
			return "time_index_days"
		}
		return kindOther
	}
	rest, ok := strings.CutPrefix(pk, projectPK(projectID)+"#")
	if !ok {
		return kindOther
	}
	tag, _, _ := strings.Cut(rest, "#")
	kind, ok := partitionKinds[tag]
	if !ok {
		return kindOther
	}
	if kind == "span" {
		switch {
		case strings.HasPrefix(sk, prefixFeedback):
			return "feedback"
		case strings.HasPrefix(sk, prefixEvaluation):
			return "evaluation"
		case strings.HasPrefix(sk, "CLAIM#"):
			return "claim"
		}
	}
	return kind
}

// deleteAll deletes items in batches of 25.
func (r *deletion) deleteAll(ctx context.Context, kind string, keys []map[string]types.AttributeValue) error {
	for chunk := range slices.Chunk(keys, batchWriteMax) {
		if err := r.deleteBatch(ctx, kind, chunk); err != nil {
			return err
		}
	}
	return nil
}

// deleteBatch deletes up to 25 items with BatchWriteItem, retrying unprocessed ones with
// backoff.
func (r *deletion) deleteBatch(ctx context.Context, kind string, keys []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	pending := map[string][]types.WriteRequest{r.d.table: reqs}
	for attempt := 0; len(pending[r.d.table]) > 0; attempt++ {
		if attempt > 0 {
			if attempt > maxBatchRetries {
				return errs.Unavailable("storage is busy: %d deletes still unprocessed; run the command again", len(pending[r.d.table]))
			}
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
		}
		out, err := r.d.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return storageErr("batch delete "+kind, err)
		}
		pending = out.UnprocessedItems
	}
	r.count(kind, len(keys))
	r.afterBatch(kind)
	return nil
}

func (r *deletion) count(kind string, n int) {
	r.mu.Lock()
	r.res.Items[kind] += n
	r.mu.Unlock()
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

func (r *deletion) get(ctx context.Context, pk, sk string, out any) (bool, error) {
	res, err := r.d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.d.table, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, storageErr("get "+pk, err)
	}
	if res.Item == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return false, fmt.Errorf("decode %s: %w", pk, err)
	}
	return true, nil
}

func (r *deletion) putMarker(ctx context.Context, m deletionItem) error {
	item, err := marshal(m)
	if err != nil {
		return err
	}
	_, err = r.d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &r.d.table, Item: item})
	if err != nil {
		return storageErr("put the deletion marker", err)
	}
	return nil
}

func (r *deletion) setPhase(ctx context.Context, phase string) error {
	r.marker.Phase = phase
	return r.update(ctx, expression.Set(expression.Name("phase"), expression.Value(phase)))
}

// update changes the marker, which must still exist: two runs on one project would otherwise
// recreate the marker of a finished one.
func (r *deletion) update(ctx context.Context, u expression.UpdateBuilder) error {
	expr, err := expression.NewBuilder().WithUpdate(u).WithCondition(expression.AttributeExists(expression.Name(infra.AttrPK))).Build()
	if err != nil {
		return fmt.Errorf("build marker update: %w", err)
	}
	_, err = r.d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &r.d.table, Key: key(deletionPK(r.pid), skDeletion),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return errs.Conflict("the deletion of project %s was finished by another run", r.pid)
	}
	if err != nil {
		return storageErr("update the deletion marker", err)
	}
	return nil
}

func (r *deletion) queryAll(ctx context.Context, in *dynamodb.QueryInput, decode func(map[string]types.AttributeValue) error) error {
	return queryPages(ctx, r.d.api, in, decode)
}

// queryInput is Table.queryInput for a table reached through a DeleteAPI.
func queryInput(table string, cond expression.KeyConditionBuilder, o queryOpts) (*dynamodb.QueryInput, error) {
	return (&Table{name: table}).queryInput(cond, o)
}
