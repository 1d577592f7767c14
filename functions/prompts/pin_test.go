package prompts_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/webtest"
)

// pinPath is the pin route of tag of support-bot in project pid.
func pinPath(pid, tag string) string {
	return "/projects/" + pid + "/prompts/support-bot/tags/" + tag + ":pin"
}

// tagVersions reads the tags of support-bot through the API, tag → version.
func (api *testAPI) tagVersions(t *testing.T, tn tenant) map[string]int {
	t.Helper()
	res := api.do(t, "GET", "/projects/"+tn.projectID+"/prompts/support-bot/tags", tn.key, nil)
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	out := map[string]int{}
	for _, e := range res.list {
		m := e.(map[string]any)
		out[m["tag"].(string)] = int(m["version"].(float64))
	}
	return out
}

func (r response) message() string {
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// TestPinPrecondition is expected_version: the pin happens only where the tag is as the caller
// saw it, checked by DynamoDB on the tag's own write.
func TestPinPrecondition(t *testing.T) {
	api := newTestAPI(t)
	key, pid := api.a.key, api.a.projectID
	for i := 1; i <= 3; i++ {
		require.Equal(t, http.StatusOK, api.do(t, "POST", ensurePath, key, map[string]any{"content": fmt.Sprintf("v%d", i)}).status)
	}
	require.Equal(t, http.StatusOK, api.do(t, "POST", pinPath(pid, "production"), key, map[string]any{"version": 1}).status)

	tests := []struct {
		name     string
		tag      string
		body     map[string]any
		status   int
		previous any    // previous_version of a success
		message  string // of a conflict
		after    int    // the tag's version afterwards
	}{
		{"match", "production", map[string]any{"version": 2, "expected_version": 1}, 200, 1.0, "", 2},
		{"mismatch names the current version", "production", map[string]any{"version": 3, "expected_version": 1}, 409, nil,
			`tag "production" of prompt "support-bot" is at version 2 (expected it to be at version 1)`, 2},
		{"already at the version: a retried pin", "production", map[string]any{"version": 2, "expected_version": 1}, 200, 2.0, "", 2},
		{"already at the version, matching", "production", map[string]any{"version": 2, "expected_version": 2}, 200, 2.0, "", 2},
		{"absent: unconditional", "production", map[string]any{"version": 3}, 200, 2.0, "", 3},
		{"null: unconditional", "production", map[string]any{"version": 1, "expected_version": nil}, 200, 3.0, "", 1},
		{"as a string", "production", map[string]any{"version": 2, "expected_version": "1"}, 200, 1.0, "", 2},
		{"new tag", "staging", map[string]any{"version": 3, "expected_version": 0}, 200, nil, "", 3},
		{"new tag that exists", "staging", map[string]any{"version": 1, "expected_version": 0}, 409, nil,
			`tag "staging" of prompt "support-bot" is at version 3 (expected it not to exist)`, 3},
		{"a tag that does not exist", "canary", map[string]any{"version": 1, "expected_version": 2}, 409, nil,
			`tag "canary" of prompt "support-bot" does not exist (expected it to be at version 2)`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.do(t, "POST", pinPath(pid, tt.tag), key, tt.body)
			require.Equal(t, tt.status, res.status, string(res.raw))
			if tt.status == http.StatusOK {
				assert.EqualValues(t, tt.body["version"], res.body["version"])
				assert.Equal(t, tt.previous, res.body["previous_version"])
			} else {
				assert.Equal(t, "conflict", res.errCode())
				assert.Equal(t, tt.message, res.message())
			}
			assert.Equal(t, tt.after, api.tagVersions(t, api.a)[tt.tag])
		})
	}

	t.Run("bad values are 400 and change nothing", func(t *testing.T) {
		before := api.tagVersions(t, api.a)
		for _, v := range []any{-1, 1.5, "two", true, map[string]any{}} {
			res := api.do(t, "POST", pinPath(pid, "production"), key, map[string]any{"version": 3, "expected_version": v})
			assert.Equal(t, http.StatusBadRequest, res.status, "%v: %s", v, res.raw)
			assert.Equal(t, "invalid_request", res.errCode(), "%v", v)
		}
		assert.Equal(t, before, api.tagVersions(t, api.a))
	})
	t.Run("an unknown version is 404 before the precondition", func(t *testing.T) {
		res := api.do(t, "POST", pinPath(pid, "production"), key, map[string]any{"version": 9, "expected_version": 2})
		assert.Equal(t, http.StatusNotFound, res.status, string(res.raw))
	})
	t.Run("another project's tag", func(t *testing.T) {
		b := api.b
		require.Equal(t, http.StatusOK, api.do(t, "POST", ensurePath, b.key, map[string]any{"content": "B's"}).status)
		require.Equal(t, http.StatusOK, api.do(t, "POST", pinPath(b.projectID, "production"), b.key, map[string]any{"version": 1}).status)
		res := api.do(t, "POST", pinPath(b.projectID, "production"), key, map[string]any{"version": 1, "expected_version": 1})
		assert.Equal(t, http.StatusForbidden, res.status, "A cannot pin B's tag, precondition or not")
		assert.NotContains(t, string(res.raw), "version 1", "nothing of B's tag leaks")
		// A's own production is independent of B's: B's version is no precondition for it.
		res = api.do(t, "POST", pinPath(pid, "production"), key, map[string]any{"version": 1, "expected_version": 1})
		assert.Equal(t, http.StatusConflict, res.status, string(res.raw))
		assert.Equal(t, 1, api.tagVersions(t, b)["production"])
	})
}

