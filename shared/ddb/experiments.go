package ddb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
)

type experimentItem struct {
	PK, SK           string
	GSI1PK, GSI1SK   string
	ID               string    `dynamodbav:"id"`
	Name             string    `dynamodbav:"name"`
	Description      *string   `dynamodbav:"description"`
	Alias            *string   `dynamodbav:"alias"`
	Parameters       string    `dynamodbav:"parameters,omitempty"`
	DatasetID        string    `dynamodbav:"dataset_id"`
	DatasetName      string    `dynamodbav:"dataset_name"`
	DatasetVersionID string    `dynamodbav:"dataset_version_id"`
	VersionNumber    int       `dynamodbav:"version_number"`
	CreatedAt        time.Time `dynamodbav:"created_at"`
	// Judges are the judges attached (AttachJudge): a string set, which a result's write
	// checks (PutResult).
	Judges []string `dynamodbav:"judges,stringset,omitempty"`
}

func experimentGSI1SK(e dataset.Experiment) string {
	return e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + e.ID
}

func (it experimentItem) toExperiment(projectID string) dataset.Experiment {
	var params json.RawMessage
	if it.Parameters != "" {
		params = json.RawMessage(it.Parameters)
	}
	return dataset.Experiment{
		ID: it.ID, ProjectID: projectID, Name: it.Name, Description: it.Description, Alias: it.Alias, Parameters: params,
		DatasetID: it.DatasetID, DatasetName: it.DatasetName, DatasetVersionID: it.DatasetVersionID, VersionNumber: it.VersionNumber, CreatedAt: it.CreatedAt,
		Judges: it.Judges,
	}
}

// resultItem is a result (R set) or an evaluation (E set) of a result: they share the range of
// their run so that a page of results reads their evaluations in the same Query.
type resultItem struct {
	PK, SK        string
	Kind          string  `dynamodbav:"kind"`
	Row           string  `dynamodbav:"row"`
	Run           int     `dynamodbav:"run"`
	Result        string  `dynamodbav:"result,omitempty"`
	ResultType    string  `dynamodbav:"result_type,omitempty"`
	TraceID       *string `dynamodbav:"trace_id,omitempty"`
	EvaluatorID   string  `dynamodbav:"evaluator_id,omitempty"`
	EvaluatorName string  `dynamodbav:"evaluator_name,omitempty"`
	Value         string  `dynamodbav:"value,omitempty"`
	Type          string  `dynamodbav:"type,omitempty"`
	Reason        *string `dynamodbav:"reason,omitempty"`
	// Tallied is true on an evaluation counted in its evaluator's aggregate (every one
	// written since aggregates are kept): replacing it adjusts the aggregate by the difference.
	Tallied   bool      `dynamodbav:"tallied,omitempty"`
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// aggregateItem is an evaluator's tally in one run of an experiment (dataset.Tally).
type aggregateItem struct {
	Kind          string  `dynamodbav:"kind"`
	EvaluatorID   string  `dynamodbav:"evaluator_id"`
	EvaluatorName string  `dynamodbav:"evaluator_name"`
	Run           int     `dynamodbav:"run"`
	Booleans      int     `dynamodbav:"booleans"`
	Passed        int     `dynamodbav:"passed"`
	Numbers       int     `dynamodbav:"numbers"`
	Sum           float64 `dynamodbav:"sum"`
}

// metaItem is an evaluator, a run, a column evaluation or a metric of an experiment.
type metaItem struct {
	PK, SK      string
	Kind        string    `dynamodbav:"kind"`
	ID          string    `dynamodbav:"id,omitempty"`
	Name        string    `dynamodbav:"name,omitempty"`
	Mode        string    `dynamodbav:"mode,omitempty"`
	Description *string   `dynamodbav:"description,omitempty"`
	JudgeID     string    `dynamodbav:"judge_id,omitempty"`
	Run         int       `dynamodbav:"run"`
	Results     string    `dynamodbav:"results,omitempty"`
	Count       int       `dynamodbav:"result_count"`
	CreatedAt   time.Time `dynamodbav:"created_at"`
}

const (
	kindResult     = "R"
	kindEvaluation = "E"
	kindEvaluator  = "EV"
	kindRun        = "RUN"
	kindAggregate  = "AGG"
)

// CreateExperiment implements dataset.ExperimentStore: one PutItem.
func (s *DatasetStore) CreateExperiment(ctx context.Context, e dataset.Experiment) error {
	item, err := marshal(experimentItem{
		PK: experimentPK(e.ProjectID, e.ID), SK: skExperiment, GSI1PK: datasetExperimentsGSI1PK(e.ProjectID, e.DatasetID), GSI1SK: experimentGSI1SK(e),
		ID: e.ID, Name: e.Name, Description: e.Description, Alias: e.Alias, Parameters: string(e.Parameters), DatasetID: e.DatasetID,
		DatasetName: e.DatasetName, DatasetVersionID: e.DatasetVersionID, VersionNumber: e.VersionNumber, CreatedAt: e.CreatedAt,
	})
	if err != nil {
		return err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}); err != nil {
		return storageErr("put experiment", err)
	}
	return nil
}

