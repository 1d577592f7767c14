package ddb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/monitor"
)

// MonitorStore keeps monitors: one item per monitor in its project's partition (monitorsPK),
// with its definition, its state and its last state changes, indexed in one GSI1 partition
// of every project's monitors (allMonitorsGSI1PK) for the evaluator.
//
// Requests per operation: create 1 Query (the count) + 1 PutItem; list 1 Query; read 1
// GetItem; update 1 GetItem + 1 UpdateItem; delete 1 DeleteItem; every project's monitors 1
// Query of GSI1 per 1 MB; a state change 1 conditional UpdateItem.
type MonitorStore struct{ t *Table }

var _ monitor.Store = (*MonitorStore)(nil)

// NewMonitorStore returns the monitors of t.
func NewMonitorStore(t *Table) *MonitorStore { return &MonitorStore{t: t} }

// monitorItem is a monitor as stored. Times are Unix microseconds; Window and Reminder
// seconds.
type monitorItem struct {
	PK         string                   `dynamodbav:"PK"`
	SK         string                   `dynamodbav:"SK"`
	GSI1PK     string                   `dynamodbav:"GSI1PK"`
	GSI1SK     string                   `dynamodbav:"GSI1SK"`
	ProjectID  string                   `dynamodbav:"project_id"`
	ID         string                   `dynamodbav:"id"`
	Name       string                   `dynamodbav:"name"`
	Metric     string                   `dynamodbav:"metric"`
	Filters    monitorFiltersItem       `dynamodbav:"filters"`
	Window     int64                    `dynamodbav:"win"`
	Comparison string                   `dynamodbav:"cmp"`
	Threshold  float64                  `dynamodbav:"thr"`
	Resolve    float64                  `dynamodbav:"rthr"`
	MinSamples int64                    `dynamodbav:"mins"`
	Reminder   int64                    `dynamodbav:"rem"`
	Notify     []string                 `dynamodbav:"notify"`
	Paused     bool                     `dynamodbav:"paused,omitempty"`
	State      string                   `dynamodbav:"st"`
	Since      int64                    `dynamodbav:"since"`
	Value      *float64                 `dynamodbav:"val"`
	Samples    int64                    `dynamodbav:"n"`
	History    []monitorStateChangeItem `dynamodbav:"hist"`
	Seq        int64                    `dynamodbav:"seq"`
	Notified   int64                    `dynamodbav:"nat"`
	Created    int64                    `dynamodbav:"ca"`
	Updated    int64                    `dynamodbav:"ua"`
	CreatedBy  string                   `dynamodbav:"cb"`
}

type monitorFiltersItem struct {
	SpanKind string `dynamodbav:"k,omitempty"`
	SpanName string `dynamodbav:"n,omitempty"`
	Model    string `dynamodbav:"m,omitempty"`
	Prompt   string `dynamodbav:"p,omitempty"`
	Tag      string `dynamodbav:"t,omitempty"`
	JudgeID  string `dynamodbav:"j,omitempty"`
}

type monitorStateChangeItem struct {
	From     string   `dynamodbav:"f"`
	To       string   `dynamodbav:"t"`
	At       int64    `dynamodbav:"at"`
	Value    *float64 `dynamodbav:"v"`
	Samples  int64    `dynamodbav:"n"`
	Reminder bool     `dynamodbav:"r,omitempty"`
}

