package ddb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/optimize"
)

// OptimizationStore keeps optimization runs (P#<project>#OR#<run> / RUN, listed newest first
// per target through GSI1), their deploy receipts (RECEIPT#<sha256(token)> in the run's
// partition, expiring) and the cache of model answers that lets a re-executed step replay
// instead of paying again (P#<project>#MC#<request hash> / CALL).
//
// A run's record carries a version, and every update is conditioned on the version it read:
// two workers (a resumed one and one that was thought dead), or a worker and a cancel, never
// both win.
type OptimizationStore struct{ t *Table }

// NewOptimizationStore returns the optimization store in t.
func NewOptimizationStore(t *Table) *OptimizationStore { return &OptimizationStore{t: t} }

type runItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	GSI2PK    string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK    string `dynamodbav:"GSI2SK,omitempty"`
	ID        string `dynamodbav:"id"`
	Status    string `dynamodbav:"st"`
	Requested string `dynamodbav:"rq"`
	Type      string `dynamodbav:"ty"`
	// The rest is JSON: read together, never queried.
	Target    string `dynamodbav:"tg"`
	Config    string `dynamodbav:"cfg"`
	Progress  string `dynamodbav:"pr"`
	Baseline  string `dynamodbav:"bl"`
	Candidate string `dynamodbav:"cand,omitempty"`
	Report    string `dynamodbav:"rep,omitempty"`
	Sims      string `dynamodbav:"sim,omitempty"`
	Error     string `dynamodbav:"err,omitempty"`
	Deployed  string `dynamodbav:"dv,omitempty"`
	Checkpt   string `dynamodbav:"ck,omitempty"`
	Created   int64  `dynamodbav:"ca"`
	CreatedBy string `dynamodbav:"cb"`
	Updated   int64  `dynamodbav:"ua"`
	Started   int64  `dynamodbav:"sa,omitempty"`
	Finished  int64  `dynamodbav:"fa,omitempty"`
	Version   int    `dynamodbav:"v"`
	Resumes   int    `dynamodbav:"rs,omitempty"`
}

func targetID(t optimize.Target) string {
	if t.Kind == optimize.TargetJudge {
		return t.JudgeID
	}
	return t.Slug
}

func toRunItem(r optimize.Run) (runItem, error) {
	it := runItem{
		PK: optimizationRunPK(r.ProjectID, r.ID), SK: skRun,
		GSI1PK: optimizationRunsGSI1PK(r.ProjectID, r.Target.Kind, targetID(r.Target)), GSI1SK: timeIndexSK(r.CreatedAt, r.ID),
		ID: r.ID, Status: r.Status, Requested: r.Requested, Type: r.Type, Error: r.Error, Deployed: r.DeployedVersionID, Checkpt: r.Checkpoint, Resumes: r.Resumes,
		Created: r.CreatedAt.UnixMicro(), CreatedBy: r.CreatedBy, Updated: r.UpdatedAt.UnixMicro(), Version: r.Version,
	}
	if !optimize.Final(r.Status) {
		it.GSI2PK, it.GSI2SK = activeRunsGSI2PK, timeIndexSK(r.UpdatedAt, r.ProjectID+"#"+r.ID)
	}
	if r.StartedAt != nil {
		it.Started = r.StartedAt.UnixMicro()
	}
	if r.FinishedAt != nil {
		it.Finished = r.FinishedAt.UnixMicro()
	}
	for _, f := range []struct {
		dst *string
		v   any
		set bool
	}{
		{&it.Target, r.Target, true}, {&it.Config, r.Config, true}, {&it.Progress, r.Progress, true},
		{&it.Baseline, r.Baseline, true}, {&it.Candidate, r.Candidate, r.Candidate != nil}, {&it.Report, r.Report, r.Report != nil},
		{&it.Sims, r.Simulations, len(r.Simulations) > 0},
	} {
		if !f.set {
			continue
		}
		b, err := json.Marshal(f.v)
		if err != nil {
			return runItem{}, fmt.Errorf("encode run %s: %w", r.ID, err)
		}
		*f.dst = string(b)
	}
	return it, nil
}

func (it runItem) toRun(projectID string) (optimize.Run, error) {
	r := optimize.Run{
		ID: it.ID, ProjectID: projectID, Status: it.Status, Requested: it.Requested, Type: it.Type, Error: it.Error,
		DeployedVersionID: it.Deployed, Checkpoint: it.Checkpt, Resumes: it.Resumes, CreatedAt: time.UnixMicro(it.Created).UTC(), CreatedBy: it.CreatedBy,
		UpdatedAt: time.UnixMicro(it.Updated).UTC(), Version: it.Version,
	}
	if it.Started != 0 {
		t := time.UnixMicro(it.Started).UTC()
		r.StartedAt = &t
	}
	if it.Finished != 0 {
		t := time.UnixMicro(it.Finished).UTC()
		r.FinishedAt = &t
	}
	for _, f := range []struct {
		src string
		dst any
	}{
		{it.Target, &r.Target}, {it.Config, &r.Config}, {it.Progress, &r.Progress}, {it.Baseline, &r.Baseline},
		{it.Candidate, &r.Candidate}, {it.Report, &r.Report}, {it.Sims, &r.Simulations},
	} {
		if f.src == "" {
			continue
		}
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return optimize.Run{}, fmt.Errorf("decode run %s: %w", it.ID, err)
		}
	}
	return r, nil
}

