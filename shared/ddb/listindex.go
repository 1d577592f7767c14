package ddb

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/big"
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
	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/trace"
)

// The list index's storage (package listindex says what the index is and why it is built of
// runs). The consumer of the table's change stream (RollupFunction, beside the rollups) keeps
// it; the list routes read it.
//
// # Partitions
//
// One per (project, kind, UTC day of created_at). A record's keys all carry its created_at, so
// a record is in one partition; a change that moved created_at would take its keys back from
// one and add them to another. A partition is described by its manifest, an item of the
// partition P#<project>#LX#<kind> with the day (yyyymmdd) as sort key, so that the manifests
// of a window are one Query. A manifest holds, as top-level attributes (each written by one
// SET, commutative with every other writer):
//
//   - r#<run id>: a run of the partition, "s:<bytes>:<entries>" when it is in the bucket,
//     "d:<bytes>:<entries>:<bytes stored>" when it is in the table (compressed);
//   - hw#<shard hash>: per stream shard, the sequence number of the last record applied
//     (17 bytes, big-endian) and the time it was applied (4 bytes, Unix seconds);
//   - x#<run id>: a run of the bucket replaced (by a compaction), with the time it was, kept
//     until readers that listed it are done (replacedGrace), then deleted;
//   - v: the version, added to by every write, which a compaction's replacement is
//     conditional on;
//   - ttl: with a span retention, the end of the day plus the retention, as the rollups.
//
// # Runs
//
// Each stream batch's entries of a partition (trace.IndexDiff of each record's old and new
// image, counts added up per key, zero totals left out) become one run (listindex.EncodeRun).
// A run that takes under inlineMax bytes compressed (DEFLATE) is stored so in the table, an
// item of the day's partition P#<project>#LX#<kind>#<yyyymmdd> with the run id as sort key; a
// larger one is an object index/project=<p>/kind=<k>/day=<yyyy-mm-dd>/<run id>.run, as it is
// (a reader fetches its blocks by ranged GETs). The break-even: DynamoDB bills a write unit
// per KB written ($0.625 per million), S3 a PUT per object ($5 per million, any size up to
// 5 GB) and nothing for a DELETE: a PUT costs as much as 8 KB written to the table. A run
// replaced by a compaction is expired, in the table by a write of its size (expireInline,
// unless a retention of up to inlineKeepMax expires it with its partition), in the bucket by a
// free DELETE: so the bound is 4 KB, or 8 KB where a replaced run is not written again.
// Reading is the other way round (half a read unit per 4 KB read eventually consistent, $0.0625
// per million; a GET $0.40 per million), but a run is written once and read whole or by block,
// and the runs of a partition are merged into few (compaction), so the writes decide.
// Compression is what makes small runs cheap: a span's entries repeat its id in each of its
// ten or so keys, so the run of a stream batch of ten records (about 4 KB, four write units)
// compresses about six times, to one write unit; a run in the table is read whole anyway.
//
// A run id is a hash of the shard and the first and last sequence numbers of the records it
// holds, so a retried batch rewrites the same run. A compaction's run is a hash of the ids it
// replaces.
//
// # Exactly once
//
// As the rollups (rollup.go): a batch's run is appended to a manifest by one conditional
// update that also moves the shard's mark to the batch's last record, on the condition that
// the mark is before the batch's first. The run is written before: a crash between the two
// leaves a run no manifest lists, which the retried batch writes again under the same id. A
// batch that overlaps what the partition has (the condition failed) reads the manifest,
// writes the run of the records after the mark, and appends it on the condition that the mark
// is still the one read. A run written but not appended (the partition had its records) is
// discarded. Every record's change is so in one run of its partition, whatever is retried,
// without a transaction.
//
// Marks older than markLife are removed by compactions: the stream keeps records 24 hours,
// so a shard whose mark moved that long ago delivers none of them again.
//
// # What is indexed
//
// Span summaries, trace items and session items, as stored: the change of a record is its new
// image's keys less its old image's. Deletions are not applied, as in the rollups: no request
// deletes these items; the partitions expire with the span retention, as the items do, and
// deleting a project deletes its index (ObjectPrefixes, ItemKind).
const (
	// inlineRunMax: a run that takes fewer bytes compressed is stored in the table (see above),
	// or half as many when a replaced run is expired by a write (inlineKeepMax).
	inlineRunMax = 8 << 10
	// compressMax: a larger run is not compressed to see whether it would fit in the table
	// (runs compress two to six times).
	compressMax = 8 * inlineRunMax

	lxMarkPrefix     = "hw#"
	lxRunPrefix      = "r#"
	lxReplacedPrefix = "x#"
	attrLXVersion    = "v"
	// attrLXRunBytes holds a run stored in the table, compressed (DEFLATE).
	attrLXRunBytes = "z"
	attrLXSince    = "at"
	// attrLXBands is RangeBandsSince: from when the project's records have their band keys
	// with their numbers (listindex.BandKey). "bk", the mark of band keys without them, is no
	// longer read: such keys are decided on the range's keys or the records.
	attrLXBands = "bv"
	// bandsGrace: a project indexed before its band keys had their numbers has them for records
	// created this long after the first batch this code applied of it (markBands).
	bandsGrace = time.Hour

	// seqBytesLen is the length of a sequence number in a mark: DynamoDB Streams' have up to
	// 40 digits, under 2^133.
	seqBytesLen = 17
	// markLife is how long a mark outlives the last batch it moved for: the stream's
	// retention (24 hours) and an hour for clocks.
	markLife = 25 * time.Hour
	// replacedGrace is how long a replaced run stays readable: a reader lists the manifests
	// and reads the runs within one request (under 30 seconds).
	replacedGrace = 15 * time.Minute
	// inlineKeepMax: a replaced run stored in the table is expired at once (a write of its
	// size, to set its TTL) only when it would otherwise stay longer than this (no retention,
	// or a longer one): a write unit per KB ($0.625 per million) buys 2.5 months of a KB's
	// storage ($0.25 per GB-month).
	inlineKeepMax = 75 * 24 * time.Hour

	lxConcurrency = 16
	lxRetries     = 5
)

