package evaluator_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/trace"
)

// TestJudgesTakeTheirSpans: every active judge evaluates exactly the llm spans it matches
// (linked prompt, tag filter all and any, binary and scored, criteria), a paused judge none,
// and the evaluations carry the model, duration and cost of their calls.
func TestJudgesTakeTheirSpans(t *testing.T) {
	w := newWorld(t)
	support := w.judge(t, map[string]any{"name": "support only", "target_prompt": "support"})
	all := w.judge(t, map[string]any{
		"name": "prod and gold", "evaluation_type": "scored", "score_min": 1, "score_max": 5, "pass_threshold": 3,
		"tag_filter": map[string]any{"tags": map[string]any{"env": []string{"prod"}, "tier": []string{"gold"}}, "match": "all"},
	})
	anyTag := w.judge(t, map[string]any{
		"name": "prod or gold", "tag_filter": map[string]any{"tags": map[string]any{"env": []string{"prod"}, "tier": []string{"gold"}}, "match": "any"},
		"criteria": []map[string]any{{"key": "accuracy", "label": "Accuracy"}, {"key": "tone", "label": "Tone"}},
	})
	paused := w.judge(t, map[string]any{"name": "paused", "paused": true})

	prodGold := span("support", map[string]string{"env": "prod", "tier": "gold"}, "q1")
	prodOnly := span("billing", map[string]string{"env": "prod"}, "q2")
	goldOnly := span("support", map[string]string{"tier": "gold", "env": "dev"}, "q3")
	neither := span("", map[string]string{"env": "dev"}, "q4")
	tool := span("support", map[string]string{"env": "prod", "tier": "gold"}, "q5")
	tool["kind"] = "tool"
	ids := w.ingest(t, prodGold, prodOnly, goldOnly, neither, tool)
	w.deliver(t)

	assert.Equal(t, set(ids[0], ids[2]), keysOf(w.evaluated(t, support)), "target prompt: linked spans only")
	assert.Equal(t, set(ids[0]), keysOf(w.evaluated(t, all)), "tag filter all")
	assert.Equal(t, set(ids[0], ids[1], ids[2]), keysOf(w.evaluated(t, anyTag)), "tag filter any")
	assert.Empty(t, w.evaluated(t, paused), "a paused judge evaluates nothing")
	assert.Equal(t, 6, w.fake.Count(), "one model call per evaluation")

	scored := w.evaluated(t, all)[ids[0]]
	assert.Equal(t, 1.0, scored["score"], "the fake answers the schema's minimum")
	assert.Equal(t, false, scored["evaluation_result"], "score 1 is below the pass threshold 3")
	assert.Equal(t, "gpt-4o-mini", scored["model_used"])
	assert.Greater(t, scored["evaluation_duration_ms"], 0.0)
	assert.Greater(t, scored["cost"], 0.0, "priced from the table")
	criteria := w.evaluated(t, anyTag)[ids[1]]["criteria_scores"].(map[string]any)
	assert.ElementsMatch(t, []string{"accuracy", "tone"}, keysList(criteria))
	assert.Equal(t, 2, w.judgeCount(t, support))
}

