package ddb

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/prompt"
)

// streamRecords reads every record of the table's stream so far.
func streamSoFar(t *testing.T, client *dynamodb.Client, table string) []StreamRecord {
	t.Helper()
	o := client.Options()
	var records []StreamRecord
	p := &StreamPoller{DB: client, TableName: table,
		Streams: NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply: func(_ context.Context, _ string, rs []StreamRecord) error {
			records = append(records, rs...)
			return nil
		}}
	for idle := 0; idle < 2; {
		busy, err := p.Poll(context.Background())
		require.NoError(t, err)
		if idle++; busy {
			idle = 0
		}
	}
	return records
}

// TestEventsOfPromptChanges: each change of the registry raises its one event, a write that
// changes nothing (the same content again, a pin to where the tag is, a pin that fails its
// precondition) raises none, and reading the stream again raises the same ids.
func TestEventsOfPromptChanges(t *testing.T) {
	client, _, name := ddbtest.NewStreamTable(t)
	svc := prompt.NewService(NewPromptStore(NewTable(client, name)))
	ctx := context.Background()
	content := func(s string) prompt.EnsureInput { return prompt.EnsureInput{Content: &s} }

	v1, _, err := svc.Ensure(ctx, "p1", "bot", content("one"), "ann")
	require.NoError(t, err)
	_, _, err = svc.Ensure(ctx, "p1", "bot", content("one"), "ann") // exists: no change
	require.NoError(t, err)
	v2, _, err := svc.Ensure(ctx, "p1", "bot", content("two"), "ann")
	require.NoError(t, err)
	_, err = svc.Pin(ctx, "p1", "bot", "production", 1, "bob")
	require.NoError(t, err)
	_, err = svc.Pin(ctx, "p1", "bot", "production", 1, "bob") // where it is: no change
	require.NoError(t, err)
	_, err = svc.PinIfAt(ctx, "p1", "bot", "production", 2, 7, "eve") // precondition fails
	require.Error(t, err)
	_, err = svc.Pin(ctx, "p1", "bot", "production", 2, "bob")
	require.NoError(t, err)
	model := "gpt-4o-mini"
	_, err = svc.BindModel(ctx, "p1", "bot", 2, &model, "cat")
	require.NoError(t, err)

	records := streamSoFar(t, client, name)
	events, err := EventsOf(records)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
		assert.Equal(t, "p1", e.ProjectID)
		assert.Regexp(t, `^evt_[0-9a-f]{32}$`, e.ID)
	}
	assert.Equal(t, []string{api.EventPromptVersionCreated, api.EventPromptVersionCreated,
		api.EventPromptTagMoved, api.EventPromptTagMoved, api.EventPromptModelBound}, types)

	var created api.PromptVersionCreated
	require.NoError(t, json.Unmarshal(events[0].Data, &created))
	assert.Equal(t, api.PromptVersionCreated{Slug: "bot", Version: 1, VersionID: v1.ID, By: "ann"}, created)
	var first, moved api.PromptTagMoved
	require.NoError(t, json.Unmarshal(events[2].Data, &first))
	assert.Nil(t, first.FromVersion, "the tag did not exist")
	require.NoError(t, json.Unmarshal(events[3].Data, &moved))
	one := 1
	assert.Equal(t, api.PromptTagMoved{Slug: "bot", Tag: "production", FromVersion: &one, ToVersion: 2, ToVersionID: v2.ID, By: "bob"}, moved)
	var bound api.PromptModelBound
	require.NoError(t, json.Unmarshal(events[4].Data, &bound))
	assert.Equal(t, &model, bound.ModelID)
	assert.Equal(t, "cat", bound.By)

	again, err := EventsOf(records)
	require.NoError(t, err)
	assert.Equal(t, events, again, "the same records raise the same events, ids included")
	ids := map[string]bool{}
	for _, e := range events {
		ids[e.ID] = true
	}
	assert.Len(t, ids, len(events), "ids are distinct")
}