// Experiment implements dataset.ExperimentStore: one GetItem.
func (s *DatasetStore) Experiment(ctx context.Context, projectID, id string) (dataset.Experiment, error) {
	var it experimentItem
	ok, err := s.t.get(ctx, experimentPK(projectID, id), skExperiment, &it)
	if err != nil {
		return dataset.Experiment{}, err
	}
	if !ok {
		return dataset.Experiment{}, errs.NotFound("experiment %s not found", id)
	}
	return it.toExperiment(projectID), nil
}

// Experiments implements dataset.ExperimentStore: one Query of GSI1, newest first.
func (s *DatasetStore) Experiments(ctx context.Context, projectID, datasetID, cursor string, limit int) ([]dataset.Experiment, string, error) {
	gpk := datasetExperimentsGSI1PK(projectID, datasetID)
	var items []experimentItem
	next, err := s.t.page(ctx, partitionOf(infra.AttrGSI1PK, gpk), queryOpts{index: infra.IndexGSI1, reverse: true, limit: int32(limit)}, cursor,
		func(sk string) map[string]types.AttributeValue {
			_, id, _ := strings.Cut(sk, "#")
			k := key(experimentPK(projectID, id), skExperiment)
			k[infra.AttrGSI1PK] = &types.AttributeValueMemberS{Value: gpk}
			k[infra.AttrGSI1SK] = &types.AttributeValueMemberS{Value: sk}
			return k
		}, infra.AttrGSI1SK, decodeInto(&items))
	if err != nil {
		return nil, "", err
	}
	out := make([]dataset.Experiment, len(items))
	for i, it := range items {
		out[i] = it.toExperiment(projectID)
	}
	return out, next, nil
}

// exists is a transaction's check that the item (pk, sk) exists.
func (s *DatasetStore) exists(pk, sk string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.t.name, Key: key(pk, sk), ConditionExpression: aws.String("attribute_exists(PK)"),
	}}
}

