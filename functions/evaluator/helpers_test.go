package evaluator_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/llm/pricetable"
	"github.com/plumehq/plume/shared/pricing"
)

// world is the API, the fake model server it calls, and the judge runner, built as
// EvaluatorFunction builds it (evaluator.FromEnv), with the keys of the objects stored since
// it started: what the bucket's events would carry.
type world struct {
	api    *apitest.API
	fake   *fakemodeltest.Server
	runner *evaluator.Runner

	mu   sync.Mutex
	keys []string
}

// judgeModel is the default judge model of the tests: an OpenAI model the price table knows,
// served by the fake server.
const judgeModel = "openai/gpt-4o-mini"

func newWorld(t *testing.T, opts ...fakemodel.Option) *world {
	t.Helper()
	fake := fakemodeltest.Start(t, opts...)
	models := llm.New(llm.Config{
		Providers:  map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: judgeModel,
	}, llm.Options{Pricer: pricetable.New(pricing.Default()), BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond})
	w := &world{api: apitest.New(t, apitest.Options{Models: models}), fake: fake}
	w.api.Blobs.OnCreated(func(key string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.keys = append(w.keys, key)
	})
	r, err := evaluator.FromEnv(context.Background(), w.api.Env)
	require.NoError(t, err)
	w.runner = r
	return w
}

// takeKeys returns the keys stored since the last call.
func (w *world) takeKeys() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.keys
	w.keys = nil
	return k
}

// deliver sends the event of every object stored since the last delivery to the runner, as
// Lambda would: each event retried (at once) until it succeeds, at most 5 times.
func (w *world) deliver(t *testing.T) {
	t.Helper()
	for _, key := range w.takeKeys() {
		w.deliverKey(t, key)
	}
}

func (w *world) deliverKey(t *testing.T, key string) {
	t.Helper()
	payload := eventFor(t, key, time.Now())
	var err error
	for range 5 {
		if err = w.runner.Handle(context.Background(), payload); err == nil {
			return
		}
	}
	require.NoError(t, err, "event of %s", key)
}

func eventFor(t *testing.T, key string, at time.Time) []byte {
	t.Helper()
	b, err := evaluator.ObjectEvent("plume-test", key, at)
	require.NoError(t, err)
	return b
}

// judge creates a judge in tenant A's project from the fields of body and returns its id.
func (w *world) judge(t *testing.T, body map[string]any) string {
	t.Helper()
	if _, ok := body["template"]; !ok {
		body["template"] = "Is the answer helpful?\n\nQuestion: {{input}}\nAnswer: {{output}}"
	}
	res := w.api.MustDo(t, "POST", "/projects/"+w.api.A.ProjectID+"/judges", w.api.A.Key, body)
	return res.Map(t)["id"].(string)
}

// span is an llm span of tenant A linked to prompt slug, with tags.
func span(slug string, tags map[string]string, input string) map[string]any {
	s := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", slug, "", input, "answer to "+input, time.Now().Add(-time.Minute))
	if slug == "" {
		delete(s["attributes"].(map[string]any), "zeroeval")
	}
	if tags != nil {
		s["tags"] = tags
	}
	return s
}

// ingest posts spans as tenant A, 100 per request, and returns their ids.
func (w *world) ingest(t *testing.T, spans ...map[string]any) []string {
	t.Helper()
	var ids []string
	for start := 0; start < len(spans); start += 100 {
		w.api.MustDo(t, "POST", "/spans", w.api.A.Key, spans[start:min(start+100, len(spans))])
	}
	for _, s := range spans {
		ids = append(ids, s["id"].(string))
	}
	return ids
}

// evaluated returns the ids of the spans judge id has evaluated, and the evaluations by span.
func (w *world) evaluated(t *testing.T, judgeID string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for offset := 0; ; offset += 100 {
		res := w.api.MustDo(t, "GET", fmt.Sprintf("/projects/%s/judges/%s/evaluations?limit=100&offset=%d", w.api.A.ProjectID, judgeID, offset), w.api.A.Key, nil)
		evs := res.Map(t)["evaluations"].([]any)
		for _, e := range evs {
			m := e.(map[string]any)
			out[m["span_id"].(string)] = m
		}
		if len(evs) < 100 {
			return out
		}
	}
}

// judgeCount is the judge's evaluation_count.
func (w *world) judgeCount(t *testing.T, judgeID string) int {
	t.Helper()
	res := w.api.MustDo(t, "GET", "/projects/"+w.api.A.ProjectID+"/judges/"+judgeID, w.api.A.Key, nil)
	return int(res.Map(t)["evaluation_count"].(float64))
}

// set is the set of ids.
func set(ids ...string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// keysOf is the key set of m.
func keysOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// callsFor counts the fake server's calls whose user message contains s.
func (w *world) callsFor(s string) int {
	n := 0
	for _, c := range w.fake.Calls() {
		if strings.Contains(c.LastUser(), s) {
			n++
		}
	}
	return n
}
