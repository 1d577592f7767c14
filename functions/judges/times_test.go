package judges_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestEvaluationCreatedAt: a created_at before 2000 is refused as spans' times are (issue 11:
// year 1 was accepted), and a given created_at is answered as reads answer it, to the
// microsecond the store keeps.
func TestEvaluationCreatedAt(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	_, spans := ingest(t, api, a, "bot", vid, 1)
	jid := createJudge(t, api, a, map[string]any{"name": "B", "template": "ok?"})["id"].(string)
	path := judgesPath(a.ProjectID) + "/" + jid + "/evaluations"

	for _, at := range []string{"0001-01-01T00:00:00Z", "1999-12-31T23:59:59Z"} {
		res := api.Do(t, "POST", path, a.Key, []any{map[string]any{"span_id": spans[0], "evaluation_result": true, "created_at": at}})
		assert.Equal(t, 400, res.Status, "%s: %s", at, res.Body)
		assert.Equal(t, "invalid_request", res.ErrCode(t))
		assert.Contains(t, res.Map(t)["error"].(map[string]any)["message"], "created_at")
	}

	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second).Add(123456789 * time.Nanosecond)
	res := api.MustDo(t, "POST", path, a.Key, []any{map[string]any{"span_id": spans[0], "evaluation_result": true, "created_at": at.Format(time.RFC3339Nano)}}).Map(t)
	wrote := res["evaluations"].([]any)[0].(map[string]any)
	read := api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/spans/"+spans[0]+"/evaluations", a.Key, nil).Map(t)["evaluations"].([]any)
	require.Len(t, read, 1)
	assert.Equal(t, at.Truncate(time.Microsecond).Format(time.RFC3339Nano), wrote["created_at"])
	assert.Equal(t, wrote["created_at"], read[0].(map[string]any)["created_at"])
	assert.Equal(t, wrote["updated_at"], read[0].(map[string]any)["updated_at"])
}
