package ddb

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/rollup"
)

// The rollups' window. RollupFunction's event source mapping has a tumbling window
// (TumblingWindowInSeconds in template.yaml): Lambda hands each invocation the state the
// previous invocation of the shard's window answered, and checkpoints the shard at the end of
// the window, after its last invocation (isFinalInvokeForWindow). The rollups keep their sums
// in that state and write them once per window, not once per batch: a rollup item a minute's
// batches all change (the project's minute and hour, each kind, name and model) is written once
// a minute rather than once per batch. The metrics follow the writes by up to a window; the
// trace aggregates and the lists, applied per batch, do not wait for it.
//
// Exactly once, whatever fails. A window's state sums records in segments, each a run of the
// shard's records (first and last sequence number). Writing a window (a flush) adds to each item
// what it lacks of the window and moves the item's mark for the shard (hw#) to the window's last
// record, as Apply does for a batch; a flush is announced first in the shard's window item
// (RUWIN#<shard hash>: "p", the last records of the flushes begun) and recorded there once every
// item has it ("d", the last record written). So an item's mark is always the last record of
// some flush: before the window, a flush under way (announced), or the window's own. Every
// invocation reads the window item (strongly consistent, one read unit), skips the records up to
// "d" (written already, though Lambda may hand them again after a restart, or hand a state
// again whose invocation wrote it and then failed) and starts a segment
// after each announced flush's last record: an item whose mark an unfinished flush moved gets
// the segments after its mark, never part of one. The batch being flushed is kept as records,
// so an item whose mark is inside it (a flush retried with a batch cut otherwise, or a mark
// written per batch before windows) gets the records after its mark, as Apply's retries do.
//
// A state is at most rollupStateMax bytes (Lambda's limit is 1 MB per shard): a batch that
// would pass it is flushed with the state at once, and the window goes on with a fresh one.

// StreamWindow is the tumbling window's part of an invocation of a stream consumer.
type StreamWindow struct {
	// State is what the window's previous invocation answered; nil when a window begins.
	State map[string]string
	// Final is the window's last invocation (Lambda's isFinalInvokeForWindow, or
	// isWindowTerminatedEarly): what the state holds is written, and the answer is empty.
	Final bool
}

const (
	// stateRollups is the rollups' key in a window's state.
	stateRollups = "rollups"
	// rollupStateMax bounds a window's encoded state, well inside Lambda's 1 MB.
	rollupStateMax = 256 << 10
	// rollupWindowTTL is how long a shard's window item outlives its last write: a shard is
	// read for about four hours, and then its children are.
	rollupWindowTTL = 48 * time.Hour
	attrWindowDone  = "d"
	attrWindowBegun = "p"
)

func rollupWindowPK(shard string) string { return "RUWIN#" + shardHash(shard) }

const skRollupWindow = "RUWIN"

// rollupSegment sums a run of a shard's records (sequence numbers first to last, padded).
type rollupSegment struct {
	first, last string
	batch       *rollup.Batch
}

// rollupWindow is a window's state: its segments in record order.
type rollupWindow []*rollupSegment

func (w rollupWindow) last() string {
	if len(w) == 0 {
		return ""
	}
	return w[len(w)-1].last
}

// after is w without the segments up to done, which are written.
func (w rollupWindow) after(done string) (rollupWindow, error) {
	for len(w) > 0 && w[0].last <= done {
		w = w[1:]
	}
	if len(w) > 0 && w[0].first <= done {
		return nil, fmt.Errorf("rollups' window: written up to %s, inside the state's records %s to %s", done, w[0].first, w[0].last)
	}
	return w, nil
}

// add sums the records after w's last and after done, starting a segment after each record
// that ends an announced flush (begun).
func (w rollupWindow) add(records []StreamRecord, done string, begun []string) rollupWindow {
	for _, r := range records {
		seq := padSeq(r.Sequence)
		if seq <= done || seq <= w.last() {
			continue
		}
		if len(w) == 0 || slices.ContainsFunc(begun, func(b string) bool { return w.last() <= b && b < seq }) {
			w = append(w, &rollupSegment{first: seq, batch: rollup.NewBatch()})
		}
		s := w[len(w)-1]
		countRecord(s.batch, r)
		s.last = seq
	}
	return w
}