// TestEventsOfJudgesAndRuns: judge.created and judge.updated from a judge item's records (its
// evaluation counters do not count), optimization.run.finished once when a run reaches a final
// state, optimization.run.deployed when its candidate is deployed.
func TestEventsOfJudgesAndRuns(t *testing.T) {
	rec := func(old, cur any) StreamRecord {
		n, err := marshal(cur)
		require.NoError(t, err)
		r := StreamRecord{New: n}
		if old != nil {
			r.Old, err = marshal(old)
			require.NoError(t, err)
		}
		return r
	}
	j := judgeItem{PK: judgePK("p1", "j1"), SK: skJudge, ID: "j1", Name: "tone", Created: 1, CreatedBy: "ann", Updated: 1, UpdatedBy: "ann"}
	counted := j
	counted.Evaluations, counted.Passed = 5, 4
	edited := counted
	edited.Updated, edited.UpdatedBy, edited.Paused = 2, "bob", true
	r := runItem{PK: optimizationRunPK("p1", "r1"), SK: skRun, ID: "r1", Status: "running", Updated: 3}
	done := r
	done.Status, done.Report, done.Updated = api.RunSucceeded, `{"recommendation":"deploy"}`, 4
	deployed := done
	deployed.Deployed, deployed.Updated = "v9", 5

	events, err := EventsOf([]StreamRecord{rec(nil, j), rec(j, counted), rec(counted, edited), rec(nil, r), rec(r, done), rec(done, done), rec(done, deployed)})
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	assert.Equal(t, []string{api.EventJudgeCreated, api.EventJudgeUpdated, api.EventOptimizationRunFinished, api.EventOptimizationRunDeployed}, types)
	var upd api.JudgeEvent
	require.NoError(t, json.Unmarshal(events[1].Data, &upd))
	assert.Equal(t, api.JudgeEvent{JudgeID: "j1", Name: "tone", Paused: true, By: "bob"}, upd)
	var fin api.OptimizationRunEvent
	require.NoError(t, json.Unmarshal(events[2].Data, &fin))
	assert.Equal(t, api.OptimizationRunEvent{RunID: "r1", State: api.RunSucceeded, Recommendation: "deploy"}, fin)
	var dep api.OptimizationRunEvent
	require.NoError(t, json.Unmarshal(events[3].Data, &dep))
	assert.Equal(t, "v9", dep.DeployedVersionID)
}

// TestEventsOfDatasetVersions: each version a push stores raises one dataset.version.created
// (its pointer item and the dataset's counter raise none), a push that loses its version
// number raises none, and reading the stream again raises the same ids.
func TestEventsOfDatasetVersions(t *testing.T) {
	client, _, name := ddbtest.NewStreamTable(t)
	store := NewDatasetStore(NewTable(client, name))
	ctx := context.Background()
	now := time.Now().UTC()
	require.NoError(t, store.CreateDataset(ctx, dataset.Dataset{ID: "d1", ProjectID: "p1", Name: "capitals", CreatedAt: now, UpdatedAt: now}))
	version := func(n, rows int) dataset.Version {
		return dataset.Version{ID: fmt.Sprintf("dv%d", n), ProjectID: "p1", DatasetID: "d1", DatasetName: "capitals",
			Number: n, RowCount: rows, Object: fmt.Sprintf("datasets/p1/d1/%d.ndjson", n), CreatedAt: now}
	}
	require.NoError(t, store.AddVersion(ctx, version(1, 3)))
	require.NoError(t, store.AddVersion(ctx, version(2, 5)))
	lost := version(2, 9)
	lost.ID = "dv-lost"
	require.Error(t, store.AddVersion(ctx, lost), "version 2 is taken")

	records := streamSoFar(t, client, name)
	events, err := EventsOf(records)
	require.NoError(t, err)
	require.Len(t, events, 2)
	var created []api.DatasetVersionCreated
	for _, ev := range events {
		assert.Equal(t, api.EventDatasetVersionCreated, ev.Type)
		assert.Equal(t, "p1", ev.ProjectID)
		var b api.DatasetVersionCreated
		require.NoError(t, json.Unmarshal(ev.Data, &b))
		created = append(created, b)
	}
	assert.Equal(t, []api.DatasetVersionCreated{
		{Dataset: "capitals", DatasetID: "d1", Version: 1, VersionID: "dv1", RowCount: 3},
		{Dataset: "capitals", DatasetID: "d1", Version: 2, VersionID: "dv2", RowCount: 5},
	}, created)
	assert.NotEqual(t, events[0].ID, events[1].ID)
	again, err := EventsOf(records)
	require.NoError(t, err)
	assert.Equal(t, events, again, "a batch read again raises the same events")
}
