package optimizer_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// The scripted models: the task model cites the refund policy only when its prompt says to;
// the judge passes an answer only when it cites it; the reflection model, shown the feedback,
// writes the prompt that says to.
const (
	baselinePrompt = "You are a support agent for {{product}}."
	improvedPrompt = "You are a support agent for {{product}}. Always cite the refund policy."
)

func scriptedModels() fakemodel.Option { return fakemodel.WithRules(scriptedRules()...) }

func scriptedRules() []fakemodel.Rule {
	judgePass := json.RawMessage(`{"reason":"cites the policy","confidence":0.9,"meets_criteria":true}`)
	judgeFail := json.RawMessage(`{"reason":"does not cite the refund policy","confidence":0.9,"meets_criteria":false}`)
	return []fakemodel.Rule{
		{Match: fakemodel.SystemContains("You improve prompts"),
			Reply: fakemodel.Reply{JSON: json.RawMessage(`{"prompt":` + quote(improvedPrompt) + `}`)}},
		{Match: func(c fakemodel.Call) bool {
			return strings.Contains(c.System, "evaluation judge") && strings.Contains(c.LastUser(), "Per the refund policy")
		}, Reply: fakemodel.Reply{JSON: judgePass}},
		{Match: fakemodel.SystemContains("evaluation judge"), Reply: fakemodel.Reply{JSON: judgeFail}},
		{Match: fakemodel.SystemContains("Always cite the refund policy"), Reply: fakemodel.Reply{Text: "Per the refund policy, you can return it within 30 days."}},
		// Shown a demonstration that cites it, the task model cites it too.
		{Match: func(c fakemodel.Call) bool {
			if !strings.Contains(c.System, "You are a support agent") {
				return false
			}
			for _, m := range c.Messages {
				if m.Role == "assistant" && strings.Contains(m.Text, "Per the refund policy") {
					return true
				}
			}
			return false
		}, Reply: fakemodel.Reply{Text: "Per the refund policy, you can return it within 30 days."}},
		{Match: fakemodel.SystemContains("You are a support agent"), Reply: fakemodel.Reply{Text: "Sure, no problem."}},
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// stack is the API with the optimizer worker in-process, calling the fake model server.
type stack struct {
	api  *apitest.API
	fake *fakemodeltest.Server
	pid  string
}

func newStack(t *testing.T) *stack { return newStackWith(t, nil) }

// seed makes prompt "support" with a linked judge and n completions that people and the judge
// failed for not citing the refund policy.
func (s *stack) seed(t *testing.T, n int) (judgeID string) {
	t.Helper()
	versionID := s.api.EnsurePrompt(t, s.api.A, "support", baselinePrompt)
	judgeID = s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges", s.api.A.Key, map[string]any{
		"name": "cites policy", "template": "Does the answer cite the policy that applies?\n{{input}}\n{{output}}",
	}).Map(t)["id"].(string)
	s.api.MustDo(t, "PUT", "/projects/"+s.pid+"/prompts/support/judges/"+judgeID, s.api.A.Key, nil)
	var spans []any
	var evals []map[string]any
	for i := range n {
		id := uuid.NewString()
		sp := apitest.LLMSpan(id, uuid.NewString(), "", "support", versionID, fmt.Sprintf("Can I return order %d?", i), "Sure, no problem.", time.Now().Add(-time.Hour))
		sp["attributes"].(map[string]any)["variables"] = map[string]any{"product": "Plume"}
		spans = append(spans, sp)
		evals = append(evals, map[string]any{"span_id": id, "evaluation_result": false, "evaluation_reason": "does not cite the refund policy"})
	}
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, spans)
	for _, sp := range spans {
		id := sp.(map[string]any)["id"].(string)
		s.api.MustDo(t, "POST", "/v1/prompts/support/completions/"+id+"/feedback", s.api.A.Key,
			map[string]any{"thumbs_up": false, "reason": "It must cite the refund policy."})
	}
	s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges/"+judgeID+"/evaluations", s.api.A.Key, evals)
	return judgeID
}

// start starts a run and returns its id.
func (s *stack) start(t *testing.T, body map[string]any) string {
	t.Helper()
	return s.api.MustDo(t, "POST", "/projects/"+s.pid+"/prompts/support/optimization-runs", s.api.A.Key, body).Map(t)["id"].(string)
}

// await waits until run id is over and returns it.
func (s *stack) await(t *testing.T, id string) map[string]any {
	t.Helper()
	var run map[string]any
	require.Eventually(t, func() bool {
		run = s.api.MustDo(t, "GET", "/projects/"+s.pid+"/optimization-runs/"+id, s.api.A.Key, nil).Map(t)
		st := run["status"]
		return st == "succeeded" || st == "failed" || st == "cancelled"
	}, time.Minute, 20*time.Millisecond, "run %s never ended", id)
	return run
}