// PutResult implements dataset.ExperimentStore: one TransactWriteItems (the experiment's
// check, the new result, its run's count) for a new result; a result written again (the
// transaction's put fails its condition) is replaced by one transaction more and counted once.
//
// The experiment's check also says which judges are attached: it holds only while the
// experiment's judges are those the writer knows (none at first). When it fails on judges,
// its answer (ReturnValuesOnConditionCheckFailure) names them, and the write is tried again
// with them. So the judges returned are exactly those attached when the result was written:
// a judge attached after is attached after the result was stored, and its own evaluation of
// the experiment's results finds it. An experiment without judges costs no request more.
func (s *DatasetStore) PutResult(ctx context.Context, projectID string, r dataset.Result) ([]string, error) {
	pk := experimentPK(projectID, r.ExperimentID)
	item, err := marshal(resultItem{
		PK: pk, SK: resultSK(r.Run, r.RowID), Kind: kindResult, Row: r.RowID, Run: r.Run, Result: r.Result,
		ResultType: r.ResultType, TraceID: r.TraceID, CreatedAt: r.CreatedAt,
	})
	if err != nil {
		return nil, err
	}
	count, err := expression.NewBuilder().WithUpdate(expression.Add(expression.Name("result_count"), expression.Value(1)).
		Set(expression.Name("kind"), expression.Value(kindRun)).Set(expression.Name("run"), expression.Value(r.Run))).Build()
	if err != nil {
		return nil, fmt.Errorf("build run count: %w", err)
	}
	var (
		judges  []string
		replace bool
	)
	// Each failed attempt learns the judges attached; a judge attached between two attempts
	// takes one more, and attaching is rare, so a few attempts suffice.
	for range 4 {
		check, err := s.judgesCheck(pk, judges)
		if err != nil {
			return nil, err
		}
		writes := []types.TransactWriteItem{check}
		if replace {
			writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: &s.t.name, Item: item}})
		} else {
			writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
				types.TransactWriteItem{Update: &types.Update{
					TableName: &s.t.name, Key: key(pk, runSK(r.Run)), UpdateExpression: count.Update(),
					ExpressionAttributeNames: count.Names(), ExpressionAttributeValues: count.Values(),
				}})
		}
		_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
		if old, failed := failedCondition(err, 0); failed {
			if old == nil {
				return nil, errs.NotFound("experiment %s not found", r.ExperimentID)
			}
			var it experimentItem
			if err := attributevalue.UnmarshalMap(old, &it); err != nil {
				return nil, fmt.Errorf("decode experiment: %w", err)
			}
			judges = it.Judges
			continue
		}
		if _, failed := failedCondition(err, 1); failed && !replace {
			replace = true
			continue
		}
		if err != nil {
			return nil, storageErr("put experiment result", err)
		}
		return judges, nil
	}
	return nil, errs.Unavailable("judges of experiment %s are being attached; try again", r.ExperimentID)
}

// judgesCheck is a transaction's check that experiment pk exists with exactly judges
// attached; a failed check answers the experiment's item.
func (s *DatasetStore) judgesCheck(pk string, judges []string) (types.TransactWriteItem, error) {
	cond := expression.AttributeExists(expression.Name(infra.AttrPK))
	if len(judges) == 0 {
		cond = cond.And(expression.AttributeNotExists(expression.Name("judges")))
	} else {
		cond = cond.And(expression.Name("judges").Equal(expression.Value(&types.AttributeValueMemberSS{Value: judges})))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build judges check: %w", err)
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.t.name, Key: key(pk, skExperiment), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// AttachJudge implements dataset.ExperimentStore: one TransactWriteItems (the judge added to
// the experiment's set, which must exist, and its evaluator).
func (s *DatasetStore) AttachJudge(ctx context.Context, projectID string, e dataset.Evaluator) error {
	pk := experimentPK(projectID, e.ExperimentID)
	ev, err := marshal(metaItem{
		PK: pk, SK: evaluatorSK(e.ID), Kind: kindEvaluator, ID: e.ID, Name: e.Name, Mode: e.Mode, Description: e.Description,
		JudgeID: e.JudgeID, CreatedAt: e.CreatedAt,
	})
	if err != nil {
		return err
	}
	add, err := expression.NewBuilder().
		WithUpdate(expression.Add(expression.Name("judges"), expression.Value(&types.AttributeValueMemberSS{Value: []string{e.JudgeID}}))).
		WithCondition(expression.AttributeExists(expression.Name(infra.AttrPK))).Build()
	if err != nil {
		return fmt.Errorf("build judge attach: %w", err)
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.t.name, Key: key(pk, skExperiment), UpdateExpression: add.Update(), ConditionExpression: add.Condition(),
			ExpressionAttributeNames: add.Names(), ExpressionAttributeValues: add.Values(),
		}},
		{Put: &types.Put{TableName: &s.t.name, Item: ev}},
	}})
	if _, failed := failedCondition(err, 0); failed {
		return errs.NotFound("experiment %s not found", e.ExperimentID)
	}
	if err != nil {
		return storageErr("attach judge", err)
	}
	return nil
}