func toMonitorItem(m monitor.Monitor) monitorItem {
	f := m.Filters
	it := monitorItem{PK: monitorsPK(m.ProjectID), SK: monitorSK(m.ID), GSI1PK: allMonitorsGSI1PK, GSI1SK: m.ProjectID + "#" + m.ID,
		ProjectID: m.ProjectID, ID: m.ID, Name: m.Name, Metric: m.Metric,
		Filters: monitorFiltersItem{SpanKind: f.SpanKind, SpanName: f.SpanName, Model: f.Model, Prompt: f.Prompt, Tag: f.Tag, JudgeID: f.JudgeID},
		Window:  int64(m.Window / time.Second), Comparison: m.Comparison, Threshold: m.Threshold, Resolve: m.ResolveThreshold,
		MinSamples: m.MinSamples, Reminder: int64(m.Reminder / time.Second), Notify: m.Notify, Paused: m.Paused,
		State: m.State, Since: m.StateSince.UnixMicro(), Value: m.Value, Samples: m.Samples, History: historyItems(m.History),
		Seq: m.Seq, Notified: microsOrZero(m.NotifiedAt), Created: m.CreatedAt.UnixMicro(), Updated: m.UpdatedAt.UnixMicro(), CreatedBy: m.CreatedBy}
	if it.Notify == nil {
		it.Notify = []string{}
	}
	return it
}

func historyItems(h []api.MonitorStateChange) []monitorStateChangeItem {
	out := make([]monitorStateChangeItem, len(h))
	for i, c := range h {
		out[i] = monitorStateChangeItem{From: c.From, To: c.To, At: c.At.UnixMicro(), Value: c.Value, Samples: c.Samples, Reminder: c.Reminder}
	}
	return out
}

func microsOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func (it monitorItem) toMonitor() monitor.Monitor {
	f := it.Filters
	m := monitor.Monitor{ID: it.ID, ProjectID: it.ProjectID, Name: it.Name, Metric: it.Metric,
		Filters: api.MonitorFilters{SpanKind: f.SpanKind, SpanName: f.SpanName, Model: f.Model, Prompt: f.Prompt, Tag: f.Tag, JudgeID: f.JudgeID},
		Window:  time.Duration(it.Window) * time.Second, Comparison: it.Comparison, Threshold: it.Threshold, ResolveThreshold: it.Resolve,
		MinSamples: it.MinSamples, Reminder: time.Duration(it.Reminder) * time.Second, Notify: it.Notify, Paused: it.Paused,
		State: it.State, StateSince: fromMicros(it.Since), Value: it.Value, Samples: it.Samples, Seq: it.Seq, NotifiedAt: fromMicros(it.Notified),
		CreatedAt: fromMicros(it.Created), UpdatedAt: fromMicros(it.Updated), CreatedBy: it.CreatedBy,
		History: make([]api.MonitorStateChange, len(it.History))}
	if m.Notify == nil {
		m.Notify = []string{}
	}
	for i, c := range it.History {
		m.History[i] = api.MonitorStateChange{From: c.From, To: c.To, At: fromMicros(c.At), Value: c.Value, Samples: c.Samples, Reminder: c.Reminder}
	}
	return m
}

