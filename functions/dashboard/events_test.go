package dashboard_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/auth"
)

// TestSampleEventsThroughAdapter feeds API Gateway's events (testdata) through the Lambda
// adapter: the sign-in page, then a sign-in form posted over HTTPS (base64 body, the CSRF
// cookie in the event's cookies): a Secure session cookie in the answer's cookies.
func TestSampleEventsThroughAdapter(t *testing.T) {
	f := newFixture(t)
	const key = "plm_DashboardEventSample000000000000000000"
	_, k, err := auth.NewKey(auth.KeySpec{ProjectID: f.api.A.ProjectID, Secret: key}, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.api.Auth.CreateKey(t.Context(), k))
	adapter := httpadapter.NewV2(f.srv.Config.Handler)
	send := func(file string) events.APIGatewayV2HTTPResponse {
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		require.NoError(t, err)
		var ev events.APIGatewayV2HTTPRequest
		require.NoError(t, json.Unmarshal(raw, &ev))
		res, err := adapter.ProxyWithContext(t.Context(), ev)
		require.NoError(t, err)
		assert.Equal(t, ev.RequestContext.RequestID, res.Headers["X-Request-Id"])
		return res
	}

	res := send("login-page.json")
	require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
	assert.Contains(t, res.Body, `name="api_key"`)
	require.Len(t, res.Cookies, 1, "API Gateway v2 sends cookies in their own field")
	assert.Regexp(t, `^plume_login=[A-Za-z0-9_-]{43}; Path=/ui; Expires=[^;]+; Max-Age=3600; HttpOnly; Secure; SameSite=Strict$`, res.Cookies[0])

	res = send("sign-in.json")
	require.Equal(t, http.StatusSeeOther, res.StatusCode, res.Body)
	assert.Equal(t, "/ui/traces", res.Headers["Location"])
	cookies := strings.Join(res.Cookies, "\n")
	assert.Regexp(t, `plume_session=[A-Za-z0-9_-]{43}; Path=/ui; Expires=[^;]+; Max-Age=43200; HttpOnly; Secure; SameSite=Lax`, cookies)
	assert.Contains(t, cookies, "plume_login=; Path=/ui; Max-Age=0", "the sign-in form's token is spent")
}
