package ddb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/monitor"
	"github.com/plumehq/plume/shared/optimize"
)

// Events: what happened in a project, read from the table's change stream.
//
// The stream is the outbox. DynamoDB writes a change's stream record atomically with the change
// itself (a transaction's items all or none), keeps it 24 hours and hands it to the consumer
// until the consumer succeeds, so an event derived from the record of the item that changed is
// raised exactly when the change took effect: never for a write that failed or was cancelled,
// never lost after one that succeeded, whatever crashes in between. A separate outbox item per
// change would cost a second write on every tag move (a pin is one PutItem today, whose ALL_OLD
// answer would be lost to a transaction), and every new write path would have to remember it;
// reading the items' own records makes an event structural, as the rollups are.
//
// An event's id is derived from the change, not from the delivery (a hash of the type and the
// item's identity at that change: the tag and its new version and time, the version's id, the
// judge and its update time, the run, the dataset version), so a batch the consumer reads again
// raises the same events with the same ids.

// EventsOf are the events of records, in their order. A record that raises none (a span, a
// counter update of a judge, a tag written again at the version it was at) is skipped.
func EventsOf(records []StreamRecord) ([]api.Event, error) {
	var out []api.Event
	for _, r := range records {
		if r.New == nil { // a deletion raises nothing, but that of an alerting monitor
			evs, err := deletedMonitorEvents(r)
			if err != nil {
				return nil, fmt.Errorf("events of deleting %s %s: %w", attrString(r.Old, "PK"), attrString(r.Old, "SK"), err)
			}
			out = append(out, evs...)
			continue
		}
		pk, sk := attrString(r.New, "PK"), attrString(r.New, "SK")
		var (
			evs []api.Event
			err error
		)
		switch {
		case strings.Contains(pk, "#PROMPT#") && strings.HasPrefix(sk, prefixTag):
			evs, err = tagEvents(pk, r)
		case strings.Contains(pk, "#PROMPT#") && strings.HasPrefix(sk, prefixVersion):
			evs, err = versionEvents(pk, r)
		case strings.Contains(pk, "#J#") && sk == skJudge:
			evs, err = judgeEvents(pk, r)
		case strings.Contains(pk, "#OR#") && sk == skRun:
			evs, err = runEvents(pk, r)
		case strings.HasSuffix(pk, "#MON") && strings.HasPrefix(sk, prefixMonitor):
			evs, err = monitorEvents(r)
		case strings.Contains(pk, "#DS#") && strings.HasPrefix(sk, prefixVersion) && r.Old == nil:
			evs, err = datasetVersionEvents(pk, r)
		}
		if err != nil {
			return nil, fmt.Errorf("events of %s %s: %w", pk, sk, err)
		}
		out = append(out, evs...)
	}
	return out, nil
}

// tagEvents: prompt.tag.moved when a tag is created or points at another version.
func tagEvents(pk string, r StreamRecord) ([]api.Event, error) {
	var cur, old tagItem
	if err := images(r, &cur, &old); err != nil {
		return nil, err
	}
	if r.Old != nil && old.Number == cur.Number {
		return nil, nil
	}
	project, slug := cutProject(pk, "#PROMPT#")
	body := api.PromptTagMoved{Slug: slug, Tag: cur.Name, ToVersion: cur.Number, ToVersionID: cur.VersionID, By: cur.UpdatedBy}
	if r.Old != nil {
		body.FromVersion = &old.Number
	}
	ev, err := newEvent(api.EventPromptTagMoved, project, cur.UpdatedAt, body, pk, cur.Name, cur.Number, cur.UpdatedAt.UnixNano())
	return []api.Event{ev}, err
}

// versionEvents: prompt.version.created when a version is written, prompt.model.bound when
// its bound model changes.
func versionEvents(pk string, r StreamRecord) ([]api.Event, error) {
	var cur, old versionItem
	if err := images(r, &cur, &old); err != nil {
		return nil, err
	}
	project, slug := cutProject(pk, "#PROMPT#")
	if r.Old == nil {
		ev, err := newEvent(api.EventPromptVersionCreated, project, cur.CreatedAt,
			api.PromptVersionCreated{Slug: slug, Version: cur.Number, VersionID: cur.ID, By: cur.CreatedBy}, cur.ID)
		return []api.Event{ev}, err
	}
	if sameString(old.ModelID, cur.ModelID) {
		return nil, nil
	}
	ev, err := newEvent(api.EventPromptModelBound, project, cur.UpdatedAt,
		api.PromptModelBound{Slug: slug, Version: cur.Number, VersionID: cur.ID, ModelID: cur.ModelID, By: cur.UpdatedBy}, cur.ID, cur.UpdatedAt.UnixNano())
	return []api.Event{ev}, err
}

