package ddb

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
)

// completionRounds bounds how many reads of the completions index one version-filtered page
// makes before it returns what it found (possibly nothing) with a cursor to go on from.
const completionRounds = 4

// feedbackSlack is how long before a page's oldest completion started its feedback is looked
// for: feedback is stamped by the server when submitted, the span's start by the client that
// made the call, whose clock may run ahead.
const feedbackSlack = time.Hour

// PromptCompletions returns a page of a prompt's completions, newest first: the llm spans of
// the prompt's completions index (completionsPK) by the batch that last wrote them, newest
// batch first, spans of one batch by start, newest first, then by id. Each comes with its
// version, its human feedback and the evaluations of the judges linked to the prompt, read in
// batches.
//
// Every write of a linked span lists it by its batch (an SDK ending a span in a second
// request, a retry with a later ended_at), so that its listing expires with its latest write;
// a span's older listings, and a listing under a prompt the span no longer names, are left
// out: the one kept is that of the batch its summary's record is in (current). So each
// completion appears once, on one page.
//
// Requests per page, unfiltered: one BatchGetItem (the prompt, and the version asked for), one
// Query of the completions index, one BatchGetItem of the summaries, one Query of the project's
// judges, one BatchGetItem of the versions and evaluations (one key per distinct version and
// per completion and linked judge), one Query of the prompt's feedback since the page's oldest
// completion: 6 in all, whatever the number of completions, while the evaluations' BatchGetItem
// has at most 100 keys (one more per further 100 keys; a Query of more than 1 MB takes more
// pages). A version filter, or listings left out, add one Query and one BatchGetItem per
// further round, at most completionRounds in all.
//
// Errors: NotFound for an unknown prompt or version, Invalid for a malformed cursor.
func (s *FeedbackStore) PromptCompletions(ctx context.Context, projectID, slug string, q feedback.CompletionQuery) (feedback.CompletionPage, error) {
	cur, err := parseCompletionCursor(q.Cursor)
	if err != nil {
		return feedback.CompletionPage{}, err
	}
	headKey := key(promptPK(projectID, slug), skPrompt)
	keys := []map[string]types.AttributeValue{headKey}
	versionKey := key(promptPK(projectID, slug), versionSK(q.Version))
	if q.Version > 0 {
		keys = append(keys, versionKey)
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return feedback.CompletionPage{}, err
	}
	if _, ok := found[keyString(headKey)]; !ok {
		return feedback.CompletionPage{}, promptNotFound(slug)
	}
	var want *versionItem
	if q.Version > 0 {
		raw, ok := found[keyString(versionKey)]
		if !ok {
			return feedback.CompletionPage{}, errs.NotFound("version %d of prompt %q not found", q.Version, slug)
		}
		want = &versionItem{}
		if err := attributevalue.UnmarshalMap(raw, want); err != nil {
			return feedback.CompletionPage{}, fmt.Errorf("decode version: %w", err)
		}
	}

	var page feedback.CompletionPage
	for round := 0; round < completionRounds && len(page.Completions) < q.Limit; round++ {
		listed, next, err := s.completionListings(ctx, projectID, slug, cur, q.Limit-len(page.Completions))
		if err != nil {
			return feedback.CompletionPage{}, err
		}
		sums, err := s.current(ctx, projectID, listed)
		if err != nil {
			return feedback.CompletionPage{}, err
		}
		for _, sum := range sums {
			if want == nil || sameVersion(sum, *want) {
				page.Completions = append(page.Completions, sum)
			}
		}
		if cur = next; cur == nil {
			break
		}
	}
	if cur != nil {
		page.NextCursor = cur.String()
	}
	if len(page.Completions) == 0 {
		return page, nil
	}
	if err := s.addDetails(ctx, projectID, slug, page.Completions); err != nil {
		return feedback.CompletionPage{}, err
	}
	return page, nil
}

// sameVersion reports whether c is of version v: by id, or by content hash for a span that
// names its version only by hash.
func sameVersion(c feedback.Completion, v versionItem) bool {
	if c.Summary.PromptVersionID != "" {
		return c.Summary.PromptVersionID == v.ID
	}
	return c.Summary.PromptHash != "" && c.Summary.PromptHash == v.ContentHash
}

// completionCursor is where a page of the completions index starts: after the batch item of
// sort key SK when Skip is 0, else within it, after the first Skip of its spans (by id).
type completionCursor struct {
	SK   string
	Skip int
}

// completionSKPattern is a completion's sort key: 16 digits, '#', then 1 to 64 of the id's
// characters (parseCompletionCursor bounds the length: a bounded repeat would compile to 64
// copies of the class at every start).
var completionSKPattern = regexp.MustCompile(`^[0-9]{16}#[0-9A-Za-z-]+$`)

func (c *completionCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.SK + "|" + strconv.Itoa(c.Skip)))
}