// CreateMonitor implements monitor.Store.
func (s *MonitorStore) CreateMonitor(ctx context.Context, m monitor.Monitor) error {
	in, err := s.t.queryInput(partition(monitorsPK(m.ProjectID)), queryOpts{})
	if err != nil {
		return err
	}
	in.Select = types.SelectCount
	out, err := s.t.api.Query(ctx, in)
	if err != nil {
		return storageErr("count monitors", err)
	}
	if out.Count >= monitor.MaxPerProject {
		return errs.Conflict("the project has %d monitors, the most it may have; delete one first", out.Count)
	}
	item, err := marshal(toMonitorItem(m))
	if err != nil {
		return err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")})
	if err != nil {
		return storageErr("put monitor", err)
	}
	return nil
}

// Monitors implements monitor.Store.
func (s *MonitorStore) Monitors(ctx context.Context, projectID string) ([]monitor.Monitor, error) {
	var items []monitorItem
	if err := s.t.query(ctx, partition(monitorsPK(projectID)), queryOpts{}, decodeInto(&items)); err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	out := make([]monitor.Monitor, len(items))
	for i, it := range items {
		out[i] = it.toMonitor()
	}
	return out, nil
}

// Monitor implements monitor.Store.
func (s *MonitorStore) Monitor(ctx context.Context, projectID, id string) (monitor.Monitor, error) {
	var it monitorItem
	ok, err := s.t.get(ctx, monitorsPK(projectID), monitorSK(id), &it)
	if err != nil {
		return monitor.Monitor{}, err
	}
	if !ok {
		return monitor.Monitor{}, errs.NotFound("monitor %q not found", id)
	}
	return it.toMonitor(), nil
}

// UpdateDefinition implements monitor.Store with one UpdateItem of the definition's
// attributes: a state change recorded meanwhile is kept.
func (s *MonitorStore) UpdateDefinition(ctx context.Context, m monitor.Monitor) error {
	it := toMonitorItem(m)
	up := expression.Set(expression.Name("name"), expression.Value(it.Name)).
		Set(expression.Name("metric"), expression.Value(it.Metric)).
		Set(expression.Name("filters"), expression.Value(it.Filters)).
		Set(expression.Name("win"), expression.Value(it.Window)).
		Set(expression.Name("cmp"), expression.Value(it.Comparison)).
		Set(expression.Name("thr"), expression.Value(it.Threshold)).
		Set(expression.Name("rthr"), expression.Value(it.Resolve)).
		Set(expression.Name("mins"), expression.Value(it.MinSamples)).
		Set(expression.Name("rem"), expression.Value(it.Reminder)).
		Set(expression.Name("notify"), expression.Value(it.Notify)).
		Set(expression.Name("paused"), expression.Value(it.Paused)).
		Set(expression.Name("ua"), expression.Value(it.Updated))
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(expression.AttributeExists(expression.Name(infra.AttrPK))).Build()
	if err != nil {
		return fmt.Errorf("build monitor update: %w", err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.t.name, Key: key(it.PK, it.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if isConditionFailed(err) {
		return errs.NotFound("monitor %q not found", m.ID)
	}
	if err != nil {
		return storageErr("update monitor", err)
	}
	return nil
}

// DeleteMonitor implements monitor.Store with one conditional DeleteItem.
func (s *MonitorStore) DeleteMonitor(ctx context.Context, projectID, id string) error {
	_, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(monitorsPK(projectID), monitorSK(id)),
		ConditionExpression: aws.String("attribute_exists(PK)")})
	if errors.As(err, new(*types.ConditionalCheckFailedException)) {
		return errs.NotFound("monitor %q not found", id)
	}
	if err != nil {
		return storageErr("delete monitor", err)
	}
	return nil
}

// AllMonitors implements monitor.Store: one Query of GSI1 per MB of monitors (eventually
// consistent: a monitor created a moment ago is evaluated by the next run, and a state read
// stale fails RecordState's condition, to be evaluated again by the next run).
func (s *MonitorStore) AllMonitors(ctx context.Context) ([]monitor.Monitor, error) {
	var items []monitorItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(allMonitorsGSI1PK))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&items)); err != nil {
		return nil, fmt.Errorf("list every project's monitors: %w", err)
	}
	out := make([]monitor.Monitor, len(items))
	for i, it := range items {
		out[i] = it.toMonitor()
	}
	return out, nil
}

// RecordState implements monitor.Store with one UpdateItem conditioned on the change counter
// the evaluator read.
func (s *MonitorStore) RecordState(ctx context.Context, prev, next monitor.Monitor) (bool, error) {
	it := toMonitorItem(next)
	up := expression.Set(expression.Name("st"), expression.Value(it.State)).
		Set(expression.Name("since"), expression.Value(it.Since)).
		Set(expression.Name("val"), expression.Value(it.Value)).
		Set(expression.Name("n"), expression.Value(it.Samples)).
		Set(expression.Name("hist"), expression.Value(it.History)).
		Set(expression.Name("seq"), expression.Value(it.Seq)).
		Set(expression.Name("nat"), expression.Value(it.Notified))
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(expression.Name("seq").Equal(expression.Value(prev.Seq))).Build()
	if err != nil {
		return false, fmt.Errorf("build monitor state update: %w", err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.t.name, Key: key(it.PK, it.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, storageErr("record monitor state", err)
	}
	return true, nil
}