// TestConcurrentPins races pins of one tag with the same expected version, each to its own
// version: exactly one wins, the others are 409, and the tag ends where the winner put it.
func TestConcurrentPins(t *testing.T) {
	api := newTestAPI(t)
	key, pid := api.a.key, api.a.projectID
	const racers = 8
	for i := 1; i <= racers+1; i++ {
		require.Equal(t, http.StatusOK, api.do(t, "POST", ensurePath, key, map[string]any{"content": fmt.Sprintf("v%d", i)}).status)
	}
	require.Equal(t, http.StatusOK, api.do(t, "POST", pinPath(pid, "production"), key, map[string]any{"version": 1}).status)

	for _, expected := range []int{1, 0} { // a moved tag, then a new one
		tag := "production"
		if expected == 0 {
			tag = "staging"
		}
		t.Run(tag, func(t *testing.T) {
			reqs := make([]*http.Request, racers)
			for i := range reqs {
				reqs[i] = webtest.NewRequest(t, "POST", pinPath(pid, tag), key, map[string]any{"version": i + 2, "expected_version": expected})
			}
			statuses := make([]int, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, req := range reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					statuses[i] = webtest.Serve(api.h, req).Status
				}()
			}
			close(start)
			wg.Wait()

			winner := 0
			for i, s := range statuses {
				switch s {
				case http.StatusOK:
					assert.Zero(t, winner, "a second winner: %v", statuses)
					winner = i + 2
				default:
					assert.Equal(t, http.StatusConflict, s, "racer %d", i)
				}
			}
			require.NotZero(t, winner, "no winner: %v", statuses)
			assert.Equal(t, winner, api.tagVersions(t, api.a)[tag])
		})
	}
}

// TestPinPreconditionCost: the precondition rides on the tag's write, so a conditional pin
// costs what an unconditional one does, whether it passes or fails.
func TestPinPreconditionCost(t *testing.T) {
	api := newTestAPI(t)
	key, pid := api.a.key, api.a.projectID
	require.Equal(t, http.StatusOK, api.do(t, "POST", ensurePath, key, map[string]any{"content": "v1"}).status)
	require.Equal(t, http.StatusOK, api.do(t, "POST", ensurePath, key, map[string]any{"content": "v2"}).status)
	api.do(t, "GET", "/projects/"+pid+"/prompts", key, nil) // warm the auth cache

	count := func(body map[string]any, status int) int {
		api.counter.Reset()
		res := api.do(t, "POST", pinPath(pid, "production"), key, body)
		require.Equal(t, status, res.status, string(res.raw))
		return api.counter.Total()
	}
	plain := count(map[string]any{"version": 1}, http.StatusOK)
	assert.Equal(t, 2, plain, "the version's GetItem and the tag's PutItem")
	assert.Equal(t, plain, count(map[string]any{"version": 2, "expected_version": 1}, http.StatusOK), "a precondition that holds")
	assert.Equal(t, plain, count(map[string]any{"version": 1, "expected_version": 1}, http.StatusConflict), "a precondition that fails")
}