// putChecked writes item in one TransactWriteItems with a check that (pk, checkSK) exists,
// answering missing when it does not.
func (s *DatasetStore) putChecked(ctx context.Context, pk, checkSK string, item any, missing error) error {
	av, err := marshal(item)
	if err != nil {
		return err
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		s.exists(pk, checkSK), {Put: &types.Put{TableName: &s.t.name, Item: av}},
	}})
	if _, failed := failedCondition(err, 0); failed {
		return missing
	}
	if err != nil {
		return storageErr("put experiment item", err)
	}
	return nil
}

// PutEvaluator implements dataset.ExperimentStore: one TransactWriteItems.
func (s *DatasetStore) PutEvaluator(ctx context.Context, projectID string, e dataset.Evaluator) error {
	pk := experimentPK(projectID, e.ExperimentID)
	return s.putChecked(ctx, pk, skExperiment, metaItem{
		PK: pk, SK: evaluatorSK(e.ID), Kind: kindEvaluator, ID: e.ID, Name: e.Name, Mode: e.Mode, Description: e.Description, CreatedAt: e.CreatedAt,
	}, errs.NotFound("experiment %s not found", e.ExperimentID))
}

// Evaluator implements dataset.ExperimentStore: one GetItem.
func (s *DatasetStore) Evaluator(ctx context.Context, projectID, experimentID, id string) (dataset.Evaluator, error) {
	var it metaItem
	ok, err := s.t.get(ctx, experimentPK(projectID, experimentID), evaluatorSK(id), &it)
	if err != nil {
		return dataset.Evaluator{}, err
	}
	if !ok {
		return dataset.Evaluator{}, errs.NotFound("evaluator %s of experiment %s not found", id, experimentID)
	}
	return toEvaluator(experimentID, it), nil
}

func toEvaluator(experimentID string, it metaItem) dataset.Evaluator {
	return dataset.Evaluator{ID: it.ID, ExperimentID: experimentID, Name: it.Name, Mode: it.Mode, Description: it.Description, JudgeID: it.JudgeID, CreatedAt: it.CreatedAt}
}

// PutEvaluation implements dataset.ExperimentStore: one TransactWriteItems (the result's
// check, the evaluation, its evaluator's tally in the run) for a new evaluation. An evaluation
// that replaces one (the put's condition fails and answers the old one) takes one more, whose
// put is conditional on the old value still being there and whose tally adds the difference:
// an evaluation sent again unchanged adds nothing, and two replacements at once each adjust
// by the value they replace.
func (s *DatasetStore) PutEvaluation(ctx context.Context, projectID, experimentID string, e dataset.Evaluation) error {
	pk := experimentPK(projectID, experimentID)
	item, err := marshal(resultItem{
		PK: pk, SK: experimentEvaluationSK(e.Run, e.RowID, e.EvaluatorID), Kind: kindEvaluation, Row: e.RowID, Run: e.Run,
		EvaluatorID: e.EvaluatorID, EvaluatorName: e.EvaluatorName, Value: string(e.Value), Type: e.Type, Reason: e.Reason,
		Tallied: true, CreatedAt: time.Now().UTC(),
	})
	if err != nil {
		return err
	}
	tally := dataset.TallyOf(e.Value)
	var old *resultItem // the evaluation this one replaces, as last read
	for range 4 {
		put, delta := &types.Put{TableName: &s.t.name, Item: item, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, tally
		cond := expression.AttributeNotExists(expression.Name(infra.AttrPK))
		if old != nil {
			cond = expression.Name("value").Equal(expression.Value(old.Value))
			if old.Tallied {
				delta = tally.Minus(dataset.TallyOf(json.RawMessage(old.Value)))
			}
			if old.Value == "" {
				cond = expression.AttributeExists(expression.Name(infra.AttrPK)).And(expression.AttributeNotExists(expression.Name("value")))
			}
		}
		expr, err := expression.NewBuilder().WithCondition(cond).Build()
		if err != nil {
			return fmt.Errorf("build evaluation condition: %w", err)
		}
		put.ConditionExpression, put.ExpressionAttributeNames, put.ExpressionAttributeValues = expr.Condition(), expr.Names(), expr.Values()
		writes := []types.TransactWriteItem{s.exists(pk, resultSK(e.Run, e.RowID)), {Put: put}}
		if !delta.IsZero() {
			add, err := s.tallyUpdate(pk, e, delta)
			if err != nil {
				return err
			}
			writes = append(writes, add)
		}
		_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
		if _, failed := failedCondition(err, 0); failed {
			return errs.NotFound("experiment result %s not found", dataset.Result{RowID: e.RowID, Run: e.Run}.ID())
		}
		if av, failed := failedCondition(err, 1); failed {
			var it resultItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return fmt.Errorf("decode evaluation: %w", err)
			}
			old = &it
			continue
		}
		if err != nil {
			return storageErr("put experiment evaluation", err)
		}
		return nil
	}
	return errs.Unavailable("evaluation %s is being written by another request; try again", e.ID())
}

