package ddb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// JudgeStore keeps judges (P#<project>#J#<judge> / JUDGE, listed through GSI1) and their
// evaluations (P#<project>#S#<span> / EVAL#<judge>, beside the span's summary; listed by judge
// through GSI1 and by trace through GSI3). A judge's evaluation_count and pass count are
// updated in the same transaction as the evaluations that change them, so they are exact
// however often an evaluation is written again.
type JudgeStore struct {
	t *Table
	// maxScan is judge.MaxScan, smaller in tests.
	maxScan int
}

var _ judge.Store = (*JudgeStore)(nil)

// NewJudgeStore returns the judge store in t.
func NewJudgeStore(t *Table) *JudgeStore { return &JudgeStore{t: t, maxScan: judge.MaxScan} }

type judgeItem struct {
	PK          string            `dynamodbav:"PK"`
	SK          string            `dynamodbav:"SK"`
	GSI1PK      string            `dynamodbav:"GSI1PK"`
	GSI1SK      string            `dynamodbav:"GSI1SK"`
	ID          string            `dynamodbav:"id"`
	Name        string            `dynamodbav:"name"`
	Template    string            `dynamodbav:"template"`
	Type        string            `dynamodbav:"type"`
	ScoreMin    *float64          `dynamodbav:"score_min,omitempty"`
	ScoreMax    *float64          `dynamodbav:"score_max,omitempty"`
	Pass        *float64          `dynamodbav:"pass_threshold,omitempty"`
	SampleRate  float64           `dynamodbav:"sample_rate"`
	Temperature float64           `dynamodbav:"temperature"`
	Model       string            `dynamodbav:"model,omitempty"`
	TagFilter   *judge.TagFilter  `dynamodbav:"tag_filter,omitempty"`
	Target      string            `dynamodbav:"target_prompt,omitempty"`
	Criteria    []judge.Criterion `dynamodbav:"criteria"`
	Inferred    bool              `dynamodbav:"criteria_inferred"`
	Paused      bool              `dynamodbav:"paused"`
	Backfill    int               `dynamodbav:"backfill"`
	TV          int               `dynamodbav:"tv"`
	TRun        string            `dynamodbav:"trun,omitempty"`
	Prompts     []string          `dynamodbav:"prompts,stringset,omitempty"`
	// Counted is when the judge's hour counters (judgeHourSK) start to count every evaluation,
	// in µs: 0 for a judge created with them; absent for a judge of an earlier release until
	// its first evaluation write after the upgrade sets it (countedFrom).
	Counted     *int64 `dynamodbav:"hc,omitempty"`
	Evaluations int64  `dynamodbav:"ec"`
	Passed      int64  `dynamodbav:"pc"`
	Created     int64  `dynamodbav:"ca"`
	CreatedBy   string `dynamodbav:"created_by"`
	Updated     int64  `dynamodbav:"ua"`
	UpdatedBy   string `dynamodbav:"updated_by"`
}

// judgeDefinition lists the attributes UpdateJudge writes: everything but keys, counters,
// links and creation.
var judgeDefinition = []string{
	"name", "template", "type", "score_min", "score_max", "pass_threshold", "sample_rate", "temperature",
	"model", "tag_filter", "target_prompt", "criteria", "criteria_inferred", "paused", "backfill", "ua", "updated_by",
	"tv", "trun",
}

func toJudgeItem(j judge.Judge) judgeItem {
	return judgeItem{
		PK: judgePK(j.ProjectID, j.ID), SK: skJudge,
		GSI1PK: judgesGSI1PK(j.ProjectID), GSI1SK: timeIndexSK(j.CreatedAt, j.ID),
		ID: j.ID, Name: j.Name, Template: j.Template, Type: j.EvaluationType,
		ScoreMin: j.ScoreMin, ScoreMax: j.ScoreMax, Pass: j.PassThreshold, SampleRate: j.SampleRate,
		Temperature: j.Temperature, Model: j.Model, TagFilter: j.TagFilter, Target: j.TargetPrompt,
		Criteria: j.Criteria, Inferred: j.CriteriaInferred, Paused: j.Paused, Backfill: j.Backfill,
		TV: j.TemplateVersion, TRun: j.TemplateRun,
		Prompts: j.LinkedPrompts, Counted: new(int64), Evaluations: j.EvaluationCount, Passed: j.PassCount,
		Created: j.CreatedAt.UnixMicro(), CreatedBy: j.CreatedBy, Updated: j.UpdatedAt.UnixMicro(), UpdatedBy: j.UpdatedBy,
	}
}