// ApplyWindow applies records, a batch of the shard in sequence order, within a tumbling
// window: their sums join the window's state, which it answers, or, when w is Final or the
// state would pass its limit (WithStateLimit), are written with the state's, and the answer is
// empty. Apply is ApplyWindow of a window of one batch.
func (s *RollupStore) ApplyWindow(ctx context.Context, shard string, records []StreamRecord, w StreamWindow) (map[string]string, error) {
	if shard == "" {
		return nil, errNoShard
	}
	state, err := decodeRollupWindow(w.State[stateRollups])
	if err != nil {
		return nil, err
	}
	if len(state) == 0 && isEmpty(countRecords(records)) {
		return nil, nil
	}
	done, begun, err := s.windowMarks(ctx, shard)
	if err != nil {
		return nil, err
	}
	// A state written already: the invocation that wrote it failed after (another store's
	// failure), and Lambda hands its state again.
	if state, err = state.after(done); err != nil {
		return nil, err
	}
	var batch []StreamRecord
	for _, r := range records {
		if seq := padSeq(r.Sequence); seq > done && seq > state.last() {
			batch = append(batch, r)
		}
	}
	if !w.Final {
		if encoded := state.add(batch, done, begun).encode(); len(encoded) <= s.stateMax {
			return map[string]string{stateRollups: encoded}, nil
		}
		// Too much for one state: write it and the batch now (add changed the state's last
		// segment in place, so the state is read again).
		if state, err = decodeRollupWindow(w.State[stateRollups]); err != nil {
			return nil, err
		}
	}
	return nil, s.flush(ctx, shard, state, batch, begun)
}

// isEmpty reports whether b changes nothing counted.
func isEmpty(b *rollup.Batch) bool {
	for _, c := range b.Deltas {
		if !isZero(c) {
			return false
		}
	}
	return true
}

// windowMarks reads the shard's window item: the last record written, and the last records of
// the flushes begun and maybe unfinished.
func (s *RollupStore) windowMarks(ctx context.Context, shard string) (string, []string, error) {
	res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name,
		Key: key(rollupWindowPK(shard), skRollupWindow), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", nil, fmt.Errorf("read the rollups' window of shard %s: %w", shard, err)
	}
	var begun []string
	if ss, ok := res.Item[attrWindowBegun].(*types.AttributeValueMemberSS); ok {
		begun = ss.Value
	}
	return strAttr(res.Item, attrWindowDone), begun, nil
}