func parseCompletionCursor(s string) (*completionCursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := errs.Invalid("cursor is not one this API returned; start again without it")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	sk, skip, ok := strings.Cut(string(raw), "|")
	n, err := strconv.Atoi(skip)
	if !ok || err != nil || n < 0 || n > 1<<20 || len(sk) > 16+1+64 || !completionSKPattern.MatchString(sk) {
		return nil, bad
	}
	return &completionCursor{SK: sk, Skip: n}, nil
}

// listing is a span listed in the completions index by the batch of one of its writes.
type listing struct{ span, batch string }

// completionListings reads up to limit listings from the completions index, starting at cur
// (nil: the newest batch), in one Query of at most limit batches. next is where the following
// page starts, nil when the index has no more.
func (s *FeedbackStore) completionListings(ctx context.Context, projectID, slug string, cur *completionCursor, limit int) (out []listing, next *completionCursor, err error) {
	cond := partition(completionsPK(projectID, slug))
	switch {
	case cur != nil && cur.Skip == 0:
		cond = cond.And(expression.Key(infra.AttrSK).LessThan(expression.Value(cur.SK)))
	case cur != nil:
		cond = cond.And(expression.Key(infra.AttrSK).LessThanEqual(expression.Value(cur.SK)))
	}
	in, err := s.t.queryInput(cond, queryOpts{reverse: true, limit: int32(limit)})
	if err != nil {
		return nil, nil, err
	}
	res, err := s.t.api.Query(ctx, in)
	if err != nil {
		return nil, nil, storageErr("query completions", err)
	}
	for i, raw := range res.Items {
		var it completionItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return nil, nil, fmt.Errorf("decode completions: %w", err)
		}
		_, batch, _ := strings.Cut(it.SK, "#") // timeIndexSK(at, batch)
		spans := memberIDs(memberItem{Spans: it.Spans})
		skip := 0
		if cur != nil && it.SK == cur.SK {
			skip = min(cur.Skip, len(spans))
		}
		take := min(len(spans)-skip, limit-len(out))
		for _, id := range spans[skip : skip+take] {
			out = append(out, listing{span: id, batch: batch})
		}
		switch {
		case skip+take < len(spans):
			return out, &completionCursor{SK: it.SK, Skip: skip + take}, nil
		case len(out) == limit && (i < len(res.Items)-1 || len(res.LastEvaluatedKey) > 0):
			return out, &completionCursor{SK: it.SK}, nil
		}
	}
	if len(res.LastEvaluatedKey) > 0 { // the key of the last item read, or where an empty page stopped
		return out, &completionCursor{SK: strAttr(res.LastEvaluatedKey, infra.AttrSK)}, nil
	}
	return out, nil, nil
}

// current reads the summaries of the listed spans (one BatchGetItem per 100 distinct spans) and
// keeps each span's listing by the batch that last wrote it, newest start first within the
// page; spans without a summary are left out.
func (s *FeedbackStore) current(ctx context.Context, projectID string, listed []listing) ([]feedback.Completion, error) {
	if len(listed) == 0 {
		return nil, nil
	}
	keys := make([]map[string]types.AttributeValue, 0, len(listed))
	for _, l := range listed {
		keys = append(keys, key(spanPK(projectID, l.span), skSpan))
	}
	found, err := s.t.batchGet(ctx, dedupKeys(keys)) // a page may list a span by two of its writes
	if err != nil {
		return nil, err
	}
	out := make([]feedback.Completion, 0, len(found))
	for _, l := range listed {
		raw, ok := found[keyString(key(spanPK(projectID, l.span), skSpan))]
		if !ok {
			continue
		}
		var it summaryItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return nil, fmt.Errorf("decode span summary: %w", err)
		}
		sum := it.toSummary(projectID)
		if batchOf(sum.Location.Key) != l.batch {
			continue // listed by an earlier write: the span's current listing is elsewhere
		}
		out = append(out, feedback.Completion{Summary: sum})
	}
	slices.SortStableFunc(out, func(a, b feedback.Completion) int {
		return cmp.Or(b.Summary.StartedAt.Compare(a.Summary.StartedAt), strings.Compare(a.Summary.SpanID, b.Summary.SpanID))
	})
	return out, nil
}

// batchOf is the batch id of a span batch object's key (trace.BatchKey: ".../<batch>.ndjson").
func batchOf(objectKey string) string {
	return strings.TrimSuffix(path.Base(objectKey), ".ndjson")
}