func (it judgeItem) toJudge(projectID string) judge.Judge {
	prompts := slices.Clone(it.Prompts)
	slices.Sort(prompts)
	return judge.Judge{
		ID: it.ID, ProjectID: projectID, Name: it.Name, Template: it.Template, EvaluationType: it.Type,
		ScoreMin: it.ScoreMin, ScoreMax: it.ScoreMax, PassThreshold: it.Pass, SampleRate: it.SampleRate,
		Temperature: it.Temperature, Model: it.Model, TagFilter: it.TagFilter, TargetPrompt: it.Target,
		Criteria: it.Criteria, CriteriaInferred: it.Inferred, Paused: it.Paused, Backfill: it.Backfill,
		TemplateVersion: it.TV, TemplateRun: it.TRun,
		LinkedPrompts: prompts, EvaluationCount: it.Evaluations, PassCount: it.Passed,
		CreatedAt: time.UnixMicro(it.Created).UTC(), CreatedBy: it.CreatedBy,
		UpdatedAt: time.UnixMicro(it.Updated).UTC(), UpdatedBy: it.UpdatedBy,
	}
}

// templateVersionItem is one of a judge's templates (P#<project>#J#<judge> / V#<n>).
type templateVersionItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Version   int    `dynamodbav:"n"`
	Template  string `dynamodbav:"template"`
	Created   int64  `dynamodbav:"ca"`
	CreatedBy string `dynamodbav:"created_by"`
	Source    string `dynamodbav:"src"`
	Run       string `dynamodbav:"run,omitempty"`
}

// versionAction records j's current template as version j.TemplateVersion, once: an update
// that leaves the template as it was finds the version written, with the same template, and
// changes nothing (if_not_exists); one that finds another template there fails.
func (s *JudgeStore) versionAction(j judge.Judge, source string) (types.TransactWriteItem, error) {
	if j.TemplateRun != "" && source == judge.SourceEdit {
		source = judge.SourceOptimization
	}
	up := expression.Set(expression.Name("n"), expression.Value(j.TemplateVersion)).
		Set(expression.Name("template"), expression.Value(j.Template)).
		Set(expression.Name("ca"), ifNotExists("ca", j.UpdatedAt.UnixMicro())).
		Set(expression.Name("created_by"), ifNotExists("created_by", j.UpdatedBy)).
		Set(expression.Name("src"), ifNotExists("src", source))
	if j.TemplateRun != "" {
		up = up.Set(expression.Name("run"), ifNotExists("run", j.TemplateRun))
	}
	cond := expression.AttributeNotExists(expression.Name(infra.AttrPK)).
		Or(expression.Name("template").Equal(expression.Value(j.Template)))
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build template version: %w", err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.t.name, Key: key(judgePK(j.ProjectID, j.ID), versionSK(j.TemplateVersion)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// CreateJudge implements judge.Store: one transaction of the judge and its template version.
func (s *JudgeStore) CreateJudge(ctx context.Context, j judge.Judge) error {
	item, err := marshal(toJudgeItem(j))
	if err != nil {
		return err
	}
	version, err := s.versionAction(j, judge.SourceCreate)
	if err != nil {
		return err
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		version,
	}})
	if err != nil {
		return storageErr("put judge", err)
	}
	return nil
}

// TemplateVersions implements judge.Store with one Query of the judge's partition, newest
// first. A judge of an earlier release, which recorded none, has its template as version 1.
func (s *JudgeStore) TemplateVersions(ctx context.Context, projectID, judgeID string) ([]judge.TemplateVersion, error) {
	j, err := s.Judge(ctx, projectID, judgeID)
	if err != nil {
		return nil, err
	}
	cond := expression.Key(infra.AttrPK).Equal(expression.Value(judgePK(projectID, judgeID))).
		And(expression.Key(infra.AttrSK).BeginsWith(prefixVersion))
	var items []templateVersionItem
	if err := s.t.query(ctx, cond, queryOpts{reverse: true}, decodeInto(&items)); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return []judge.TemplateVersion{{Version: 1, Template: j.Template, CreatedAt: j.CreatedAt, CreatedBy: j.CreatedBy, Source: judge.SourceCreate}}, nil
	}
	out := make([]judge.TemplateVersion, len(items))
	for i, it := range items {
		out[i] = judge.TemplateVersion{Version: it.Version, Template: it.Template, CreatedAt: time.UnixMicro(it.Created).UTC(),
			CreatedBy: it.CreatedBy, Source: it.Source, RunID: it.Run}
	}
	return out, nil
}