// Default compaction thresholds (ListIndexConfig).
const (
	DefaultMaxRuns        = 16
	DefaultMaxInlineBytes = 64 << 10
	DefaultMaxMergeBytes  = 32 << 20
)

// RunBlobs is the bucket as the list index uses it (blob.Store).
type RunBlobs interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Get(ctx context.Context, key string) ([]byte, error)
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	Delete(ctx context.Context, keys ...string) error
}

// ListIndexConfig shapes a ListIndexStore; the zero value is the defaults.
type ListIndexConfig struct {
	// Retention (0: none) expires a partition that long after its day ends, as the records it
	// indexes expire (retention.go).
	Retention time.Duration
	// A partition is compacted when it has more than MaxRuns runs or its runs in the table
	// hold more than MaxInlineBytes; a compaction merges no more than MaxMergeBytes of runs.
	MaxRuns        int
	MaxInlineBytes int64
	MaxMergeBytes  int64
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// ListIndexStore keeps and reads the list index.
type ListIndexStore struct {
	t     *Table
	blobs RunBlobs
	cfg   ListIndexConfig
	// indexed holds, per project, an IndexedSince this store has written or found earlier.
	indexed sync.Map
	// banded holds the projects whose RangeBandsSince this store has written or found.
	banded sync.Map
}

// NewListIndexStore is the list index of t and blobs.
func NewListIndexStore(t *Table, blobs RunBlobs, cfg ListIndexConfig) *ListIndexStore {
	if cfg.MaxRuns <= 1 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.MaxInlineBytes <= 0 {
		cfg.MaxInlineBytes = DefaultMaxInlineBytes
	}
	if cfg.MaxMergeBytes <= 0 {
		cfg.MaxMergeBytes = DefaultMaxMergeBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &ListIndexStore{t: t, blobs: blobs, cfg: cfg}
}

// IndexPartition is a partition of the list index as its manifest lists it: the records of
// one kind of one project created on one UTC day.
type IndexPartition struct {
	ProjectID string
	Kind      listindex.Kind
	Day       time.Time
	Runs      []IndexRun
	// Bands are the duration and cost bands its runs added keys of (lxBandsAttr): none for a
	// partition whose runs came before the bands did.
	Bands map[listindex.Dim][]int
}

// IndexRun is a run of a partition.
type IndexRun struct {
	ID string
	// InBucket is true for a run stored in the bucket, false for one in the table.
	InBucket bool
	// Size is the run's length (what listindex.OpenRun reads), Stored what it takes in the
	// table (compressed; 0 in the bucket).
	Size    int64
	Stored  int64
	Entries int
}

// lxPart names a partition: comparable, for maps.
type lxPart struct {
	projectID string
	kind      listindex.Kind
	day       string // yyyymmdd
}

func (p lxPart) dayTime() time.Time {
	d, _ := time.Parse(listIndexDayLayout, p.day)
	return d
}

func (p lxPart) pk() string { return listIndexPK(p.projectID, p.kind) }

func (p lxPart) runsPK() string { return listIndexRunsPK(p.projectID, p.kind, p.dayTime()) }

func (p lxPart) String() string { return p.projectID + "/" + string(p.kind) + "/" + p.day }

// expiry is the TTL of the partition's items: epoch seconds, 0 without retention.
func (s *ListIndexStore) expiry(p lxPart) int64 {
	if s.cfg.Retention <= 0 {
		return 0
	}
	return p.dayTime().Add(24*time.Hour + s.cfg.Retention).Unix()
}

// lxBatch is a stream batch of one shard, with its sequence numbers as marks compare them.
type lxBatch struct {
	shard   string
	mark    string // the shard's mark attribute
	records []StreamRecord
	seqs    [][]byte
}

func newLXBatch(shard string, records []StreamRecord) (*lxBatch, error) {
	b := &lxBatch{shard: shard, mark: lxMarkPrefix + shardHash(shard), records: records, seqs: make([][]byte, len(records))}
	for i, r := range records {
		seq, err := seqBytes(r.Sequence)
		if err != nil {
			return nil, err
		}
		if i > 0 && bytes.Compare(seq, b.seqs[i-1]) <= 0 {
			return nil, fmt.Errorf("list index: stream records out of order at %s", r.Sequence)
		}
		b.seqs[i] = seq
	}
	return b, nil
}

// seqBytes is a stream sequence number (decimal) as seqBytesLen big-endian bytes, whose order
// is the numbers'.
func seqBytes(seq string) ([]byte, error) {
	n, ok := new(big.Int).SetString(seq, 10)
	if !ok || n.Sign() < 0 || n.BitLen() > 8*seqBytesLen {
		return nil, fmt.Errorf("list index: stream sequence number %q", seq)
	}
	return n.FillBytes(make([]byte, seqBytesLen)), nil
}

// Apply adds the changes of records, a batch of the stream shard named shard in sequence
// order, to the list index: per partition they change, one run written and one update of its
// manifest (see above); records a partition has already are skipped.
func (s *ListIndexStore) Apply(ctx context.Context, shard string, records []StreamRecord) error {
	if len(records) == 0 {
		return nil
	}
	if shard == "" {
		return errNoShard
	}
	parts := lxEntries(records)
	if len(parts) == 0 {
		return nil
	}
	b, err := newLXBatch(shard, records)
	if err != nil {
		return err
	}
	if err := s.markBands(ctx, parts); err != nil {
		return err
	}
	if err := s.markIndexed(ctx, parts); err != nil {
		return err
	}
	now := s.cfg.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(lxConcurrency)
	for p, entries := range parts {
		if ttl := s.expiry(p); ttl != 0 && ttl <= now.Unix() {
			continue // a change of a record whose partition has expired: nothing reads it
		}
		g.Go(func() error { return s.applyPartition(ctx, b, p, entries) })
	}
	return g.Wait()
}

// lxRun is a run about to be written: body is what is stored (compressed in the table).
type lxRun struct {
	IndexRun
	body []byte
}

// newRun encodes entries as the run of the batch's records from from on.
func (s *ListIndexStore) newRun(b *lxBatch, from int, entries []listindex.Entry) (lxRun, error) {
	id := runID(b.shard + "\x00" + b.records[from].Sequence + "\x00" + b.records[len(b.records)-1].Sequence)
	return placeRun(id, entries, s.inlineMax())
}

// inlineMax is the size under which a run is stored in the table: inlineRunMax, where a
// replaced run is left to its partition's retention, and half that where it is expired by a
// write (expireInline) as large as the run, so that a run in the table costs its size twice
// while one in the bucket costs a PUT (its DELETE is free).
func (s *ListIndexStore) inlineMax() int {
	if s.cfg.Retention > 0 && s.cfg.Retention <= inlineKeepMax {
		return inlineRunMax
	}
	return inlineRunMax / 2
}

// placeRun encodes entries as the run id and places it: in the table when it takes under
// inlineMax bytes compressed, else in the bucket.
func placeRun(id string, entries []listindex.Entry, inlineMax int) (lxRun, error) {
	body := listindex.EncodeRun(entries)
	run := lxRun{IndexRun: IndexRun{ID: id, InBucket: true, Size: int64(len(body)), Entries: len(entries)}, body: body}
	if len(body) >= compressMax {
		return run, nil
	}
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.DefaultCompression)
	if err != nil {
		return lxRun{}, err
	}
	if _, err := w.Write(body); err != nil {
		return lxRun{}, err
	}
	if err := w.Close(); err != nil {
		return lxRun{}, err
	}
	if z.Len() < inlineMax {
		run.InBucket, run.Stored, run.body = false, int64(z.Len()), z.Bytes()
	}
	return run, nil
}

// inflate is a run stored in the table, of size bytes.
func inflate(stored []byte, size int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(stored)), size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) != size {
		return nil, fmt.Errorf("%d bytes, want %d", len(body), size)
	}
	return body, nil
}