// addDetails sets the version, feedback and evaluations of cs: one Query of the project's
// judges, one BatchGetItem of the versions (by id pointer or content hash) and of the linked
// judges' evaluations, one Query of the prompt's feedback since the oldest of cs started.
func (s *FeedbackStore) addDetails(ctx context.Context, projectID, slug string, cs []feedback.Completion) error {
	var judges []judgeItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(judgesGSI1PK(projectID)))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&judges)); err != nil {
		return err
	}
	judges = slices.DeleteFunc(judges, func(j judgeItem) bool { return !slices.Contains(j.Prompts, slug) })

	var keys []map[string]types.AttributeValue
	for _, c := range cs {
		sum := c.Summary
		switch {
		case sum.PromptVersionID != "":
			keys = append(keys, key(versionPointerPK(projectID, sum.PromptVersionID), skVersionPointer))
		case sum.PromptHash != "":
			keys = append(keys, key(promptPK(projectID, slug), hashSK(sum.PromptHash)))
		}
		for _, j := range judges {
			keys = append(keys, key(spanPK(projectID, sum.SpanID), evaluationSK(j.ID)))
		}
	}
	found := map[string]map[string]types.AttributeValue{}
	if len(keys) > 0 {
		var err error
		if found, err = s.t.batchGet(ctx, dedupKeys(keys)); err != nil {
			return err
		}
	}
	byID, err := s.feedbackSince(ctx, projectID, slug, cs)
	if err != nil {
		return err
	}
	for i := range cs {
		c := &cs[i]
		sum := c.Summary
		switch {
		case sum.PromptVersionID != "":
			var p pointerItem
			if raw, ok := found[keyString(key(versionPointerPK(projectID, sum.PromptVersionID), skVersionPointer))]; ok {
				if err := attributevalue.UnmarshalMap(raw, &p); err != nil {
					return fmt.Errorf("decode version pointer: %w", err)
				}
				if p.Slug == slug {
					c.VersionNumber, c.VersionID = p.Number, sum.PromptVersionID
				}
			}
		case sum.PromptHash != "":
			var h hashItem
			if raw, ok := found[keyString(key(promptPK(projectID, slug), hashSK(sum.PromptHash)))]; ok {
				if err := attributevalue.UnmarshalMap(raw, &h); err != nil {
					return fmt.Errorf("decode version hash: %w", err)
				}
				c.VersionNumber, c.VersionID = h.Number, h.VersionID
			}
		}
		for _, j := range judges {
			raw, ok := found[keyString(key(spanPK(projectID, sum.SpanID), evaluationSK(j.ID)))]
			if !ok {
				continue
			}
			var it evalItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return fmt.Errorf("decode evaluation: %w", err)
			}
			if !it.stub() {
				c.Evaluations = append(c.Evaluations, it.toEvaluation())
			}
		}
		c.Feedback = byID[sum.SpanID]
	}
	return nil
}

// feedbackSince reads the human feedback on cs from the prompt's feedback index (GSI1), newest
// first, from feedbackSlack before the oldest of cs was received: one Query (paginated),
// filtered to cs's spans. The bound is the time Plume received each span (CreatedAt, the
// server's clock), never its started_at, which the client sends: a span claiming to have
// started in 2000 must not make every page read the prompt's whole feedback history. A summary
// without a receive time (none is written so) falls back to its start.
func (s *FeedbackStore) feedbackSince(ctx context.Context, projectID, slug string, cs []feedback.Completion) (map[string][]feedback.Feedback, error) {
	var oldest time.Time
	ids := make([]expression.OperandBuilder, 0, len(cs))
	for _, c := range cs {
		t := c.Summary.CreatedAt
		if t.IsZero() {
			t = c.Summary.StartedAt
		}
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
		ids = append(ids, expression.Value(c.Summary.SpanID))
	}
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(promptFeedbackGSI1PK(projectID, slug))).
		And(expression.Key(infra.AttrGSI1SK).GreaterThanEqual(expression.Value(timeIndexSK(oldest.Add(-feedbackSlack), ""))))
	filter := expression.Name("sp").In(ids[0], ids[1:]...).And(expression.AttributeNotExists(expression.Name("j")))
	expr, err := expression.NewBuilder().WithKeyCondition(cond).WithFilter(filter).Build()
	if err != nil {
		return nil, fmt.Errorf("build feedback query: %w", err)
	}
	in, err := s.t.queryInput(cond, queryOpts{index: infra.IndexGSI1, reverse: true})
	if err != nil {
		return nil, err
	}
	in.KeyConditionExpression, in.FilterExpression = expr.KeyCondition(), expr.Filter()
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Names(), expr.Values()
	out := map[string][]feedback.Feedback{}
	err = s.t.queryAll(ctx, in, func(raw map[string]types.AttributeValue) error {
		var it feedbackItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return fmt.Errorf("decode feedback: %w", err)
		}
		out[it.Span] = append(out[it.Span], it.toFeedback(projectID))
		return nil
	})
	return out, err
}

// dedupKeys drops repeated keys: BatchGetItem refuses a request that names a key twice.
func dedupKeys(keys []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	seen := map[string]bool{}
	return slices.DeleteFunc(keys, func(k map[string]types.AttributeValue) bool {
		s := keyString(k)
		if seen[s] {
			return true
		}
		seen[s] = true
		return false
	})
}