func keysList(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSampleRate: a judge at 0.3 evaluates the spans its hash picks (300 ± 45 of 1,000), and
// the same spans sent again cost no model call and write no evaluation.
func TestSampleRate(t *testing.T) {
	w := newWorld(t)
	id := w.judge(t, map[string]any{"name": "sampled", "sample_rate": 0.3})
	var spans []map[string]any
	for i := range 1000 {
		spans = append(spans, span("support", nil, "question "+uuid.NewString()[:8]+" "+string(rune('a'+i%26))))
	}
	ids := w.ingest(t, spans...)
	w.deliver(t)

	want := map[string]bool{}
	for _, sid := range ids {
		if run.Sampled(id, sid, 0.3) {
			want[sid] = true
		}
	}
	got := w.evaluated(t, id)
	assert.Equal(t, want, keysOf(got), "exactly the sampled spans")
	assert.InDelta(t, 300, len(got), 45)
	calls := w.fake.Count()
	assert.Equal(t, len(want), calls)

	w.ingest(t, spans...) // sent again: new batch objects, the same spans
	w.deliver(t)
	assert.Equal(t, calls, w.fake.Count(), "no model call for spans already evaluated")
	assert.Equal(t, len(want), w.judgeCount(t, id))
}

// TestSameEventConcurrently: one event delivered three times at once calls the model once
// per matching span; the deliveries that found spans in progress ask to be retried, and
// their retries do nothing new.
func TestSameEventConcurrently(t *testing.T) {
	w := newWorld(t, fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Latency: 50 * time.Millisecond}}))
	id := w.judge(t, map[string]any{"name": "every span"})
	var spans []map[string]any
	for range 20 {
		spans = append(spans, span("support", nil, uuid.NewString()))
	}
	w.ingest(t, spans...)
	keys := w.takeKeys()
	require.Len(t, keys, 1)
	payload := eventFor(t, keys[0], time.Now())

	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = w.runner.Handle(context.Background(), payload) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			assert.ErrorIs(t, err, evaluator.ErrRetry)
		}
	}
	w.deliverKey(t, keys[0]) // Lambda's retry
	assert.Equal(t, 20, w.fake.Count(), "one call per span")
	assert.Len(t, w.evaluated(t, id), 20)
	assert.Equal(t, 20, w.judgeCount(t, id))
}

// TestProviderFaults: 429s and 500s are retried by the client; a provider that keeps failing
// fails the event (released claims), and a later delivery completes it.
func TestProviderFaults(t *testing.T) {
	w := newWorld(t, fakemodel.WithRules(
		fakemodel.Rule{Times: 2, Reply: fakemodel.Reply{Status: 429, RetryAfter: time.Millisecond}},
		fakemodel.Rule{Times: 1, Reply: fakemodel.Reply{Status: 500}},
	))
	id := w.judge(t, map[string]any{"name": "flaky provider"})
	ids := w.ingest(t, span("support", nil, "a"), span("support", nil, "b"))
	w.deliver(t)
	assert.Equal(t, set(ids...), keysOf(w.evaluated(t, id)), "faults retried by the client")

	w.fake.SetRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 500}})
	down := w.ingest(t, span("support", nil, "c"))
	keys := w.takeKeys()
	err := w.runner.Handle(context.Background(), eventFor(t, keys[0], time.Now()))
	require.ErrorIs(t, err, evaluator.ErrRetry)
	assert.NotContains(t, w.evaluated(t, id), down[0])

	w.fake.SetRules()
	w.deliverKey(t, keys[0])
	assert.Contains(t, w.evaluated(t, id), down[0], "the retry after the outage evaluates it")
	assert.Equal(t, 3, w.judgeCount(t, id))
}

// TestOlderVersionIsNotEvaluated: an event for a batch whose span was sent again since (with
// new content) evaluates nothing; the newer batch's event does. (A span sent again is written
// twice by its request: first taken for new, its put refused, then read and merged; the first
// round's batch object is superseded too.)
func TestOlderVersionIsNotEvaluated(t *testing.T) {
	w := newWorld(t)
	id := w.judge(t, map[string]any{"name": "latest only"})
	first := span("support", nil, "first version")
	w.ingest(t, first)
	old := w.takeKeys()
	second := map[string]any{}
	for k, v := range first {
		second[k] = v
	}
	second["output_data"] = "second version"
	w.ingest(t, second)
	newer := w.takeKeys()

	w.deliverKey(t, old[0])
	assert.Zero(t, w.fake.Count(), "superseded: no call")
	for _, key := range newer {
		w.deliverKey(t, key)
	}
	assert.Equal(t, 1, w.fake.Count())
	assert.Len(t, w.evaluated(t, id), 1)
}

// TestUnindexedSpans: a batch whose spans are not indexed is retried while it is young, and
// skipped once it is older than the grace (its request failed before indexing them).
func TestUnindexedSpans(t *testing.T) {
	w := newWorld(t)
	w.judge(t, map[string]any{"name": "any"})
	sp := trace.Span{ID: uuid.NewString(), TraceID: uuid.NewString(), ProjectID: w.api.A.ProjectID, Name: "chat", Kind: trace.KindLLM, StartedAt: time.Now()}
	line, err := json.Marshal(trace.RecordOf(&sp))
	require.NoError(t, err)
	key := trace.BatchKey(w.api.A.ProjectID, time.Now(), uuid.NewString())
	require.NoError(t, w.api.Blobs.Put(context.Background(), key, append(line, '\n'), "application/x-ndjson"))

	err = w.runner.Handle(context.Background(), eventFor(t, key, time.Now()))
	assert.ErrorIs(t, err, evaluator.ErrRetry, "young: retried")
	err = w.runner.Handle(context.Background(), eventFor(t, key, time.Now().Add(-evaluator.DefaultIndexGrace-time.Minute)))
	assert.NoError(t, err, "old: skipped")
	assert.Zero(t, w.fake.Count())
}

