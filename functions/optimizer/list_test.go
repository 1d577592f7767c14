package optimizer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/optimize"
)

// TestRunListOfUnknownTarget: the run lists of a prompt and of a judge answer 404 not_found for
// a prompt or judge the project does not have, as the target's other routes do, and an empty
// page for one without runs; the check costs one GetItem, and only when the target has no
// runs at all (a run proves its target).
func TestRunListOfUnknownTarget(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	pid := api.A.ProjectID
	api.EnsurePrompt(t, api.A, "support", "You are a support agent.")
	api.EnsurePrompt(t, api.A, "quiet", "You say little.")
	newJudge := func(name string) string {
		return api.MustDo(t, "POST", "/projects/"+pid+"/judges", api.A.Key, map[string]any{
			"name": name, "template": "Is the answer right?\n{{input}}\n{{output}}",
		}).Map(t)["id"].(string)
	}
	judged, unjudged := newJudge("judged"), newJudge("unjudged")
	// The runs are made by the store: a run the worker does not take, so that the counts
	// below are the list's alone.
	store := api.Env.Optimizations()
	now := time.Now().UTC()
	for _, target := range []optimize.Target{
		{Kind: optimize.TargetPrompt, Slug: "support"}, {Kind: optimize.TargetJudge, JudgeID: judged},
	} {
		_, err := store.CreateRun(context.Background(), optimize.Run{
			ID: uuid.NewString(), ProjectID: pid, Target: target, Requested: optimize.TypeQuickRefine, Type: optimize.TypeQuickRefine,
			Status: optimize.StatusSucceeded, CreatedAt: now, UpdatedAt: now, CreatedBy: "test",
		})
		require.NoError(t, err)
	}

	prompts, judges := "/projects/"+pid+"/prompts/", "/projects/"+pid+"/judges/"
	tests := []struct {
		name     string
		path     string
		key      string
		status   int
		runs     int
		requests map[string]int
	}{
		{"a prompt's runs", prompts + "support/optimization-runs", api.A.Key, http.StatusOK, 1, map[string]int{"Query": 1}},
		{"past a prompt's runs", prompts + "support/optimization-runs?offset=5", api.A.Key, http.StatusOK, 0, map[string]int{"Query": 1}},
		{"a prompt without runs", prompts + "quiet/optimization-runs", api.A.Key, http.StatusOK, 0, map[string]int{"Query": 1, "GetItem": 1}},
		{"an unknown prompt", prompts + "nope/optimization-runs", api.A.Key, http.StatusNotFound, 0, map[string]int{"Query": 1, "GetItem": 1}},
		{"another project's prompt", "/projects/" + api.B.ProjectID + "/prompts/support/optimization-runs", api.B.Key, http.StatusNotFound, 0, map[string]int{"Query": 1, "GetItem": 1}},
		{"a judge's runs", judges + judged + "/optimization-runs", api.A.Key, http.StatusOK, 1, map[string]int{"Query": 1}},
		{"a judge without runs", judges + unjudged + "/optimization-runs", api.A.Key, http.StatusOK, 0, map[string]int{"Query": 1, "GetItem": 1}},
		{"an unknown judge", judges + uuid.NewString() + "/optimization-runs", api.A.Key, http.StatusNotFound, 0, map[string]int{"Query": 1, "GetItem": 1}},
		{"another project's judge", "/projects/" + api.B.ProjectID + "/judges/" + judged + "/optimization-runs", api.B.Key, http.StatusNotFound, 0, map[string]int{"Query": 1, "GetItem": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.Do(t, "GET", tt.path, tt.key, nil) // the key is read once, then cached
			api.DDB.Reset()
			res := api.Do(t, "GET", tt.path, tt.key, nil)
			require.Equal(t, tt.status, res.Status, "%s", res.Body)
			assert.Equal(t, tt.requests, api.DDB.Counts())
			if tt.status == http.StatusNotFound {
				assert.Equal(t, "not_found", res.ErrCode(t))
				return
			}
			assert.Len(t, res.Map(t)["runs"], tt.runs)
		})
	}
}