// UpdateJudge implements judge.Store: one transaction of the judge's update, conditioned on
// prev, and of its template version (written once per version).
func (s *JudgeStore) UpdateJudge(ctx context.Context, j judge.Judge, prev time.Time) error {
	item, err := marshal(toJudgeItem(j))
	if err != nil {
		return err
	}
	var up expression.UpdateBuilder
	for _, name := range judgeDefinition {
		if v, ok := item[name]; ok {
			up = up.Set(expression.Name(name), expression.Value(v))
		} else {
			up = up.Remove(expression.Name(name))
		}
	}
	cond := expression.Name("ua").Equal(expression.Value(prev.UnixMicro()))
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build judge update: %w", err)
	}
	actions := []types.TransactWriteItem{{Update: &types.Update{
		TableName: &s.t.name, Key: key(judgePK(j.ProjectID, j.ID), skJudge),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}}
	if j.TemplateVersion > 0 {
		version, err := s.versionAction(j, judge.SourceEdit)
		if err != nil {
			return err
		}
		actions = append(actions, version)
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	if codes := cancellationCodes(err); len(codes) > 0 {
		return errs.Conflict("judge %s changed while it was being updated", j.ID)
	}
	if err != nil {
		return storageErr("update judge", err)
	}
	return nil
}

func judgeNotFound(judgeID string) error { return errs.NotFound("judge %q not found", judgeID) }

// Judge implements judge.Store.
func (s *JudgeStore) Judge(ctx context.Context, projectID, judgeID string) (judge.Judge, error) {
	var it judgeItem
	ok, err := s.t.get(ctx, judgePK(projectID, judgeID), skJudge, &it)
	switch {
	case err != nil:
		return judge.Judge{}, err
	case !ok:
		return judge.Judge{}, judgeNotFound(judgeID)
	}
	return it.toJudge(projectID), nil
}

// Judges implements judge.Store with one Query of GSI1 (paginated).
func (s *JudgeStore) Judges(ctx context.Context, projectID string) ([]judge.Judge, error) {
	var items []judgeItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(judgesGSI1PK(projectID)))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&items)); err != nil {
		return nil, err
	}
	out := make([]judge.Judge, len(items))
	for i, it := range items {
		out[i] = it.toJudge(projectID)
	}
	return out, nil
}

// LinkPrompt implements judge.Store. Linking checks in the same transaction that the prompt
// exists; unlinking does not, so that a link to a prompt that is gone can still be removed.
func (s *JudgeStore) LinkPrompt(ctx context.Context, projectID, judgeID, slug string, link bool) (judge.Judge, error) {
	set := &types.AttributeValueMemberSS{Value: []string{slug}}
	judgeKey := key(judgePK(projectID, judgeID), skJudge)
	if !link {
		res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.t.name, Key: judgeKey,
			UpdateExpression:          aws.String("DELETE prompts :p"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": set},
			ReturnValues:              types.ReturnValueAllNew,
		})
		var failed *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &failed):
			return judge.Judge{}, judgeNotFound(judgeID)
		case err != nil:
			return judge.Judge{}, storageErr("unlink prompt", err)
		}
		var it judgeItem
		if err := attributevalue.UnmarshalMap(res.Attributes, &it); err != nil {
			return judge.Judge{}, fmt.Errorf("decode judge: %w", err)
		}
		return it.toJudge(projectID), nil
	}
	_, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: &s.t.name, Key: key(promptPK(projectID, slug), skPrompt),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		{Update: &types.Update{
			TableName: &s.t.name, Key: judgeKey,
			UpdateExpression:          aws.String("ADD prompts :p"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": set},
		}},
	}})
	if codes := cancellationCodes(err); len(codes) == 2 {
		switch {
		case codes[0] == "ConditionalCheckFailed":
			return judge.Judge{}, promptNotFound(slug)
		case codes[1] == "ConditionalCheckFailed":
			return judge.Judge{}, judgeNotFound(judgeID)
		}
	}
	if err != nil {
		return judge.Judge{}, storageErr("link prompt", err)
	}
	return s.Judge(ctx, projectID, judgeID)
}