// previewed seeds the project, runs a Quick Refine to success and previews its deploy: the
// run's path and the receipt to deploy it with.
func (s *stack) previewed(t *testing.T) (base, receipt string) {
	t.Helper()
	s.seed(t, 10)
	id := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 7}})
	run := s.await(t, id)
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	base = "/projects/" + s.pid + "/optimization-runs/" + id
	receipt = s.api.MustDo(t, "POST", base+":preview-deploy", s.api.A.Key, nil).Map(t)["receipt"].(string)
	return base, receipt
}

func (s *stack) versions(t *testing.T) []any {
	t.Helper()
	var vs []any
	s.api.MustDo(t, "GET", "/projects/"+s.pid+"/prompts/support/versions", s.api.A.Key, nil).Decode(t, &vs)
	return vs
}

// TestQuickRefineEndToEnd: feedback → run → succeeded with a different candidate that scores
// higher on the holdout → no prompt version before deploy → preview → deploy → production
// serves the candidate; a tampered or stale receipt is 409; deploying twice makes one version.
func TestQuickRefineEndToEnd(t *testing.T) {
	s := newStack(t)
	judgeID := s.seed(t, 10)
	id := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 7, "models": []string{"openai/gpt-4.1-mini"}}})
	run := s.await(t, id)
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])

	cand := run["candidate"].(map[string]any)
	assert.Equal(t, improvedPrompt, cand["content"])
	metrics := run["metrics"].(map[string]any)
	assert.Equal(t, "publish", metrics["recommendation"], "%v", metrics["reason"])
	assert.Equal(t, 0.0, metrics["baseline"].(map[string]any)["overall"])
	assert.Equal(t, 1.0, metrics["candidate"].(map[string]any)["overall"])
	assert.Equal(t, 1.0, metrics["candidate"].(map[string]any)["intents"].(map[string]any)[judgeID])
	assert.NotEmpty(t, metrics["holdout_ids"])
	progress := run["progress"].(map[string]any)
	holdout := len(metrics["holdout_ids"].([]any))
	assert.Equal(t, float64(1+2*holdout*2), progress["model_calls"], "1 reflection, then baseline and candidate on the holdout: a task and a judge call each")
	assert.Len(t, s.versions(t), 1, "no prompt version before a deploy")

	// The simulations, queued when the run succeeded: the task model and the run's models.
	require.Eventually(t, func() bool {
		run = s.api.MustDo(t, "GET", "/projects/"+s.pid+"/optimization-runs/"+id, s.api.A.Key, nil).Map(t)
		return len(run["simulations"].([]any)) > 0
	}, 2*time.Minute, 20*time.Millisecond, "no simulation: worker %+v", s.api.Optimizations.Stats())
	sims := run["simulations"].([]any)
	require.Len(t, sims, 2)
	for i, model := range []string{"openai/gpt-4o-mini", "openai/gpt-4.1-mini"} {
		sim := sims[i].(map[string]any)
		assert.Equal(t, model, sim["model"])
		assert.Equal(t, 0.0, sim["baseline_score"], model)
		assert.Equal(t, 1.0, sim["candidate_score"], model)
		assert.Equal(t, float64(holdout), sim["examples"])
		assert.Greater(t, sim["cost_usd"], 0.0)
		assert.Nil(t, sim["error"])
	}

	base := "/projects/" + s.pid + "/optimization-runs/" + id
	preview := s.api.MustDo(t, "POST", base+":preview-deploy", s.api.A.Key, nil).Map(t)
	receipt := preview["receipt"].(string)
	summary := preview["summary"].(map[string]any)
	assert.Nil(t, summary["production_version"], "no production tag yet")
	assert.Equal(t, improvedPrompt, summary["candidate_content"])
	assert.Len(t, s.versions(t), 1, "a preview changes nothing")

	res := s.api.Do(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": receipt + "x", "confirm": true})
	assert.Equal(t, 409, res.Status, "a tampered receipt: %s", res.Body)
	res = s.api.Do(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": receipt})
	assert.Equal(t, 400, res.Status, "confirm is required: %s", res.Body)

	deployed := s.api.MustDo(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": receipt, "confirm": true}).Map(t)
	assert.Equal(t, 2.0, deployed["version"])
	again := s.api.MustDo(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": receipt, "confirm": true}).Map(t)
	assert.Equal(t, deployed["version_id"], again["version_id"], "deploying twice makes one version")
	assert.Len(t, s.versions(t), 2)
	served := s.api.MustDo(t, "GET", "/v1/prompts/support?tag=production", s.api.A.Key, nil).Map(t)
	assert.Equal(t, improvedPrompt, served["content"])

	// A receipt from before production moved is stale.
	stale := s.api.MustDo(t, "POST", base+":preview-deploy", s.api.A.Key, nil).Map(t)["receipt"].(string)
	s.api.MustDo(t, "POST", "/projects/"+s.pid+"/prompts/support/tags/production:pin", s.api.A.Key, map[string]any{"version": 1})
	res = s.api.Do(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": stale, "confirm": true})
	assert.Equal(t, 409, res.Status, "production moved since the preview: %s", res.Body)
}

// TestDeployFinishesWhenProductionServesTheCandidate: a deploy finds production already serving
// the candidate's text (its pin landed and its run was not updated, or the text was pinned by
// hand) and records it, instead of answering that production moved; no version is added.
func TestDeployFinishesWhenProductionServesTheCandidate(t *testing.T) {
	s := newStack(t)
	base, receipt := s.previewed(t)

	v := s.api.MustDo(t, "POST", "/v1/tasks/support/prompt/versions/ensure", s.api.A.Key, map[string]any{"content": improvedPrompt}).Map(t)
	s.api.MustDo(t, "POST", "/projects/"+s.pid+"/prompts/support/tags/production:pin", s.api.A.Key, map[string]any{"version": v["version"]})
	deployed := s.api.MustDo(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": receipt, "confirm": true}).Map(t)
	assert.Equal(t, v["id"], deployed["version_id"])
	assert.Len(t, s.versions(t), 2, "the version pinned by hand, none more")
	run := s.api.MustDo(t, "GET", base, s.api.A.Key, nil).Map(t)
	assert.Equal(t, v["id"], run["deployed_version_id"])
}

// TestRunStates: the transitions a person can ask for, and the 409s of the others.
func TestRunStates(t *testing.T) {
	s := newStack(t)
	s.seed(t, 5)
	id := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 1}})
	s.await(t, id)
	base := "/projects/" + s.pid + "/optimization-runs/" + id
	for _, action := range []string{":cancel"} {
		res := s.api.Do(t, "POST", base+action, s.api.A.Key, nil)
		assert.Equal(t, 409, res.Status, "%s of a succeeded run: %s", action, res.Body)
	}
	for _, tc := range []struct {
		name, method, path, key string
		body                    any
		status                  int
	}{
		{"unknown optimizer", "POST", "/projects/" + s.pid + "/prompts/support/optimization-runs", s.api.A.Key, map[string]any{"optimizer_type": "magic"}, 400},
		{"unknown prompt", "POST", "/projects/" + s.pid + "/prompts/nope/optimization-runs", s.api.A.Key, map[string]any{}, 404},
		{"unknown judge", "POST", "/projects/" + s.pid + "/prompts/support/optimization-runs", s.api.A.Key,
			map[string]any{"config": map[string]any{"intents": []any{map[string]any{"judge_id": uuid.NewString()}}}}, 404},
		{"bad threshold", "POST", "/projects/" + s.pid + "/prompts/support/optimization-runs", s.api.A.Key,
			map[string]any{"config": map[string]any{"intents": []any{map[string]any{"judge_id": "x", "min_threshold": 2}}}}, 400},
		{"unknown run", "GET", "/projects/" + s.pid + "/optimization-runs/" + uuid.NewString(), s.api.A.Key, nil, 404},
		{"unknown action", "POST", base + ":explode", s.api.A.Key, nil, 404},
		{"another project's key", "GET", base, s.api.B.Key, nil, 403},
		{"another project's run", "GET", "/projects/" + s.api.B.ProjectID + "/optimization-runs/" + id, s.api.B.Key, nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.api.Do(t, tc.method, tc.path, tc.key, tc.body)
			assert.Equal(t, tc.status, res.Status, "%s", res.Body)
		})
	}
	list := s.api.MustDo(t, "GET", "/projects/"+s.pid+"/prompts/support/optimization-runs", s.api.A.Key, nil).Map(t)
	assert.Len(t, list["runs"], 1)
}

// TestGuardrails: a candidate that scores higher overall but falls below one intent's
// min_threshold is never recommended: the run says no_improvement and why.
func TestGuardrails(t *testing.T) {
	s := newStack(t)
	cites := s.seed(t, 10)
	// A second judge that fails every answer citing the refund policy: the candidate gains on
	// the first and loses everything on this one.
	terse := s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges", s.api.A.Key, map[string]any{
		"name": "never mentions refunds", "template": "Is the answer free of policy talk?\n{{input}}\n{{output}}",
	}).Map(t)["id"].(string)
	s.fake.SetRules(append([]fakemodel.Rule{{
		Match: func(c fakemodel.Call) bool {
			return strings.Contains(c.System, "never mentions refunds") && strings.Contains(c.LastUser(), "Per the refund policy")
		},
		Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"talks about refunds","confidence":0.9,"meets_criteria":false}`)},
	}, {
		Match: fakemodel.SystemContains("never mentions refunds"),
		Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"no policy talk","confidence":0.9,"meets_criteria":true}`)},
	}}, scriptedRules()...)...)
	run := s.await(t, s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{
		"seed": 7,
		"intents": []any{
			map[string]any{"judge_id": cites, "weight": 3},
			map[string]any{"judge_id": terse, "weight": 1, "min_threshold": 0.5},
		},
	}}))
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	metrics := run["metrics"].(map[string]any)
	assert.Greater(t, metrics["candidate"].(map[string]any)["overall"], metrics["baseline"].(map[string]any)["overall"], "better overall")
	assert.Equal(t, "no_improvement", metrics["recommendation"])
	assert.Contains(t, metrics["reason"], "below its min_threshold")
}