// TestOtherEventsAreIgnored: events that name no batch of a project do nothing and are not
// retried.
func TestOtherEventsAreIgnored(t *testing.T) {
	w := newWorld(t)
	w.judge(t, map[string]any{"name": "any"})
	for _, payload := range []string{
		`{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"b"}`,
		`not json`,
		string(eventFor(t, "attachments/project=x/span=y/0-abc.png", time.Now())),
		string(eventFor(t, "spans/project="+w.api.A.ProjectID+"/date=2026-11-25/hour=10/gone.ndjson", time.Now())),
	} {
		assert.NoError(t, w.runner.Handle(context.Background(), []byte(payload)), payload)
	}
	assert.Zero(t, w.fake.Count())
}

// TestNoJudgeNoRead: a project without active judges costs one Query per batch, and no read
// of the batch.
func TestNoJudgeNoRead(t *testing.T) {
	w := newWorld(t)
	w.ingest(t, span("support", nil, "x"))
	keys := w.takeKeys()
	w.api.DDB.Reset()
	w.api.S3.Reset()
	require.NoError(t, w.runner.Handle(context.Background(), eventFor(t, keys[0], time.Now())))
	assert.Equal(t, map[string]int{"Query": 1}, w.api.DDB.Counts())
	assert.Zero(t, w.api.S3.Count("GetObject"))
}