// tallyUpdate is a transaction's update adding delta to evaluator e.EvaluatorID's tally in
// run e.Run of experiment pk.
func (s *DatasetStore) tallyUpdate(pk string, e dataset.Evaluation, delta dataset.Tally) (types.TransactWriteItem, error) {
	upd := expression.Add(expression.Name("booleans"), expression.Value(delta.Booleans)).
		Add(expression.Name("passed"), expression.Value(delta.Passed)).
		Add(expression.Name("numbers"), expression.Value(delta.Numbers)).
		Add(expression.Name("sum"), expression.Value(delta.Sum)).
		Set(expression.Name("kind"), expression.Value(kindAggregate)).
		Set(expression.Name("run"), expression.Value(e.Run)).
		Set(expression.Name("evaluator_id"), expression.Value(e.EvaluatorID)).
		Set(expression.Name("evaluator_name"), expression.Value(e.EvaluatorName))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build evaluator tally: %w", err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.t.name, Key: key(pk, aggregateSK(e.Run, e.EvaluatorID)), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// PutRecord implements dataset.ExperimentStore: one TransactWriteItems.
func (s *DatasetStore) PutRecord(ctx context.Context, projectID, experimentID string, r dataset.Record) error {
	pk := experimentPK(projectID, experimentID)
	return s.putChecked(ctx, pk, skExperiment, metaItem{
		PK: pk, SK: recordSK(r.Kind, r.Name, r.Run), Kind: r.Kind, ID: r.ID(experimentID), Name: r.Name, Run: r.Run,
		Results: string(r.Results), CreatedAt: time.Now().UTC(),
	}, errs.NotFound("experiment %s not found", experimentID))
}

// Detail implements dataset.ExperimentStore: one Query of the experiment's partition before
// its results (evaluators, runs, records: their number follows the experiment's definition,
// not its rows).
func (s *DatasetStore) Detail(ctx context.Context, projectID, id string) (dataset.Detail, error) {
	cond := partition(experimentPK(projectID, id)).And(expression.Key(infra.AttrSK).LessThan(expression.Value(prefixResults)))
	var d dataset.Detail
	found := false
	err := s.t.query(ctx, cond, queryOpts{}, func(av map[string]types.AttributeValue) error {
		sk, _ := av[infra.AttrSK].(*types.AttributeValueMemberS)
		if sk != nil && sk.Value == skExperiment {
			var it experimentItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return fmt.Errorf("decode experiment: %w", err)
			}
			d.Experiment, found = it.toExperiment(projectID), true
			return nil
		}
		if kind, _ := av["kind"].(*types.AttributeValueMemberS); kind != nil && kind.Value == kindAggregate {
			var it aggregateItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return fmt.Errorf("decode evaluator tally: %w", err)
			}
			d.Aggregates = append(d.Aggregates, dataset.Aggregate{
				EvaluatorID: it.EvaluatorID, EvaluatorName: it.EvaluatorName, Run: it.Run,
				Tally: dataset.Tally{Booleans: it.Booleans, Passed: it.Passed, Numbers: it.Numbers, Sum: it.Sum},
			})
			return nil
		}
		var it metaItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return fmt.Errorf("decode experiment item: %w", err)
		}
		switch it.Kind {
		case kindEvaluator:
			d.Evaluators = append(d.Evaluators, toEvaluator(id, it))
		case kindRun:
			d.Runs = append(d.Runs, api.ExperimentRun{RunNumber: it.Run, ResultCount: it.Count})
		default:
			d.Records = append(d.Records, dataset.Record{Kind: it.Kind, Name: it.Name, Run: it.Run, Results: json.RawMessage(it.Results)})
		}
		return nil
	})
	if err != nil {
		return dataset.Detail{}, err
	}
	if !found {
		return dataset.Detail{}, errs.NotFound("experiment %s not found", id)
	}
	return d, nil
}