// runID names a run by what determines its content.
func runID(of string) string {
	sum := sha256.Sum256([]byte(of))
	return strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:12]))
}

// applyPartition appends the batch's run of partition p unless p has its records; entries
// are the batch's entries of p.
func (s *ListIndexStore) applyPartition(ctx context.Context, b *lxBatch, p lxPart, entries []listindex.Entry) error {
	from := 0
	cond := expression.AttributeNotExists(expression.Name(b.mark)).Or(expression.Name(b.mark).LessThan(expression.Value(b.seqs[0])))
	for range lxRetries {
		run, err := s.newRun(b, from, entries)
		if err != nil {
			return err
		}
		if err := s.putRun(ctx, p, run); err != nil {
			return err
		}
		m, err := s.appendRun(ctx, p, b, run, entries, cond)
		if err == nil {
			if s.compactionDue(m) {
				if err := s.compact(ctx, p, m); err != nil {
					// The batch is applied; the next one that reaches the partition compacts.
					slog.ErrorContext(ctx, "list index: compaction failed", "partition", p.String(), "error", err)
				}
			}
			return nil
		}
		if !isConditionFailed(err) {
			return err
		}
		// The partition has some of the batch already: read how far it got.
		if m, err = s.manifest(ctx, p); err != nil {
			return err
		}
		if _, listed := m.runs[run.ID]; !listed {
			if err := s.discard(ctx, p, run.IndexRun); err != nil {
				return err
			}
		}
		done := m.marks[b.mark]
		var doneSeq []byte
		if len(done) >= seqBytesLen {
			doneSeq = done[:seqBytesLen]
		}
		if bytes.Compare(doneSeq, b.seqs[len(b.seqs)-1]) >= 0 {
			return nil
		}
		from, _ = slices.BinarySearchFunc(b.seqs, doneSeq, func(seq, done []byte) int {
			if bytes.Compare(seq, done) <= 0 {
				return -1
			}
			return 1
		})
		if entries = lxEntries(b.records[from:])[p]; len(entries) == 0 {
			return nil
		}
		if done == nil {
			cond = expression.AttributeNotExists(expression.Name(b.mark))
		} else {
			cond = expression.Name(b.mark).Equal(expression.Value(done))
		}
	}
	return fmt.Errorf("list index %s: its mark kept moving under %d retries", p, lxRetries)
}

