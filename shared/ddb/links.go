package ddb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/trace"
)

// LinkStore keeps feedback links: one item per link keyed by the hash of its token
// (FLINK#<sha256> / FLINK), listed per project through GSI1. The item also holds the link's
// rate window (w: the minute, n: uses in it), so a page view is one UpdateItem. Expired links
// are deleted by DynamoDB's TTL a month after they expire.
type LinkStore struct{ t *Table }

var _ feedback.LinkStore = (*LinkStore)(nil)

// NewLinkStore returns the feedback link store in t.
func NewLinkStore(t *Table) *LinkStore { return &LinkStore{t: t} }

// linkRetention is how long an expired link is kept (to show "expired" rather than "unknown").
const linkRetention = 30 * 24 * time.Hour

type linkItem struct {
	PK        string     `dynamodbav:"PK"`
	SK        string     `dynamodbav:"SK"`
	GSI1PK    string     `dynamodbav:"GSI1PK"`
	GSI1SK    string     `dynamodbav:"GSI1SK"`
	ID        string     `dynamodbav:"id"`
	ProjectID string     `dynamodbav:"project_id"`
	Slug      string     `dynamodbav:"prompt_slug"`
	Type      string     `dynamodbav:"link_type"`
	CreatedAt time.Time  `dynamodbav:"created_at"`
	ExpiresAt time.Time  `dynamodbav:"expires_at"`
	RevokedAt *time.Time `dynamodbav:"revoked_at,omitempty"`
	UserID    string     `dynamodbav:"user_id"`
	UserEmail string     `dynamodbav:"user_email,omitempty"`
	UserName  string     `dynamodbav:"user_name,omitempty"`
	Window    int64      `dynamodbav:"w"`
	Uses      int64      `dynamodbav:"n"`
	TTL       int64      `dynamodbav:"ttl"`
}

func (it linkItem) toLink() feedback.Link {
	return feedback.Link{
		ID: it.ID, ProjectID: it.ProjectID, PromptSlug: it.Slug, LinkType: it.Type, TokenHash: it.PK[len(feedbackLinkPK("")):],
		CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt, RevokedAt: it.RevokedAt,
		CreatedBy: auth.User{ID: it.UserID, Email: it.UserEmail, Name: it.UserName},
	}
}

// CreateLink implements feedback.LinkStore: one transaction that checks the prompt exists and
// puts the link.
func (s *LinkStore) CreateLink(ctx context.Context, l feedback.Link) error {
	item, err := marshal(linkItem{
		PK: feedbackLinkPK(l.TokenHash), SK: skFeedbackLink, GSI1PK: feedbackLinksGSI1PK(l.ProjectID), GSI1SK: l.ID,
		ID: l.ID, ProjectID: l.ProjectID, Slug: l.PromptSlug, Type: l.LinkType, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt,
		UserID: l.CreatedBy.ID, UserEmail: l.CreatedBy.Email, UserName: l.CreatedBy.Name,
		TTL: l.ExpiresAt.Add(linkRetention).Unix(),
	})
	if err != nil {
		return err
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: &s.t.name, Key: key(promptPK(l.ProjectID, l.PromptSlug), skPrompt),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		{Put: &types.Put{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
	}})
	if codes := cancellationCodes(err); len(codes) > 0 && codes[0] == "ConditionalCheckFailed" {
		return promptNotFound(l.PromptSlug)
	}
	if err != nil {
		return storageErr("create feedback link", err)
	}
	return nil
}

// Links implements feedback.LinkStore with one Query of GSI1 (paginated).
func (s *LinkStore) Links(ctx context.Context, projectID string) ([]feedback.Link, error) {
	var items []linkItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(feedbackLinksGSI1PK(projectID)))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&items)); err != nil {
		return nil, err
	}
	out := make([]feedback.Link, len(items))
	for i, it := range items {
		out[i] = it.toLink()
	}
	return out, nil
}

// RevokeLink implements feedback.LinkStore: a Query of GSI1 finds the link's item by id within
// the project, then one UpdateItem revokes it.
func (s *LinkStore) RevokeLink(ctx context.Context, projectID, linkID string, at time.Time) (feedback.Link, error) {
	var items []linkItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(feedbackLinksGSI1PK(projectID))).
		And(expression.Key(infra.AttrGSI1SK).Equal(expression.Value(linkID)))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&items)); err != nil {
		return feedback.Link{}, err
	}
	if len(items) == 0 {
		return feedback.Link{}, errs.NotFound("feedback link %q not found", linkID)
	}
	revoked, err := attributevalue.Marshal(at)
	if err != nil {
		return feedback.Link{}, fmt.Errorf("encode revocation time: %w", err)
	}
	res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(items[0].PK, skFeedbackLink),
		UpdateExpression:          aws.String("SET revoked_at = if_not_exists(revoked_at, :at)"),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": revoked},
		ReturnValues:              types.ReturnValueAllNew,
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return feedback.Link{}, errs.NotFound("feedback link %q not found", linkID)
	case err != nil:
		return feedback.Link{}, storageErr("revoke feedback link", err)
	}
	var it linkItem
	if err := attributevalue.UnmarshalMap(res.Attributes, &it); err != nil {
		return feedback.Link{}, fmt.Errorf("decode feedback link: %w", err)
	}
	return it.toLink(), nil
}