// Result reads the result of row rowID in run run of an experiment, without its evaluations:
// one GetItem. Errors: NotFound.
func (s *DatasetStore) Result(ctx context.Context, projectID, experimentID string, run int, rowID string) (dataset.Result, error) {
	var it resultItem
	ok, err := s.t.get(ctx, experimentPK(projectID, experimentID), resultSK(run, rowID), &it)
	if err != nil {
		return dataset.Result{}, err
	}
	if !ok {
		return dataset.Result{}, errs.NotFound("experiment result %s not found", dataset.Result{RowID: rowID, Run: run}.ID())
	}
	return dataset.Result{ExperimentID: experimentID, RowID: it.Row, Run: it.Run, Result: it.Result, ResultType: it.ResultType, TraceID: it.TraceID, CreatedAt: it.CreatedAt}, nil
}

// Results implements dataset.ExperimentStore (the cursor is a row id): Query pages of the
// run's range from the row after cursor until limit results and their evaluations are read
// (one Query for a page whose items fit 1 MB).
func (s *DatasetStore) Results(ctx context.Context, projectID, id string, run int, cursor string, limit int) ([]dataset.Result, string, error) {
	lo := resultRunPrefix(run)
	if cursor != "" {
		// The cursor is the last row id of the page before (row ids are hex).
		if !dataset.IsRowID(cursor) {
			return nil, "", errs.Invalid("cursor %q is not a cursor of this list", cursor)
		}
		lo = resultSK(run, cursor) + "$" // after the row's result and evaluations
	}
	cond := partition(experimentPK(projectID, id)).And(expression.Key(infra.AttrSK).Between(expression.Value(lo), expression.Value(resultRunPrefix(run)+"~")))
	in, err := s.t.queryInput(cond, queryOpts{})
	if err != nil {
		return nil, "", err
	}
	var out []dataset.Result
	more := false
	p := dynamodb.NewQueryPaginator(s.t.api, in)
pages:
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, "", storageErr("query experiment results", err)
		}
		for _, av := range page.Items {
			var it resultItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, "", fmt.Errorf("decode experiment result: %w", err)
			}
			if it.Kind == kindResult {
				if len(out) == limit {
					more = true
					break pages
				}
				out = append(out, dataset.Result{ExperimentID: id, RowID: it.Row, Run: it.Run, Result: it.Result, ResultType: it.ResultType, TraceID: it.TraceID, CreatedAt: it.CreatedAt})
				continue
			}
			if n := len(out); n > 0 && out[n-1].RowID == it.Row {
				out[n-1].Evaluations = append(out[n-1].Evaluations, dataset.Evaluation{
					EvaluatorID: it.EvaluatorID, EvaluatorName: it.EvaluatorName, RowID: it.Row, Run: it.Run, Value: json.RawMessage(it.Value), Type: it.Type,
					Reason: it.Reason,
				})
			}
		}
	}
	if !more || len(out) == 0 {
		return out, "", nil
	}
	return out, out[len(out)-1].RowID, nil
}
