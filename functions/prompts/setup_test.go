package prompts_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// testAPI is the whole API, built by the composition root as plume-local builds it, over a
// fresh DynamoDB Local table, with two projects.
type testAPI struct {
	h         http.Handler
	prompts   http.Handler // PromptsFunction's handler, unmounted
	counter   *ddbtest.Counter
	tableName string
	auth      *ddb.AuthStore
	a, b      tenant
}

type tenant struct {
	projectID string
	key       string
	userID    string
}

func newTestAPI(t testing.TB) *testAPI {
	t.Helper()
	whole := apitest.New(t, apitest.Options{})
	h, err := prompts.Function.Build(whole.Env)
	require.NoError(t, err)
	return &testAPI{
		h: whole.Handler, prompts: h, counter: whole.DDB, auth: whole.Auth, tableName: whole.TableName,
		a: tenant{projectID: whole.A.ProjectID, key: whole.A.Key, userID: whole.A.UserID},
		b: tenant{projectID: whole.B.ProjectID, key: whole.B.Key, userID: whole.B.UserID},
	}
}

// routes are the patterns the prompts area registers.
func (api *testAPI) routes() []auth.Route { return api.prompts.(*auth.Router).Routes() }

// newTenant creates a project with one key; secret may be fixed (sample events) or "".
func (api *testAPI) newTenant(t testing.TB, secret string, projectID ...string) tenant {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	if len(projectID) > 0 {
		id = projectID[0]
	}
	require.NoError(t, api.auth.CreateProject(ctx, auth.Project{ID: id, Name: "test", CreatedAt: time.Now()}))
	userID := uuid.NewString()
	key, k, err := auth.NewKey(auth.KeySpec{ProjectID: id, Secret: secret, User: auth.User{ID: userID, Email: "dev@example.com", Name: "Dev"}}, time.Now())
	require.NoError(t, err)
	require.NoError(t, api.auth.CreateKey(ctx, k))
	return tenant{projectID: id, key: key, userID: userID}
}

// response is a recorded answer with its JSON body decoded.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
	list   []any
}

// do sends a request with key as bearer (none when empty); body is marshalled unless it is a
// string, which is sent as is.
func (api *testAPI) do(t testing.TB, method, path, key string, body any) response {
	t.Helper()
	return api.doRequest(t, webtest.NewRequest(t, method, path, key, body))
}

// doRequest serves req and decodes the answer.
func (api *testAPI) doRequest(t testing.TB, req *http.Request) response {
	t.Helper()
	rec := webtest.Serve(api.h, req)
	res := response{status: rec.Status, header: rec.Header, raw: rec.Body}
	if len(res.raw) > 0 && res.raw[0] == '[' {
		require.NoError(t, json.Unmarshal(res.raw, &res.list), "body: %s", res.raw)
	} else if len(res.raw) > 0 {
		require.NoError(t, json.Unmarshal(res.raw, &res.body), "body: %s", res.raw)
	}
	return res
}

// errCode returns the code of an error answer.
func (r response) errCode() string {
	e, _ := r.body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}
