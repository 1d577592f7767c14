package stack_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// ingestRoutes are the routes an ingest key may call: what applications need, and nothing
// that reads traces or manages the project. The test holds its own copy rather than reading
// the routers' Access, so that opening a route to ingest keys is a visible change here.
var ingestRoutes = []string{
	"POST /spans",
	"POST /traces",
	"POST /sessions",
	"POST /spans/{span_id}/attachments",
	"POST /v1/traces",
	"POST /v1/metrics",
	"POST /v1/logs",
	"POST /v1/prompts/{slug}/completions/{completion_id}/feedback",
	"GET /v1/prompts/{slug}",
	"POST /v1/tasks/{task}/prompt/versions/ensure",
	"GET /v1/tasks/{task}/prompt/versions/by-hash/{hash}",
	"GET /v1/tasks/{task}/prompt/latest",
	"GET /v1/prompt-versions/{version_id}/model",
	"POST /v1/chat/completions",
	"GET /v1/models",
	"POST /signals",
	"POST /signals/{$}",
	"POST /signals/bulk",
	"POST /ab-choices",
	// What a run of an experiment writes (the application's key runs it); each answers an id.
	"POST /v1/experiments",
	"POST /v1/experiments/{experiment_id}/results",
	"POST /v1/experiments/{experiment_id}/evaluators",
	"POST /v1/experiments/{experiment_id}/evaluations",
	"POST /v1/column-evaluations",
	"POST /v1/column-metrics",
	"POST /v1/run-metrics",
	"POST /projects/{project_id}/prompts/{slug}/completions",
}

// publicRoutes take no key at all, so no role either.
var publicRoutes = []string{
	"GET /healthz",
	"GET /openapi.json",
	"GET /f/{token}",
	"POST /f/{token}",
}

// sessionPrefix is the dashboard's path: its routes are open on the router and authenticate
// by a session cookie, whose sign-in checks the key's role itself (functions/dashboard), so a
// bearer key reaches none of its pages, whatever its role.
const sessionPrefix = "/ui"

// isSessionRoute reports whether a pattern is the dashboard's.
func isSessionRoute(pattern string) bool {
	_, path, _ := strings.Cut(pattern, " ")
	return path == sessionPrefix || strings.HasPrefix(path, sessionPrefix+"/")
}