// UseLink implements feedback.LinkStore. The usual case is one UpdateItem that counts the use
// in the current minute and returns the link; the first use of a minute resets the window with a
// second one.
func (s *LinkStore) UseLink(ctx context.Context, tokenHash string, now time.Time, perMinute int) (feedback.Link, error) {
	window := now.Unix() / 60
	count := map[string]types.AttributeValue{":w": num(window), ":one": num(1), ":lim": num(int64(perMinute))}
	reset := map[string]types.AttributeValue{":w": num(window), ":one": num(1)}
	for attempt := 0; attempt < 3; attempt++ {
		it, err := s.updateLink(ctx, tokenHash, "SET n = n + :one", "attribute_exists(PK) AND w = :w AND n < :lim", count)
		if err == nil {
			return it.toLink(), nil
		}
		var failed *types.ConditionalCheckFailedException
		if !errors.As(err, &failed) {
			return feedback.Link{}, err
		}
		var cur linkItem
		ok, err := s.t.get(ctx, feedbackLinkPK(tokenHash), skFeedbackLink, &cur)
		switch {
		case err != nil:
			return feedback.Link{}, err
		case !ok:
			return feedback.Link{}, errs.NotFound("no such feedback link")
		case cur.Window == window:
			return feedback.Link{}, errs.Errorf(errs.CodeRateLimited, "this feedback link has had %d requests this minute; try again in a minute", perMinute)
		}
		it, err = s.updateLink(ctx, tokenHash, "SET w = :w, n = :one", "attribute_exists(PK) AND w < :w", reset)
		if err == nil {
			return it.toLink(), nil
		}
		if !errors.As(err, &failed) {
			return feedback.Link{}, err
		}
		// Another request opened the window first: count in it.
	}
	return feedback.Link{}, errs.Unavailable("feedback link is busy; retry")
}

func (s *LinkStore) updateLink(ctx context.Context, tokenHash, update, cond string, vals map[string]types.AttributeValue) (linkItem, error) {
	res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(feedbackLinkPK(tokenHash), skFeedbackLink),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return linkItem{}, err
	}
	if err != nil {
		return linkItem{}, storageErr("use feedback link", err)
	}
	var it linkItem
	if err := attributevalue.UnmarshalMap(res.Attributes, &it); err != nil {
		return linkItem{}, fmt.Errorf("decode feedback link: %w", err)
	}
	return it, nil
}

// Completions returns the newest llm spans linked to a prompt (at most limit), newest first by
// start: one Query of the prompt's completions partition (the newest batches, until they list
// limit spans) and one BatchGetItem per 100 of their spans' summaries.
func (s *TraceStore) Completions(ctx context.Context, projectID, slug string, limit int) ([]trace.Summary, error) {
	// Every span of a batch is a candidate: a batch's spans are not in start order.
	ids, err := newestCompletions(ctx, s.t, projectID, slug, limit)
	if err != nil {
		return nil, err
	}
	sums, err := s.Summaries(ctx, projectID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]trace.Summary, 0, len(sums))
	for _, sum := range sums {
		if sum.PromptSlug == slug { // not a span written again naming another prompt
			out = append(out, sum)
		}
	}
	slices.SortFunc(out, func(a, b trace.Summary) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), strings.Compare(a.SpanID, b.SpanID))
	})
	return out[:min(len(out), limit)], nil
}

// newestCompletions reads the ids of a prompt's completions from the newest batches of its
// completions partition (one Query page, unless batches repeat spans) until they list limit
// spans; within a batch, by id (a binary set has no order of its own). It may return more
// than limit: the whole of the last batch read.
func newestCompletions(ctx context.Context, t *Table, projectID, slug string, limit int) ([]string, error) {
	in, err := t.queryInput(partition(completionsPK(projectID, slug)), queryOpts{reverse: true, limit: int32(limit)})
	if err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	p := dynamodb.NewQueryPaginator(t.api, in)
	for p.HasMorePages() && len(ids) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, storageErr("query completions", err)
		}
		for _, raw := range page.Items {
			var it completionItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return nil, fmt.Errorf("decode completions: %w", err)
			}
			batch := memberIDs(memberItem{Spans: it.Spans})
			for _, id := range batch {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return ids, nil
}