// TestCalibrationTeaches: corrections people make of a judge's verdicts go to the judge model
// with its next verdicts, newest first, without an edit of the template; and they decide its
// next verdicts when the model follows them (the fake one does, by rule).
func TestCalibrationTeaches(t *testing.T) {
	// The fake judge passes everything, except when it has been told that invented refund
	// policies fail and the answer mentions a refund.
	w := newWorld(t, fakemodel.WithRules(fakemodel.Rule{
		Match: func(c fakemodel.Call) bool {
			return strings.Contains(c.System, "invents a refund policy") && strings.Contains(c.LastUser(), "refund")
		},
		Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"invents a refund policy, as corrected","confidence":0.8,"meets_criteria":false}`)},
	}))
	id := w.judge(t, map[string]any{"name": "policy"})
	first := span("support", nil, "Can I get a refund after 90 days?")
	w.ingest(t, first)
	w.deliver(t)
	ev := w.evaluated(t, id)[first["id"].(string)]
	require.Equal(t, true, ev["evaluation_result"], "the fake judge passes it")

	// A person disagrees, through the SDKs' completion feedback with the judge's id.
	w.api.EnsurePrompt(t, w.api.A, "support", "You answer support questions.")
	w.api.MustDo(t, "POST", "/v1/prompts/support/completions/"+first["id"].(string)+"/feedback", w.api.A.Key,
		map[string]any{"thumbs_up": false, "judge_id": id, "reason": "The answer invents a refund policy."})

	next := span("support", nil, "Do you refund digital goods?")
	w.ingest(t, next)
	w.deliver(t)
	calls := w.fake.Calls()
	last := calls[len(calls)-1]
	assert.Contains(t, last.System, "invents a refund policy", "the correction is in the judge's prompt")
	assert.Contains(t, last.System, "Can I get a refund after 90 days?", "with what the corrected verdict was about")
	assert.Equal(t, false, w.evaluated(t, id)[next["id"].(string)]["evaluation_result"], "and it changed the verdict")
	assert.NotContains(t, calls[0].System, "invents a refund policy", "the first verdict had no correction")
}

// TestBackfill: a judge created with a backfill evaluates the most recent spans it takes from
// before it existed; POST .../backfill asks for more, calling the model only for spans not
// evaluated yet; bad requests are refused.
func TestBackfill(t *testing.T) {
	w := newWorld(t)
	var spans []map[string]any
	for i := range 8 {
		sp := span("support", nil, fmt.Sprintf("question %d", i))
		at := time.Now().Add(-time.Duration(10-i) * time.Minute) // span 7 is the newest
		sp["started_at"], sp["ended_at"] = float64(at.UnixMicro())/1e6, float64(at.Add(time.Second).UnixMicro())/1e6
		spans = append(spans, sp)
	}
	other := span("billing", nil, "not linked to support")
	ids := w.ingest(t, append(spans, other)...)
	w.takeKeys() // the judge did not exist when these landed

	id := w.judge(t, map[string]any{"name": "late judge", "target_prompt": "support", "backfill": 3})
	w.deliver(t)
	assert.Equal(t, set(ids[5], ids[6], ids[7]), keysOf(w.evaluated(t, id)), "the 3 newest linked spans")

	res := w.api.MustDo(t, "POST", "/projects/"+w.api.A.ProjectID+"/judges/"+id+"/backfill", w.api.A.Key, map[string]any{"count": 5}).Map(t)
	assert.Equal(t, "queued", res["status"])
	assert.Equal(t, 5.0, res["count"])
	w.deliver(t)
	assert.Equal(t, set(ids[3:8]...), keysOf(w.evaluated(t, id)))
	assert.Equal(t, 5, w.fake.Count(), "the 3 evaluated already were not called again")

	base := "/projects/" + w.api.A.ProjectID + "/judges/"
	for _, tc := range []struct {
		name, path, key string
		body            any
		status          int
	}{
		{"count 0", base + id + "/backfill", w.api.A.Key, map[string]any{"count": 0}, 400},
		{"count too high", base + id + "/backfill", w.api.A.Key, map[string]any{"count": 10_001}, 400},
		{"count not a number", base + id + "/backfill", w.api.A.Key, `{"count":"ten"}`, 400},
		{"unknown judge", base + uuid.NewString() + "/backfill", w.api.A.Key, map[string]any{"count": 1}, 404},
		{"another project's key", base + id + "/backfill", w.api.B.Key, map[string]any{"count": 1}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := w.api.Do(t, "POST", tc.path, tc.key, tc.body)
			assert.Equal(t, tc.status, got.Status, "%s", got.Body)
		})
	}
	paused := w.judge(t, map[string]any{"name": "paused", "paused": true, "backfill": 2})
	got := w.api.Do(t, "POST", base+paused+"/backfill", w.api.A.Key, map[string]any{"count": 2})
	assert.Equal(t, 409, got.Status, "%s", got.Body)
	w.deliver(t)
	assert.Empty(t, w.evaluated(t, paused), "a paused judge is not backfilled")
	assert.Equal(t, 5, w.fake.Count())
}

// TestImagesGoToVisionModels: a span's image attachments (extracted at ingestion) go with the
// verdict request to a judge model that takes images; for one that does not, the request says
// they are not shown.
func TestImagesGoToVisionModels(t *testing.T) {
	w := newWorld(t)
	vision := w.judge(t, map[string]any{"name": "sees", "model": "openai/gpt-4o-mini"})
	blind := w.judge(t, map[string]any{"name": "blind", "model": "openai/gpt-3.5-turbo"})
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	sp := span("support", nil, "What is in this chart?")
	sp["attributes"].(map[string]any)["attachments"] = []any{
		map[string]any{"type": "image", "label": "chart", "base64": base64.StdEncoding.EncodeToString(png)},
	}
	w.ingest(t, sp)
	w.deliver(t)

	require.Len(t, w.evaluated(t, vision), 1)
	require.Len(t, w.evaluated(t, blind), 1)
	byModel := map[string]fakemodel.Message{}
	for _, c := range w.fake.Calls() {
		byModel[c.Model] = c.Messages[len(c.Messages)-1]
	}
	assert.Equal(t, 1, byModel["gpt-4o-mini"].Images, "the image goes to the vision model")
	assert.Zero(t, byModel["gpt-3.5-turbo"].Images)
	assert.Contains(t, byModel["gpt-3.5-turbo"].Text, "1 image attachments; they are not shown")
}