// TestRolesEveryRoute walks every route of every function of the stack, read from the
// functions' own routers, with keys of every role of the project whose data the routes name:
//   - an ingest key gets 403 forbidden, naming the roles needed, from every route outside
//     ingestRoutes and publicRoutes, before any DynamoDB or S3 request; the routes of
//     ingestRoutes answer it without 403 and without a 5xx;
//   - a member key gets through every route but the admin-only ones (key management), which
//     answer it 403;
//   - a key stored before roles existed (no role attribute) gets through every route, as admin;
//
// and no route is open to ingest keys unless ingestRoutes lists it.
func TestRolesEveryRoute(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	v := seedVictim(t, api)
	whole, err := stack.Handler(api.Env)
	require.NoError(t, err)
	whole = api.Applying(whole) // the aggregates follow its writes, as API.Handler's
	keys := map[auth.Role]string{}
	for _, role := range auth.Roles {
		keys[role] = newKey(t, api, v.project, role)
	}
	legacy := legacyKey(t, api, v.project)

	type walked struct {
		fn string
		auth.Route
	}
	var routes []walked
	for _, fn := range stack.Functions {
		h, err := fn.Build(api.Env)
		require.NoError(t, err)
		router, ok := h.(*auth.Router)
		require.True(t, ok, "%s: its handler must be an *auth.Router, so that its routes check roles", fn.Name)
		for _, rt := range router.Routes() {
			routes = append(routes, walked{fn.Name, rt})
		}
	}
	require.NotEmpty(t, routes)

	t.Run("classification", func(t *testing.T) {
		for _, rt := range routes {
			ingest, public := slices.Contains(ingestRoutes, rt.Pattern), slices.Contains(publicRoutes, rt.Pattern)
			switch {
			case rt.Open:
				assert.True(t, ingest || public || isSessionRoute(rt.Pattern),
					"%s: open route %s is in neither ingestRoutes nor publicRoutes nor the dashboard's", rt.fn, rt.Pattern)
			case ingest:
				assert.Equal(t, auth.AllowIngest, rt.Access, "%s: %s is an ingest route", rt.fn, rt.Pattern)
			default:
				assert.NotEqual(t, auth.AllowIngest, rt.Access, "%s: %s is open to ingest keys but not in ingestRoutes", rt.fn, rt.Pattern)
			}
		}
	})

	// call sends a route its request with key, DynamoDB and S3 counters reset.
	call := func(t *testing.T, rt walked, key string) webtest.Response {
		method, path, ok := strings.Cut(rt.Pattern, " ")
		require.True(t, ok, "%s: pattern %q has no method", rt.fn, rt.Pattern)
		api.DDB.Reset()
		api.S3.Reset()
		req := webtest.NewRequest(t, method, v.pathOf(t, path), key, v.bodyOf(rt.Pattern))
		maps.Copy(req.Header, headersOf(rt.Pattern))
		return webtest.Serve(whole, req)
	}

	t.Run("ingest", func(t *testing.T) {
		webtest.Do(t, whole, "GET", "/v1/models", keys[auth.RoleIngest], nil) // the key into the cache
		refused := 0
		for _, rt := range routes {
			t.Run(rt.fn+" "+rt.Pattern, func(t *testing.T) {
				if rt.Open && isSessionRoute(rt.Pattern) {
					t.Skip("the dashboard takes a session cookie, not a bearer key")
				}
				res := call(t, rt, keys[auth.RoleIngest])
				if rt.Open || slices.Contains(ingestRoutes, rt.Pattern) {
					assert.NotEqual(t, http.StatusForbidden, res.Status, "body: %s", res.Body)
					assert.Less(t, res.Status, 500, "body: %s", res.Body)
					return
				}
				refused++
				assert.Equal(t, http.StatusForbidden, res.Status, "body: %s", res.Body)
				assert.Equal(t, "forbidden", res.ErrCode(t))
				assert.Contains(t, string(res.Body), "needs an API key with the "+rt.Access.String()+" role; this key's role is ingest")
				assert.Zero(t, api.DDB.Total(), "DynamoDB requests before the role check: %s", api.DDB)
				assert.Zero(t, api.S3.Count("PutObject")+api.S3.Count("GetObject"), "S3 requests before the role check")
			})
		}
		t.Logf("an ingest key was refused by %d of %d routes", refused, len(routes))
	})

	for _, tt := range []struct{ name, key string }{{"member", keys[auth.RoleMember]}, {"stored before roles", legacy}} {
		t.Run(tt.name, func(t *testing.T) {
			for _, rt := range routes {
				t.Run(rt.fn+" "+rt.Pattern, func(t *testing.T) {
					if rt.Open && isSessionRoute(rt.Pattern) {
						t.Skip("the dashboard takes a session cookie, not a bearer key")
					}
					res := call(t, rt, tt.key)
					if rt.Access == auth.AdminOnly && !rt.Open && tt.name == "member" {
						assert.Equal(t, http.StatusForbidden, res.Status, "body: %s", res.Body)
						return
					}
					// Through the role check: the handler's answer, whatever it is (the optimizer's
					// start is 503 here: no worker serves its queue in this test).
					assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, res.Status, "body: %s", res.Body)
				})
			}
		})
	}
}

// newKey issues a key of role in project.
func newKey(t *testing.T, api *apitest.API, project string, role auth.Role) string {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, User: auth.User{ID: "u-" + string(role)}, Role: role}, time.Now())
	require.NoError(t, err)
	require.NoError(t, api.Auth.CreateKey(context.Background(), k))
	return secret
}

// legacyKey issues a key of project and removes the role from its items, as the items of keys
// issued before roles existed are.
func legacyKey(t *testing.T, api *apitest.API, project string) string {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, User: auth.User{ID: "u-legacy"}, Role: auth.RoleIngest}, time.Now())
	require.NoError(t, err)
	require.NoError(t, api.Auth.CreateKey(context.Background(), k))
	client := ddbtest.Client(t, nil)
	for _, key := range [][2]string{{"APIKEY#" + k.Hash, "APIKEY"}, {"P#" + project, "KEY#" + k.ID}} {
		_, err := client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName:                aws.String(api.TableName),
			Key:                      map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: key[0]}, "SK": &types.AttributeValueMemberS{Value: key[1]}},
			UpdateExpression:         aws.String("REMOVE #role"),
			ConditionExpression:      aws.String("attribute_exists(#role)"),
			ExpressionAttributeNames: map[string]string{"#role": "role"},
		})
		require.NoError(t, err, "the item %v had a role to remove", key)
	}
	return secret
}