// datasetVersionEvents: dataset.version.created when a version is written (versions are
// immutable: written once, never updated).
func datasetVersionEvents(pk string, r StreamRecord) ([]api.Event, error) {
	var cur datasetVersionItem
	if err := attributevalue.UnmarshalMap(r.New, &cur); err != nil {
		return nil, err
	}
	project, _ := cutProject(pk, "#DS#")
	ev, err := newEvent(api.EventDatasetVersionCreated, project, cur.CreatedAt, api.DatasetVersionCreated{
		Dataset: cur.DatasetName, DatasetID: cur.DatasetID, Version: cur.Number, VersionID: cur.ID, RowCount: cur.RowCount,
	}, cur.ID)
	return []api.Event{ev}, err
}

// judgeEvents: judge.created when a judge is written, judge.updated when a person changes it
// (its update time moves; the evaluation counters do not count).
func judgeEvents(pk string, r StreamRecord) ([]api.Event, error) {
	var cur, old judgeItem
	if err := images(r, &cur, &old); err != nil {
		return nil, err
	}
	project, _ := cutProject(pk, "#J#")
	body := api.JudgeEvent{JudgeID: cur.ID, Name: cur.Name, Paused: cur.Paused, By: cur.UpdatedBy}
	switch {
	case r.Old == nil:
		body.By = cur.CreatedBy
		ev, err := newEvent(api.EventJudgeCreated, project, time.UnixMicro(cur.Created).UTC(), body, cur.ID)
		return []api.Event{ev}, err
	case old.Updated != cur.Updated:
		ev, err := newEvent(api.EventJudgeUpdated, project, time.UnixMicro(cur.Updated).UTC(), body, cur.ID, cur.Updated)
		return []api.Event{ev}, err
	}
	return nil, nil
}