// flush writes the window's state and the batch's records to their items, announced in the
// shard's window item first and recorded there last.
func (s *RollupStore) flush(ctx context.Context, shard string, state rollupWindow, batch []StreamRecord, begun []string) error {
	f := &rollupFlush{segments: state, records: batch, mark: rollupMark + shardHash(shard), tail: countRecords(batch)}
	f.first, f.last = state.bounds()
	if len(batch) > 0 {
		f.first = cmp.Or(f.first, padSeq(batch[0].Sequence))
		f.last = padSeq(batch[len(batch)-1].Sequence)
	}
	keys := f.keys()
	if len(keys) == 0 {
		return nil
	}
	wk := key(rollupWindowPK(shard), skRollupWindow)
	ttl := time.Now().Add(rollupWindowTTL).Unix()
	if err := s.updateWindow(ctx, wk, expression.Add(expression.Name(attrWindowBegun), expression.Value(&types.AttributeValueMemberSS{Value: []string{f.last}})).
		Set(expression.Name(infra.AttrTTL), expression.Value(ttl))); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rollupConcurrency)
	for _, k := range keys {
		g.Go(func() error { return s.addWindow(gctx, k, f) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// Every item has the window: the flushes begun up to its last record are over.
	over := []string{f.last}
	for _, b := range begun {
		if b < f.last {
			over = append(over, b)
		}
	}
	return s.updateWindow(ctx, wk, expression.Set(expression.Name(attrWindowDone), expression.Value(f.last)).
		Delete(expression.Name(attrWindowBegun), expression.Value(&types.AttributeValueMemberSS{Value: over})).
		Set(expression.Name(infra.AttrTTL), expression.Value(ttl)))
}

func (s *RollupStore) updateWindow(ctx context.Context, k map[string]types.AttributeValue, up expression.UpdateBuilder) error {
	expr, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return fmt.Errorf("build the rollups' window update: %w", err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.t.name, Key: k,
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err != nil {
		return fmt.Errorf("update the rollups' window: %w", err)
	}
	return nil
}

// addWindow adds to item k what it lacks of the flush f.
func (s *RollupStore) addWindow(ctx context.Context, k rollup.Key, f *rollupFlush) error {
	c := f.sum(k, 0)
	cond := expression.AttributeNotExists(expression.Name(f.mark)).Or(expression.Name(f.mark).LessThan(expression.Value(f.first)))
	for range rollupRetries {
		if isZero(c) {
			return nil
		}
		err := s.update(ctx, k, c, f.mark, f.last, cond)
		if !isConditionFailed(err) {
			return err
		}
		// The item has some of the window already: read how far it got and add what is after.
		done, err := s.mark(ctx, k, f.mark)
		if err != nil || done >= f.last {
			return err
		}
		if c, err = f.rest(k, done); err != nil {
			return err
		}
		cond = expression.Name(f.mark).Equal(expression.Value(done))
	}
	return fmt.Errorf("rollup %s %s: its mark kept moving under %d retries", rollupPK(k.ProjectID, k.Dim), rollupSK(k.Grain, k.Start), rollupRetries)
}

// rollupFlush is what a flush writes: a window's segments, then a batch's records (tail is
// their sum), from record first to last; mark is the items' attribute for the shard.
type rollupFlush struct {
	segments    rollupWindow
	records     []StreamRecord
	tail        *rollup.Batch
	first, last string
	mark        string
}

// keys are the items the flush changes.
func (f *rollupFlush) keys() []rollup.Key {
	seen := map[rollup.Key]bool{}
	var out []rollup.Key
	for _, b := range append(f.segmentBatches(), f.tail) {
		for k, c := range b.Deltas {
			if !seen[k] && !isZero(c) {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

func (f *rollupFlush) segmentBatches() []*rollup.Batch {
	out := make([]*rollup.Batch, len(f.segments))
	for i, s := range f.segments {
		out[i] = s.batch
	}
	return out
}

// sum is item k's sum of the segments from index from on and of the batch's records.
func (f *rollupFlush) sum(k rollup.Key, from int) *rollup.Counters {
	c := rollup.NewCounters()
	for _, s := range f.segments[from:] {
		if d := s.batch.Deltas[k]; d != nil {
			c.Merge(d)
		}
	}
	if d := f.tail.Deltas[k]; d != nil {
		c.Merge(d)
	}
	return c
}

// rest is what item k lacks of the flush when it has the shard's records up to done: the
// segments after done, when done ends one (or precedes them all), or the batch's records after
// done, when done is inside the batch. A mark inside a segment cannot be: every mark is the last
// record of a flush, and segments start after the last record of each flush announced.
func (f *rollupFlush) rest(k rollup.Key, done string) (*rollup.Counters, error) {
	for i, s := range f.segments {
		if done < s.first {
			return f.sum(k, i), nil
		}
		if done < s.last {
			return nil, fmt.Errorf("rollup %s %s has shard records up to %s, inside a window's records %s to %s",
				rollupPK(k.ProjectID, k.Dim), rollupSK(k.Grain, k.Start), done, s.first, s.last)
		}
	}
	var rest []StreamRecord
	for _, r := range f.records {
		if padSeq(r.Sequence) > done {
			rest = append(rest, r)
		}
	}
	if c := countRecords(rest).Deltas[k]; c != nil {
		return c, nil
	}
	return rollup.NewCounters(), nil
}

func (w rollupWindow) bounds() (first, last string) {
	if len(w) == 0 {
		return "", ""
	}
	return w[0].first, w.last()
}

// The state's encoding: JSON, each segment's items with their counters as rollup items hold
// them (counterAttrs), so the state is read back by countersOf.
type (
	windowJSON  []segmentJSON
	segmentJSON struct {
		First string     `json:"f"`
		Last  string     `json:"l"`
		Items []itemJSON `json:"i"`
	}
	itemJSON struct {
		Project string                 `json:"p"`
		Filter  rollup.Filter          `json:"f,omitempty"`
		Value   string                 `json:"v,omitempty"`
		Grain   rollup.Grain           `json:"g"`
		Start   int64                  `json:"t"`
		Counts  map[string]json.Number `json:"c"`
	}
)

func (w rollupWindow) encode() string {
	out := make(windowJSON, len(w))
	for i, s := range w {
		seg := segmentJSON{First: s.first, Last: s.last}
		for k, c := range s.batch.Deltas {
			attrs := counterAttrs(c)
			if len(attrs) == 0 {
				continue
			}
			counts := make(map[string]json.Number, len(attrs))
			for name, v := range attrs {
				counts[name] = json.Number(fmt.Sprint(v))
			}
			seg.Items = append(seg.Items, itemJSON{Project: k.ProjectID, Filter: k.Dim.Filter, Value: k.Dim.Value,
				Grain: k.Grain, Start: k.Start.Unix(), Counts: counts})
		}
		out[i] = seg
	}
	b, _ := json.Marshal(out) // strings and numbers only
	return string(b)
}

func decodeRollupWindow(s string) (rollupWindow, error) {
	if s == "" {
		return nil, nil
	}
	var in windowJSON
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&in); err != nil {
		return nil, fmt.Errorf("decode the rollups' window state: %w", err)
	}
	w := make(rollupWindow, len(in))
	for i, seg := range in {
		b := rollup.NewBatch()
		for _, it := range seg.Items {
			attrs := make(map[string]types.AttributeValue, len(it.Counts))
			for name, v := range it.Counts {
				attrs[name] = &types.AttributeValueMemberN{Value: v.String()}
			}
			k := rollup.Key{ProjectID: it.Project, Dim: rollup.Dim{Filter: it.Filter, Value: it.Value}, Grain: it.Grain,
				Start: time.Unix(it.Start, 0).UTC()}
			b.Deltas[k] = countersOf(attrs)
		}
		w[i] = &rollupSegment{first: seg.First, last: seg.Last, batch: b}
	}
	return w, nil
}
