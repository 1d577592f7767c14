package webhooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
)

// keyOf issues a key of tenant's project with role.
func keyOf(t *testing.T, a *apitest.API, tenant apitest.Tenant, role auth.Role) string {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: tenant.ProjectID, User: auth.User{ID: "u-" + string(role)}, Role: role}, time.Now())
	require.NoError(t, err)
	require.NoError(t, a.Auth.CreateKey(context.Background(), k))
	return secret
}

// eventPage reads a page of tenant's event log with key.
func eventPage(t *testing.T, a *apitest.API, tenant apitest.Tenant, key, query string) ([]api.Event, string) {
	t.Helper()
	res := a.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/events"+query, key, nil)
	var evs []api.Event
	require.NoError(t, json.Unmarshal(res.Body, &evs), string(res.Body))
	return evs, res.Header.Get(api.NextCursorHeader)
}

// TestEventLog: the events raised by real changes are logged once each (a stream applied
// again logs nothing more) and read back newest first, oldest after since, by type and page by
// page with the cursor; members read it, ingest keys and other projects' keys get 403.
func TestEventLog(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	start := time.Now().UTC().Add(-time.Second)
	a.EnsurePrompt(t, a.A, "bot", "v1")
	a.EnsurePrompt(t, a.A, "bot", "v2")
	pin(t, a, a.A, "bot", "production", 1)
	pin(t, a, a.A, "bot", "production", 2)
	a.EnsurePrompt(t, a.B, "bot", "b1")
	a.DrainStream(t)
	a.ReplayEvents(t)

	all, next := eventPage(t, a, a.A, a.A.Key, "")
	require.Len(t, all, 4, "2 versions and 2 tag moves, each once")
	assert.Empty(t, next)
	for i, ev := range all {
		assert.Equal(t, a.A.ProjectID, ev.ProjectID)
		if i > 0 {
			assert.False(t, ev.Time.After(all[i-1].Time), "newest first")
		}
	}

	moves, _ := eventPage(t, a, a.A, a.A.Key, "?types="+api.EventPromptTagMoved)
	require.Len(t, moves, 2)
	for _, ev := range moves {
		assert.Equal(t, api.EventPromptTagMoved, ev.Type)
	}

	// Oldest after since, two at a time: every event once, in time order.
	var seen []api.Event
	query := "?limit=2&since=" + url.QueryEscape(start.Format(time.RFC3339Nano))
	for range 5 {
		page, next := eventPage(t, a, a.A, a.A.Key, query)
		seen = append(seen, page...)
		if next == "" {
			break
		}
		query = "?limit=2&since=" + url.QueryEscape(start.Format(time.RFC3339Nano)) + "&cursor=" + next
	}
	require.Len(t, seen, 4)
	for i := range seen {
		assert.Equal(t, all[len(all)-1-i].ID, seen[i].ID, "oldest first: the newest-first list reversed")
	}
	after, _ := eventPage(t, a, a.A, a.A.Key, "?since="+url.QueryEscape(seen[1].Time.Format(time.RFC3339Nano)))
	assert.Equal(t, []api.Event{seen[2], seen[3]}, after, "since excludes the events of its instant")

	// Newest first, page by page.
	first, next := eventPage(t, a, a.A, a.A.Key, "?limit=3")
	require.Len(t, first, 3)
	require.NotEmpty(t, next)
	rest, _ := eventPage(t, a, a.A, a.A.Key, "?limit=3&cursor="+next)
	require.Len(t, rest, 1)
	assert.Equal(t, all, append(first, rest...))

	member := keyOf(t, a, a.A, auth.RoleMember)
	byMember, _ := eventPage(t, a, a.A, member, "")
	assert.Len(t, byMember, 4, "members read the log")
	assert.Equal(t, http.StatusForbidden, a.Do(t, "GET", "/projects/"+a.A.ProjectID+"/events", keyOf(t, a, a.A, auth.RoleIngest), nil).Status)
	assert.Equal(t, http.StatusForbidden, a.Do(t, "GET", "/projects/"+a.A.ProjectID+"/events", a.B.Key, nil).Status)
	ofB, _ := eventPage(t, a, a.B, a.B.Key, "")
	require.Len(t, ofB, 1, "B's log holds B's event only")

	for _, bad := range []string{"?since=yesterday", "?types=prompt.deleted", "?limit=0", "?limit=201", "?cursor=%25%25"} {
		res := a.Do(t, "GET", "/projects/"+a.A.ProjectID+"/events"+bad, a.A.Key, nil)
		assert.Equal(t, http.StatusBadRequest, res.Status, bad)
		assert.Contains(t, string(res.Body), `"invalid_request"`, bad)
	}

	// Cost: a page is one Query; logging an event is one PutItem.
	a.DDB.Reset()
	eventPage(t, a, a.A, a.A.Key, "?limit=50")
	assert.Equal(t, map[string]int{"Query": 1}, a.DDB.Counts(), "a page")
	a.DDB.Reset()
	require.NoError(t, a.Env.EventLog().Append(context.Background(), all[:2]))
	assert.Equal(t, map[string]int{"PutItem": 2}, a.DDB.Counts(), "two events logged again: two conditional PutItems, nothing written")
	again, _ := eventPage(t, a, a.A, a.A.Key, "")
	assert.Equal(t, all, again)
}