// putRun writes a run's bytes: an item of the day's partition, or an object.
func (s *ListIndexStore) putRun(ctx context.Context, p lxPart, run lxRun) error {
	if run.InBucket {
		if err := s.blobs.Put(ctx, listIndexObjectKey(p.projectID, p.kind, p.dayTime(), run.ID), run.body, ""); err != nil {
			return fmt.Errorf("list index %s: put run %s: %w", p, run.ID, err)
		}
		return nil
	}
	item := key(p.runsPK(), run.ID)
	item[attrLXRunBytes] = &types.AttributeValueMemberB{Value: run.body}
	if ttl := s.expiry(p); ttl != 0 {
		item[infra.AttrTTL] = num(ttl)
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return storageErr(fmt.Sprintf("list index %s: put run %s", p, run.ID), err)
	}
	return nil
}

// appendRun lists run in p's manifest and moves the batch's mark to its last record, under
// cond; it returns the manifest as updated.
func (s *ListIndexStore) appendRun(ctx context.Context, p lxPart, b *lxBatch, run lxRun, entries []listindex.Entry, cond expression.ConditionBuilder) (lxManifest, error) {
	mark := binary.BigEndian.AppendUint32(bytes.Clone(b.seqs[len(b.seqs)-1]), uint32(s.cfg.Now().Unix()))
	up := expression.Set(expression.NameNoDotSplit(b.mark), expression.Value(mark)).
		Set(expression.NameNoDotSplit(lxRunPrefix+run.ID), expression.Value(runDescriptor(run.IndexRun))).
		Add(expression.Name(attrLXVersion), expression.Value(1))
	for dim, bands := range bandsOf(entries) {
		up = up.Add(expression.Name(lxBandsAttr[dim]), expression.Value(&types.AttributeValueMemberNS{Value: bands}))
	}
	if ttl := s.expiry(p); ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	out, err := s.update(ctx, p, up, &cond)
	if err != nil {
		return lxManifest{}, err
	}
	return decodeManifest(out)
}