// CreateRun stores a new run (version 1). Cost: one conditional PutItem.
func (s *OptimizationStore) CreateRun(ctx context.Context, r optimize.Run) (optimize.Run, error) {
	r.Version = 1
	it, err := toRunItem(r)
	if err != nil {
		return optimize.Run{}, err
	}
	item, err := marshal(it)
	if err != nil {
		return optimize.Run{}, err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if err != nil {
		return optimize.Run{}, storageErr("create optimization run", err)
	}
	return r, nil
}

// Run reads a run; errs.NotFound when the project has no such run. Cost: one GetItem.
func (s *OptimizationStore) Run(ctx context.Context, projectID, runID string) (optimize.Run, error) {
	var it runItem
	ok, err := s.t.get(ctx, optimizationRunPK(projectID, runID), skRun, &it)
	if err != nil {
		return optimize.Run{}, err
	}
	if !ok {
		return optimize.Run{}, errs.NotFound("optimization run %s not found", runID)
	}
	return it.toRun(projectID)
}

// Runs lists the runs of target, newest first, skipping offset and returning at most limit.
// Errors: errs.NotFound when the project has no such prompt or judge, as the target's other
// routes answer. A run is made only of a target that exists, and prompts and judges are never
// deleted (only with their project), so a run read proves the target; only a target of no runs
// at all is looked up. Cost: one GSI1 Query per 1 MB of the runs read (offset + limit of
// them), and one GetItem of the prompt's or judge's record when the Query finds no run.
func (s *OptimizationStore) Runs(ctx context.Context, projectID string, target optimize.Target, limit, offset int) ([]optimize.Run, error) {
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(optimizationRunsGSI1PK(projectID, target.Kind, targetID(target))))
	in, err := s.t.queryInput(cond, queryOpts{index: infra.IndexGSI1, reverse: true, limit: int32(min(offset+limit, 1000))})
	if err != nil {
		return nil, err
	}
	var out []optimize.Run
	seen := 0
	p := dynamodb.NewQueryPaginator(s.t.api, in)
	for p.HasMorePages() && len(out) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, storageErr("list optimization runs", err)
		}
		for _, raw := range page.Items {
			seen++
			if seen <= offset || len(out) == limit {
				continue
			}
			var it runItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return nil, fmt.Errorf("decode optimization run: %w", err)
			}
			r, err := it.toRun(projectID)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	if seen == 0 {
		if err := s.targetExists(ctx, projectID, target); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// targetExists returns nil when the project has target's prompt or judge, else errs.NotFound,
// with one GetItem of its record that returns the key alone.
func (s *OptimizationStore) targetExists(ctx context.Context, projectID string, target optimize.Target) error {
	pk, sk, notFound := promptPK(projectID, target.Slug), skPrompt, promptNotFound(target.Slug)
	if target.Kind == optimize.TargetJudge {
		pk, sk, notFound = judgePK(projectID, target.JudgeID), skJudge, judgeNotFound(target.JudgeID)
	}
	res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.t.name, Key: key(pk, sk), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(infra.AttrPK),
	})
	if err != nil {
		return storageErr("get the target of optimization runs", err)
	}
	if res.Item == nil {
		return notFound
	}
	return nil
}

// ErrRunChanged is the error (errors.Is) of an update whose run was written by someone else
// since it was read (another worker, a cancel): the caller reads it again and decides.
var ErrRunChanged = errs.Conflict("the optimization run changed since it was read")

// UpdateRun writes r if the stored run still has r.Version, and returns it with the next
// version. Cost: one conditional PutItem. Errors: ErrRunChanged (wrapped) when the stored run
// has another version or is gone.
func (s *OptimizationStore) UpdateRun(ctx context.Context, r optimize.Run) (optimize.Run, error) {
	prev := r.Version
	r.Version++
	it, err := toRunItem(r)
	if err != nil {
		return optimize.Run{}, err
	}
	item, err := marshal(it)
	if err != nil {
		return optimize.Run{}, err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.t.name, Item: item, ConditionExpression: aws.String("v = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(int64(prev))},
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return optimize.Run{}, fmt.Errorf("update run %s: %w", r.ID, ErrRunChanged)
	case err != nil:
		return optimize.Run{}, storageErr("update optimization run", err)
	}
	return r, nil
}

type receiptItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Run        string `dynamodbav:"run"`
	Candidate  string `dynamodbav:"ch"`
	Production int    `dynamodbav:"pv"`
	Template   string `dynamodbav:"th,omitempty"`
	Expires    int64  `dynamodbav:"ex"`
	TTL        int64  `dynamodbav:"ttl"`
}

