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
)

// Judge templates of the fixture: the strict one fails every answer that does not cite the
// refund policy (all of them here); the lenient one passes answers that try to help and fails
// "I don't know", as people do; the harsh one fails everything.
const (
	strictTemplate  = "Does the answer help?\n{{input}}\n{{output}}"
	lenientTemplate = "Be lenient: pass any answer that tries to help.\n{{input}}\n{{output}}"
	harshTemplate   = "Be harsh: fail every answer.\n{{input}}\n{{output}}"
)

func judgeRules() []fakemodel.Rule {
	verdict := func(pass bool) fakemodel.Reply {
		return fakemodel.Reply{JSON: json.RawMessage(fmt.Sprintf(`{"reason":"as instructed","confidence":0.9,"meets_criteria":%t}`, pass))}
	}
	user := func(c fakemodel.Call, s string) bool { return strings.Contains(c.LastUser(), s) }
	return []fakemodel.Rule{
		// The reflection rewrites the strict template into the lenient one, and the lenient
		// one into the harsh one.
		{Match: func(c fakemodel.Call) bool {
			return strings.Contains(c.System, "You improve prompts") && user(c, "Be lenient")
		},
			Reply: fakemodel.Reply{JSON: json.RawMessage(`{"prompt":` + quote(harshTemplate) + `}`)}},
		{Match: func(c fakemodel.Call) bool {
			return strings.Contains(c.System, "You improve prompts") && user(c, "Does the answer help?")
		},
			Reply: fakemodel.Reply{JSON: json.RawMessage(`{"prompt":` + quote(lenientTemplate) + `}`)}},
		{Match: func(c fakemodel.Call) bool { return user(c, "Be harsh") }, Reply: verdict(false)},
		{Match: func(c fakemodel.Call) bool { return user(c, "Be lenient") && user(c, "I don't know") }, Reply: verdict(false)},
		{Match: func(c fakemodel.Call) bool { return user(c, "Be lenient") }, Reply: verdict(true)},
		{Match: fakemodel.SystemContains("evaluation judge"), Reply: verdict(false)},
	}
}

// calibratedJudge makes a judge with template and 12 calibrated evaluations of it: people want
// "Sure, no problem." answers passed and "I don't know." ones failed; the judge's verdicts are
// what the template gives.
func (s *stack) calibratedJudge(t *testing.T, name, template string, verdictOf func(output string) bool) string {
	t.Helper()
	s.api.EnsurePrompt(t, s.api.A, "support", baselinePrompt)
	jid := s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges", s.api.A.Key, map[string]any{"name": name, "template": template}).Map(t)["id"].(string)
	var spans []any
	var evals []map[string]any
	wanted := map[string]bool{}
	for i := range 12 {
		// Ids fixed by the judge's name, so that the split (by seed and id) is the same in
		// every run: its holdout has answers of both kinds.
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s %d", name, i)).String()
		output, pass := "Sure, no problem.", true
		if i%2 == 1 {
			output, pass = "I don't know.", false
		}
		spans = append(spans, apitest.LLMSpan(id, uuid.NewString(), "", "support", "", fmt.Sprintf("Question %d", i), output, timeAgo()))
		evals = append(evals, map[string]any{"span_id": id, "evaluation_result": verdictOf(output), "evaluation_reason": "as instructed"})
		wanted[id] = pass
	}
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, spans)
	s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges/"+jid+"/evaluations", s.api.A.Key, evals)
	for _, e := range evals {
		id := e["span_id"].(string)
		agreed := e["evaluation_result"].(bool) == wanted[id]
		s.api.MustDo(t, "POST", "/v1/prompts/support/completions/"+id+"/feedback", s.api.A.Key,
			map[string]any{"thumbs_up": agreed, "judge_id": jid, "reason": "helpful answers pass, non-answers fail"})
	}
	return jid
}