// update applies up to p's manifest under cond (nil: none) and returns the item as updated.
func (s *ListIndexStore) update(ctx context.Context, p lxPart, up expression.UpdateBuilder, cond *expression.ConditionBuilder) (map[string]types.AttributeValue, error) {
	builder := expression.NewBuilder().WithUpdate(up)
	if cond != nil {
		builder = builder.WithCondition(*cond)
	}
	expr, err := builder.Build()
	if err != nil {
		return nil, fmt.Errorf("build list index update: %w", err)
	}
	out, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(p.pk(), p.day),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		if isConditionFailed(err) {
			return nil, err
		}
		return nil, storageErr(fmt.Sprintf("update list index manifest %s", p), err)
	}
	return out.Attributes, nil
}

// discard lets a run that no manifest lists go: one in the table expires (when it would
// otherwise stay long, inlineKeepMax), one in the bucket is listed as replaced in the
// manifest, so that it goes after readers that may have listed it (a run written again by a
// retry after a compaction replaced it) are done.
func (s *ListIndexStore) discard(ctx context.Context, p lxPart, run IndexRun) error {
	if !run.InBucket {
		return s.expireInline(ctx, p, []string{run.ID})
	}
	up := expression.Set(expression.NameNoDotSplit(lxReplacedPrefix+run.ID), expression.Value(s.cfg.Now().Unix())).
		Add(expression.Name(attrLXVersion), expression.Value(1))
	_, err := s.update(ctx, p, up, nil)
	return err
}