// runEvents: optimization.run.finished when a run reaches a final state,
// optimization.run.deployed when its candidate is deployed.
func runEvents(pk string, r StreamRecord) ([]api.Event, error) {
	var cur, old runItem
	if err := images(r, &cur, &old); err != nil {
		return nil, err
	}
	project, _ := cutProject(pk, "#OR#")
	at := time.UnixMicro(cur.Updated).UTC()
	body := api.OptimizationRunEvent{RunID: cur.ID, State: cur.Status, Error: cur.Error, DeployedVersionID: cur.Deployed}
	if cur.Report != "" {
		var rep struct {
			Recommendation string `json:"recommendation"`
		}
		if err := json.Unmarshal([]byte(cur.Report), &rep); err == nil {
			body.Recommendation = rep.Recommendation
		}
	}
	var out []api.Event
	if optimize.Final(cur.Status) && (r.Old == nil || !optimize.Final(old.Status)) {
		ev, err := newEvent(api.EventOptimizationRunFinished, project, at, body, cur.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	if cur.Deployed != "" && old.Deployed != cur.Deployed {
		ev, err := newEvent(api.EventOptimizationRunDeployed, project, at, body, cur.ID, cur.Deployed)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// images decodes a record's new image into cur and its old one (if any) into old.
func images(r StreamRecord, cur, old any) error {
	if err := attributevalue.UnmarshalMap(r.New, cur); err != nil {
		return err
	}
	if r.Old == nil {
		return nil
	}
	return attributevalue.UnmarshalMap(r.Old, old)
}

// newEvent is an event of type typ with body, whose id is derived from identity: the values
// that name this change of this item.
func newEvent(typ, project string, at time.Time, body any, identity ...any) (api.Event, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return api.Event{}, err
	}
	h := sha256.New()
	fmt.Fprint(h, typ, "\x00", project)
	for _, v := range identity {
		fmt.Fprint(h, "\x00", v)
	}
	return api.Event{ID: "evt_" + hex.EncodeToString(h.Sum(nil))[:32], Type: typ, Time: at.UTC(), ProjectID: project, Data: data}, nil
}

// cutProject splits a partition key P#<project><marker><rest> into the project and rest.
func cutProject(pk, marker string) (project, rest string) {
	project, rest, _ = strings.Cut(strings.TrimPrefix(pk, "P#"), marker)
	return project, rest
}

func attrString(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func sameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// monitorEvents: monitor.alerted when a monitor's state change (its counter moves) enters
// alerting, or a reminder of an alert still on is written (its notification time moves);
// monitor.resolved when a change leaves alerting (to ok, or no_data). A new monitor, a change
// of its definition and the changes between ok and no_data raise nothing. The id is derived
// from the monitor and its counter: one event per change, whoever reads the record again.
func monitorEvents(r StreamRecord) ([]api.Event, error) {
	if r.Old == nil {
		return nil, nil
	}
	var cur, old monitorItem
	if err := images(r, &cur, &old); err != nil {
		return nil, err
	}
	if cur.Seq == old.Seq {
		return nil, nil
	}
	m := cur.toMonitor()
	body := api.MonitorEvent{MonitorID: m.ID, Name: m.Name, Metric: m.Metric, Window: monitor.FormatWindow(m.Window),
		Comparison: m.Comparison, Threshold: m.Threshold, ResolveThreshold: m.ResolveThreshold, State: m.State, From: old.State,
		Value: m.Value, Samples: m.Samples, Notify: m.Notify}
	var typ string
	switch {
	case cur.State == api.MonitorAlerting && old.State == api.MonitorAlerting:
		if cur.Notified == old.Notified {
			return nil, nil
		}
		typ, body.Reminder = api.EventMonitorAlerted, true
	case cur.State == api.MonitorAlerting:
		typ = api.EventMonitorAlerted
	case old.State == api.MonitorAlerting:
		typ = api.EventMonitorResolved
	default:
		return nil, nil
	}
	at := m.StateSince
	if body.Reminder {
		at = m.NotifiedAt
	}
	ev, err := newEvent(typ, m.ProjectID, at, body, m.ID, cur.Seq)
	return []api.Event{ev}, err
}

// deletedMonitorEvents: monitor.resolved, State api.MonitorStateDeleted, when a monitor is
// deleted while alerting: its receivers opened an alert with monitor.alerted and would
// otherwise never see it close. The id is derived from the monitor and its deletion (a monitor
// is deleted once); the time is the deletion's, as the stream reports it, but always after
// the monitor's last change or notification (by a microsecond when the stream's time is not):
// the stream rounds its time down (to the second on AWS, to the minute on DynamoDB Local), and
// the end of an alert must sort after the alert it ends.
func deletedMonitorEvents(r StreamRecord) ([]api.Event, error) {
	pk, sk := attrString(r.Old, "PK"), attrString(r.Old, "SK")
	if !strings.HasSuffix(pk, "#MON") || !strings.HasPrefix(sk, prefixMonitor) {
		return nil, nil
	}
	var old monitorItem
	if err := attributevalue.UnmarshalMap(r.Old, &old); err != nil {
		return nil, err
	}
	if old.State != api.MonitorAlerting {
		return nil, nil
	}
	m := old.toMonitor()
	body := api.MonitorEvent{MonitorID: m.ID, Name: m.Name, Metric: m.Metric, Window: monitor.FormatWindow(m.Window),
		Comparison: m.Comparison, Threshold: m.Threshold, ResolveThreshold: m.ResolveThreshold, State: api.MonitorStateDeleted,
		From: old.State, Value: m.Value, Samples: m.Samples, Notify: m.Notify}
	last := m.UpdatedAt
	for _, t := range []time.Time{m.StateSince, m.NotifiedAt} {
		if t.After(last) {
			last = t
		}
	}
	at := r.At
	if !at.After(last) {
		at = last.Add(time.Microsecond) // the deletion came after the write of the last change
	}
	ev, err := newEvent(api.EventMonitorResolved, m.ProjectID, at, body, m.ID, "deleted")
	return []api.Event{ev}, err
}