// TestJudgeOptimization: a judge whose template disagrees with people gets a candidate that
// agrees with them better (accuracy, kappa and rates for both on held-out calibrations),
// deployed as its template; a candidate whose kappa falls is not recommended.
func TestJudgeOptimization(t *testing.T) {
	s := newStack(t)
	s.fake.SetRules(append(judgeRules(), scriptedRules()...)...)
	strict := s.calibratedJudge(t, "strict", strictTemplate, func(string) bool { return false })

	run := s.await(t, s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges/"+strict+"/optimization-runs", s.api.A.Key,
		map[string]any{"config": map[string]any{"seed": 5}}).Map(t)["id"].(string))
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	assert.Equal(t, strict, run["judge_id"])
	assert.Equal(t, lenientTemplate, run["candidate"].(map[string]any)["content"])
	m := run["metrics"].(map[string]any)
	before, after := m["baseline_agreement"].(map[string]any), m["candidate_agreement"].(map[string]any)
	assert.Equal(t, 1.0, after["accuracy"])
	assert.Equal(t, 1.0, after["kappa"])
	assert.Equal(t, 1.0, after["true_positive_rate"])
	assert.Equal(t, 1.0, after["true_negative_rate"])
	assert.Equal(t, 0.0, before["kappa"], "failing everything agrees by chance only")
	assert.Equal(t, 0.0, before["true_positive_rate"])
	assert.Equal(t, "publish", m["recommendation"], "%v", m["reason"])

	base := "/projects/" + s.pid + "/optimization-runs/" + run["id"].(string)
	preview := s.api.MustDo(t, "POST", base+":preview-deploy", s.api.A.Key, nil).Map(t)
	assert.Equal(t, strictTemplate, preview["summary"].(map[string]any)["current_template"])
	s.api.MustDo(t, "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": preview["receipt"], "confirm": true})
	j := s.api.MustDo(t, "GET", "/projects/"+s.pid+"/judges/"+strict, s.api.A.Key, nil).Map(t)
	assert.Equal(t, lenientTemplate, j["template"], "the deploy set the judge's template")
	assert.Equal(t, 2.0, j["template_version"])
	versions := s.api.MustDo(t, "GET", "/projects/"+s.pid+"/judges/"+strict+"/versions", s.api.A.Key, nil).Map(t)["versions"].([]any)
	require.Len(t, versions, 2)
	newest, first := versions[0].(map[string]any), versions[1].(map[string]any)
	assert.Equal(t, []any{2.0, lenientTemplate, "optimization", run["id"]}, []any{newest["version"], newest["template"], newest["source"], newest["run_id"]})
	assert.Equal(t, []any{1.0, strictTemplate, "create", nil}, []any{first["version"], first["template"], first["source"], first["run_id"]})
	s.api.MustDo(t, "PATCH", "/projects/"+s.pid+"/judges/"+strict, s.api.A.Key, map[string]any{"paused": true})
	s.api.MustDo(t, "PATCH", "/projects/"+s.pid+"/judges/"+strict, s.api.A.Key, map[string]any{"template": strictTemplate, "paused": false})
	versions = s.api.MustDo(t, "GET", "/projects/"+s.pid+"/judges/"+strict+"/versions", s.api.A.Key, nil).Map(t)["versions"].([]any)
	require.Len(t, versions, 3, "a pause is no new template; an edit is")
	assert.Equal(t, []any{3.0, strictTemplate, "edit"}, []any{versions[0].(map[string]any)["version"], versions[0].(map[string]any)["template"], versions[0].(map[string]any)["source"]})

	lenient := s.calibratedJudge(t, "lenient", lenientTemplate, func(out string) bool { return out != "I don't know." })
	run = s.await(t, s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges/"+lenient+"/optimization-runs", s.api.A.Key,
		map[string]any{"config": map[string]any{"seed": 5}}).Map(t)["id"].(string))
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	assert.Equal(t, harshTemplate, run["candidate"].(map[string]any)["content"])
	m = run["metrics"].(map[string]any)
	assert.Equal(t, "no_improvement", m["recommendation"], "the harsh candidate's kappa falls")
	assert.Contains(t, m["reason"], "kappa")
	list := s.api.MustDo(t, "GET", "/projects/"+s.pid+"/judges/"+lenient+"/optimization-runs", s.api.A.Key, nil).Map(t)
	assert.Len(t, list["runs"], 1)
}

func timeAgo() time.Time { return time.Now().Add(-time.Hour) }