// expireInline gives runs of p stored in the table a TTL of replacedGrace from now, unless
// they would go soon enough with the partition.
func (s *ListIndexStore) expireInline(ctx context.Context, p lxPart, ids []string) error {
	if s.cfg.Retention > 0 && s.cfg.Retention <= inlineKeepMax {
		return nil
	}
	ttl := s.cfg.Now().Add(replacedGrace).Unix()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(lxConcurrency)
	for _, id := range ids {
		g.Go(func() error {
			_, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: &s.t.name, Key: key(p.runsPK(), id),
				UpdateExpression:          aws.String("SET #ttl = :ttl"),
				ConditionExpression:       aws.String("attribute_exists(#pk)"),
				ExpressionAttributeNames:  map[string]string{"#ttl": infra.AttrTTL, "#pk": infra.AttrPK},
				ExpressionAttributeValues: map[string]types.AttributeValue{":ttl": num(ttl)},
			})
			if err != nil && !isConditionFailed(err) {
				return storageErr(fmt.Sprintf("list index %s: expire run %s", p, id), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// manifest reads p's manifest, strongly consistent (a missing one is empty).
func (s *ListIndexStore) manifest(ctx context.Context, p lxPart) (lxManifest, error) {
	out, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key(p.pk(), p.day), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return lxManifest{}, storageErr(fmt.Sprintf("read list index manifest %s", p), err)
	}
	return decodeManifest(out.Item)
}

// lxManifest is a manifest read back.
type lxManifest struct {
	version  int64
	ttl      int64
	marks    map[string][]byte // by attribute name
	runs     map[string]IndexRun
	replaced map[string]int64 // run id -> when, Unix seconds
	bands    map[listindex.Dim][]int
}

// lxBandsAttr are the manifest's attributes that hold, per band dimension, the bands any of
// the partition's runs added a key of (a number set, added to by each run's append): a range's
// read passes over a day without its band (ScanRanges). A band a later run emptied stays.
var lxBandsAttr = map[listindex.Dim]string{listindex.DimDurationBand: "bd", listindex.DimCostBand: "bc"}

// bandsOf are the bands entries add keys of, per band dimension, as number set members.
func bandsOf(entries []listindex.Entry) map[listindex.Dim][]string {
	out := map[listindex.Dim][]string{}
	for _, e := range entries {
		if e.Count <= 0 || len(e.Key) == 0 || lxBandsAttr[listindex.Dim(e.Key[0])] == "" {
			continue
		}
		k, err := listindex.Parse(e.Key)
		if err != nil {
			continue
		}
		f, _ := k.Value.Float()
		if b := strconv.Itoa(int(f)); !slices.Contains(out[k.Dim], b) {
			out[k.Dim] = append(out[k.Dim], b)
		}
	}
	return out
}

func decodeManifest(it map[string]types.AttributeValue) (lxManifest, error) {
	m := lxManifest{marks: map[string][]byte{}, runs: map[string]IndexRun{}, replaced: map[string]int64{}, bands: map[listindex.Dim][]int{}}
	m.version, _ = intAttr(it, attrLXVersion)
	m.ttl, _ = intAttr(it, infra.AttrTTL)
	for dim, name := range lxBandsAttr {
		if ns, ok := it[name].(*types.AttributeValueMemberNS); ok {
			for _, v := range ns.Value {
				if b, err := strconv.Atoi(v); err == nil {
					m.bands[dim] = append(m.bands[dim], b)
				}
			}
		}
	}
	for name, v := range it {
		switch {
		case strings.HasPrefix(name, lxMarkPrefix):
			if b, ok := v.(*types.AttributeValueMemberB); ok {
				m.marks[name] = b.Value
			}
		case strings.HasPrefix(name, lxRunPrefix):
			run, err := parseRunDescriptor(strings.TrimPrefix(name, lxRunPrefix), strAttr(it, name))
			if err != nil {
				return lxManifest{}, err
			}
			m.runs[run.ID] = run
		case strings.HasPrefix(name, lxReplacedPrefix):
			m.replaced[strings.TrimPrefix(name, lxReplacedPrefix)], _ = intAttr(it, name)
		}
	}
	return m, nil
}

// inlineBytes is the size of the partition's runs stored in the table.
func (m lxManifest) inlineBytes() int64 {
	var n int64
	for _, r := range m.runs {
		n += r.Stored
	}
	return n
}

func runDescriptor(r IndexRun) string {
	if r.InBucket {
		return "s:" + strconv.FormatInt(r.Size, 10) + ":" + strconv.Itoa(r.Entries)
	}
	return "d:" + strconv.FormatInt(r.Size, 10) + ":" + strconv.Itoa(r.Entries) + ":" + strconv.FormatInt(r.Stored, 10)
}

func parseRunDescriptor(id, desc string) (IndexRun, error) {
	f := strings.Split(desc, ":")
	bad := fmt.Errorf("list index run %s: descriptor %q", id, desc)
	if len(f) < 3 || (f[0] == "s") != (len(f) == 3) || (f[0] != "s" && (f[0] != "d" || len(f) != 4)) {
		return IndexRun{}, bad
	}
	r := IndexRun{ID: id, InBucket: f[0] == "s"}
	var err error
	if r.Size, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return IndexRun{}, bad
	}
	if r.Entries, err = strconv.Atoi(f[2]); err != nil {
		return IndexRun{}, bad
	}
	if !r.InBucket {
		if r.Stored, err = strconv.ParseInt(f[3], 10, 64); err != nil {
			return IndexRun{}, bad
		}
	}
	return r, nil
}

// lxEntries are the index entries records change, by partition: each record's IndexDiff, a
// taken-back key in the partition of the old image, an added one in that of the new; counts
// of a key added up, zero totals left out.
func lxEntries(records []StreamRecord) map[lxPart][]listindex.Entry {
	counts := map[lxPart]map[string]int32{}
	for _, r := range records {
		if r.EventName == "REMOVE" {
			continue
		}
		old, okOld := lxRecordOf(r.Old)
		cur, okNew := lxRecordOf(r.New)
		if !okOld && !okNew {
			continue
		}
		for _, e := range trace.IndexDiff(old.keys, cur.keys) {
			p := cur.part
			if e.Count < 0 {
				p = old.part
			}
			if counts[p] == nil {
				counts[p] = map[string]int32{}
			}
			counts[p][string(e.Key)] += e.Count
		}
	}
	out := map[lxPart][]listindex.Entry{}
	for p, keys := range counts {
		for k, n := range keys {
			if n != 0 {
				out[p] = append(out[p], listindex.Entry{Key: []byte(k), Count: n})
			}
		}
	}
	return out
}

// lxRecord is a record's partition and index keys.
type lxRecord struct {
	part lxPart
	keys [][]byte
}

// lxRecordOf reads an item image as an indexed record: a span summary, a trace or a session
// (ok false for any other item, or none).
func lxRecordOf(item map[string]types.AttributeValue) (lxRecord, bool) {
	if item == nil {
		return lxRecord{}, false
	}
	pk, sk := strAttr(item, infra.AttrPK), strAttr(item, infra.AttrSK)
	projectID, rest, ok := strings.Cut(strings.TrimPrefix(pk, "P#"), "#")
	if !ok || !strings.HasPrefix(pk, "P#") {
		return lxRecord{}, false
	}
	part := func(kind listindex.Kind, created time.Time) lxPart {
		return lxPart{projectID: projectID, kind: kind, day: listIndexSK(created)}
	}
	switch {
	case sk == skSpan && strings.HasPrefix(rest, "S#"):
		var it summaryItem
		if attributevalue.UnmarshalMap(item, &it) != nil {
			return lxRecord{}, false
		}
		sum := it.toSummary(projectID)
		return lxRecord{part: part(listindex.Spans, sum.CreatedAt), keys: trace.SpanIndexKeys(sum)}, true
	case sk == skTrace && strings.HasPrefix(rest, "T#"):
		t := toTrace(projectID, strings.TrimPrefix(rest, "T#"), item)
		return lxRecord{part: part(listindex.Traces, t.CreatedAt), keys: trace.TraceIndexKeys(t)}, true
	case sk == skSession && strings.HasPrefix(rest, "SE#"):
		se := toSession(projectID, strings.TrimPrefix(rest, "SE#"), item)
		return lxRecord{part: part(listindex.Sessions, se.CreatedAt), keys: trace.SessionIndexKeys(se)}, true
	}
	return lxRecord{}, false
}

// markBands records, per project of parts, from when its records have their duration and cost
// bands in the index, with their numbers (listindex.BandKey; RangeBandsSince reads it, on the
// project's IndexedSince item): a project indexed from its first record by this code has them
// from the start; one the index held before (with band keys without numbers, or none) has them
// for records created from bandsGrace after this code's first batch of it (an older consumer's
// batches are done by then; a record is created when it is first stored, and each of its
// changes indexed by this code from then on). Before markIndexed, which writes IndexedSince
// with the project's first records; once per project in the store's life.
func (s *ListIndexStore) markBands(ctx context.Context, parts map[lxPart][]listindex.Entry) error {
	projects := map[string]bool{}
	for p := range parts {
		projects[p.projectID] = true
	}
	for _, projectID := range slices.Sorted(maps.Keys(projects)) {
		if _, ok := s.banded.Load(projectID); ok {
			continue
		}
		mark := func(at time.Time, cond string, names map[string]string) error {
			_, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.t.name,
				Key:                       key(indexedSincePK(projectID), skIndexedSince),
				UpdateExpression:          aws.String("SET #b = :t"),
				ConditionExpression:       aws.String(cond),
				ExpressionAttributeNames:  names,
				ExpressionAttributeValues: map[string]types.AttributeValue{":t": num(at.UnixMicro())}})
			return err
		}
		err := mark(time.Unix(0, 0), "attribute_not_exists(#s) AND attribute_not_exists(#b)",
			map[string]string{"#b": attrLXBands, "#s": attrLXSince})
		if isConditionFailed(err) {
			err = mark(s.cfg.Now().Add(bandsGrace), "attribute_not_exists(#b)", map[string]string{"#b": attrLXBands})
		}
		if err != nil && !isConditionFailed(err) {
			return storageErr("write the list index's bands start", err)
		}
		s.banded.Store(projectID, true)
	}
	return nil
}