// PutReceipt stores a receipt under the SHA-256 of its token, expiring at r.ExpiresAt (the
// item itself lives a day longer, for DynamoDB's TTL is not punctual: reads check ExpiresAt).
// Cost: one PutItem.
func (s *OptimizationStore) PutReceipt(ctx context.Context, projectID, tokenHash string, r optimize.Receipt) error {
	item, err := marshal(receiptItem{
		PK: optimizationRunPK(projectID, r.RunID), SK: receiptSK(tokenHash), Run: r.RunID, Candidate: r.CandidateHash,
		Production: r.ProductionVersion, Template: r.TemplateHash, Expires: r.ExpiresAt.UnixMicro(), TTL: r.ExpiresAt.Add(24 * time.Hour).Unix(),
	})
	if err != nil {
		return err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return storageErr("put deploy receipt", err)
	}
	return nil
}

// Receipt reads the receipt of run runID stored under tokenHash; false when there is none.
// Cost: one GetItem.
func (s *OptimizationStore) Receipt(ctx context.Context, projectID, runID, tokenHash string) (optimize.Receipt, bool, error) {
	var it receiptItem
	ok, err := s.t.get(ctx, optimizationRunPK(projectID, runID), receiptSK(tokenHash), &it)
	if err != nil || !ok {
		return optimize.Receipt{}, false, err
	}
	return optimize.Receipt{RunID: it.Run, CandidateHash: it.Candidate, ProductionVersion: it.Production, TemplateHash: it.Template,
		ExpiresAt: time.UnixMicro(it.Expires).UTC()}, true, nil
}

// CallCacheTTL is how long a cached model answer is kept: far longer than any run.
const CallCacheTTL = 7 * 24 * time.Hour

type callItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Answer []byte `dynamodbav:"a"`
	TTL    int64  `dynamodbav:"ttl"`
}

// CachedCall reads the answer cached for a request hash of a project; nil when there is none.
// Cost: one GetItem.
func (s *OptimizationStore) CachedCall(ctx context.Context, projectID, requestHash string) ([]byte, error) {
	var it callItem
	ok, err := s.t.get(ctx, modelCallPK(projectID, requestHash), skModelCall, &it)
	if err != nil || !ok {
		return nil, err
	}
	return it.Answer, nil
}

// CacheCall stores the answer to a request hash of a project (the encoded answer, at most
// 350 KB: larger ones are not cached). Cost: one PutItem.
func (s *OptimizationStore) CacheCall(ctx context.Context, projectID, requestHash string, answer []byte, now time.Time) error {
	if len(answer) > 350<<10 {
		return nil
	}
	item, err := marshal(callItem{PK: modelCallPK(projectID, requestHash), SK: skModelCall, Answer: answer, TTL: now.Add(CallCacheTTL).Unix()})
	if err != nil {
		return err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return storageErr("cache model call", err)
	}
	return nil
}

// StaleRuns lists the runs of every project that are not over and were last written before
// before, oldest first, at most limit. Cost: one Query of GSI2 (keys only) per 1 MB.
func (s *OptimizationStore) StaleRuns(ctx context.Context, before time.Time, limit int) ([]optimize.RunRef, error) {
	cond := expression.Key(infra.AttrGSI2PK).Equal(expression.Value(activeRunsGSI2PK)).
		And(expression.Key(infra.AttrGSI2SK).LessThan(expression.Value(timeIndexSK(before, ""))))
	in, err := s.t.queryInput(cond, queryOpts{index: infra.IndexGSI2, limit: int32(limit)})
	if err != nil {
		return nil, err
	}
	var out []optimize.RunRef
	p := dynamodb.NewQueryPaginator(s.t.api, in)
	for p.HasMorePages() && len(out) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, storageErr("list stale optimization runs", err)
		}
		for _, raw := range page.Items {
			var k struct {
				SK string `dynamodbav:"GSI2SK"`
			}
			if err := attributevalue.UnmarshalMap(raw, &k); err != nil {
				return nil, fmt.Errorf("decode stale run: %w", err)
			}
			_, ref, _ := strings.Cut(k.SK, "#")
			projectID, runID, ok := strings.Cut(ref, "#")
			if ok && len(out) < limit {
				out = append(out, optimize.RunRef{ProjectID: projectID, RunID: runID})
			}
		}
	}
	return out, nil
}
