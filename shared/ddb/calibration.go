package ddb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/judge"
)

// maxCalibrationPage bounds the index entries one Query of Calibrations asks for when the
// caller wants the newest few: a page of Limit entries, so that the usual read (the evaluator's
// five corrections) is one small Query.
const maxCalibrationPage = 1000

var _ judge.Calibrations = (*FeedbackStore)(nil)

// Calibrations implements judge.Calibrations. A judge's calibration feedback is indexed in
// GSI2 (keys only) under P#<project>#JC#<judge>, by the time it was last submitted
// (PutFeedback), so the window is read newest first from the index, and the feedback items
// and the evaluations they are about are read by key.
//
// What it costs: one Query of GSI2 per page of index entries in the window (a page is Limit
// entries, at most maxCalibrationPage, or 1 MB, some 2,500 entries, when Limit is 0), and one
// BatchGetItem per 100 of the items they name: each entry's feedback item, and the evaluation
// it is about (once however many people calibrated it). A window of n calibrations is 1 Query
// (per 2,500) and at most ⌈2n/100⌉ BatchGetItem; a Limit of at most 50 is 1 Query and 1
// BatchGetItem, plus the same again for each page that held feedback on evaluations not
// written yet (left out, so the next page makes up for them). An empty window is 1 Query, an
// inverted one none.
func (s *FeedbackStore) Calibrations(ctx context.Context, projectID, judgeID string, q judge.CalibrationQuery) ([]judge.Pair, error) {
	// GSI2SK is "<16-digit µs>#<span id>#<SK>": "<µs>" sorts before and "<µs>~" after every
	// key of that microsecond.
	lo, hi := "0", "9999999999999999~"
	if !q.Start.IsZero() {
		lo = fmt.Sprintf("%016d", max(q.Start.UnixMicro(), 0))
	}
	if !q.End.IsZero() {
		hi = fmt.Sprintf("%016d~", max(q.End.UnixMicro(), 0))
	}
	if lo > hi { // an empty window, which BETWEEN would refuse
		return nil, nil
	}
	cond := expression.Key(infra.AttrGSI2PK).Equal(expression.Value(judgeCalibrationsGSI2PK(projectID, judgeID))).
		And(expression.Key(infra.AttrGSI2SK).Between(expression.Value(lo), expression.Value(hi)))
	in, err := s.t.queryInput(cond, queryOpts{index: infra.IndexGSI2, reverse: true, limit: int32(min(max(q.Limit, 0), maxCalibrationPage))})
	if err != nil {
		return nil, err
	}
	var out []judge.Pair
	p := dynamodb.NewQueryPaginator(s.t.api, in)
	for p.HasMorePages() && (q.Limit <= 0 || len(out) < q.Limit) {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, storageErr("query calibrations", err)
		}
		pairs, err := s.calibrationPairs(ctx, projectID, judgeID, page.Items)
		if err != nil {
			return nil, err
		}
		out = append(out, pairs...)
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// calibrationPairs reads the feedback items that index entries name, and the evaluations of
// judgeID they are about, with one batchGet, and pairs them in the entries' order. An entry
// whose feedback is gone (an orphan that expired), or whose evaluation is missing or a stub
// (feedback that came first), is left out.
func (s *FeedbackStore) calibrationPairs(ctx context.Context, projectID, judgeID string, entries []map[string]types.AttributeValue) ([]judge.Pair, error) {
	keys := make([]map[string]types.AttributeValue, 0, 2*len(entries))
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		pk := strAttr(e, infra.AttrPK)
		keys = append(keys, key(pk, strAttr(e, infra.AttrSK)))
		// BatchGetItem refuses a request that names an item twice: several people may have
		// calibrated the same evaluation.
		if ev := key(pk, evaluationSK(judgeID)); !seen[keyString(ev)] {
			seen[keyString(ev)] = true
			keys = append(keys, ev)
		}
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]judge.Pair, 0, len(entries))
	for _, e := range entries {
		pk := strAttr(e, infra.AttrPK)
		rawFeedback, ok := found[keyString(key(pk, strAttr(e, infra.AttrSK)))]
		if !ok {
			continue
		}
		rawEval, ok := found[keyString(key(pk, evaluationSK(judgeID)))]
		if !ok {
			continue
		}
		var ev evalItem
		if err := attributevalue.UnmarshalMap(rawEval, &ev); err != nil {
			return nil, fmt.Errorf("decode evaluation: %w", err)
		}
		if ev.stub() {
			continue
		}
		var it feedbackItem
		if err := attributevalue.UnmarshalMap(rawFeedback, &it); err != nil {
			return nil, fmt.Errorf("decode feedback: %w", err)
		}
		f := it.toFeedback(projectID)
		if f.Calibration == nil { // not calibration feedback: the index names only those
			continue
		}
		p := judge.Pair{Evaluation: ev.toEvaluation(), ThumbsUp: f.ThumbsUp, Calibration: *f.Calibration, CalibratedAt: f.UpdatedAt}
		if f.Reason != nil {
			p.Reason = *f.Reason
		}
		out = append(out, p)
	}
	return out, nil
}