// markIndexed keeps, per project of parts, the earliest created_at of the records the index
// holds (IndexedSince): one conditional update when a batch holds a record created before the
// mark this store last saw (once per project in the store's life, for new projects).
func (s *ListIndexStore) markIndexed(ctx context.Context, parts map[lxPart][]listindex.Entry) error {
	earliest := map[string]time.Time{}
	for p, entries := range parts {
		for _, e := range entries {
			if e.Count <= 0 || len(e.Key) == 0 || listindex.Dim(e.Key[0]) != listindex.DimCreated {
				continue
			}
			k, err := listindex.Parse(e.Key)
			if err != nil {
				return fmt.Errorf("list index key of %s: %w", p, err)
			}
			if t, ok := earliest[p.projectID]; !ok || k.Created.Before(t) {
				earliest[p.projectID] = k.Created
			}
		}
	}
	for _, projectID := range slices.Sorted(maps.Keys(earliest)) {
		at := earliest[projectID]
		if known, ok := s.indexed.Load(projectID); ok && !at.Before(known.(time.Time)) {
			continue
		}
		if err := s.moveMark(ctx, projectID, attrLXSince, at); err != nil {
			return err
		}
		s.indexed.Store(projectID, at) // or an earlier mark, which the condition kept
	}
	return nil
}
