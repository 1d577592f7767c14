package feedback_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/config"
)

// Headers a key holder sets to mint a link that points at a host of theirs.
var forged = map[string]string{
	"Host":              "evil.example",
	"X-Forwarded-Proto": "javascript",
	"X-Forwarded-Host":  "evil.example",
}

// TestLinkURLIgnoresForgedHost: the URL of a new feedback link never comes from the request's
// Host or X-Forwarded-* headers (issue 11): it is PLUME_PUBLIC_URL's, else the API Gateway
// domain of the Lambda event, else a relative path; a forged header appears nowhere in the
// answer.
func TestLinkURLIgnoresForgedHost(t *testing.T) {
	const gateway = "abc123.execute-api.us-east-1.amazonaws.com" // the golden event's domainName
	tests := []struct {
		name      string
		publicURL string
		lambda    bool // through the Lambda adapter, with events/feedback/create-link.json
		want      string
	}{
		{"no public URL, no Lambda: a relative URL", "", false, `^/f/plf_[A-Za-z0-9_-]{43}$`},
		{"no public URL, in Lambda: the gateway's domain", "", true, `^https://abc123\.execute-api\.us-east-1\.amazonaws\.com/f/plf_[A-Za-z0-9_-]{43}$`},
		{"public URL", "https://feedback.example.com", false, `^https://feedback\.example\.com/f/plf_[A-Za-z0-9_-]{43}$`},
		{"public URL, in Lambda", "https://feedback.example.com", true, `^https://feedback\.example\.com/f/plf_[A-Za-z0-9_-]{43}$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.PublicURL = tt.publicURL }})
			api.EnsurePrompt(t, api.A, "support-bot", "You are a support bot.")
			var status int
			var body string
			if tt.lambda {
				status, body = createLinkInLambda(t, api, gateway)
			} else {
				req := webtest.NewRequest(t, "POST", "/feedback-links", api.A.Key, map[string]any{"prompt_slug": "support-bot", "link_type": "prompt_completion"})
				for k, v := range forged {
					req.Header.Set(k, v)
				}
				req.Host = forged["Host"]
				rec := httptest.NewRecorder()
				api.Handler.ServeHTTP(rec, req)
				status, body = rec.Code, rec.Body.String()
			}
			require.Equal(t, http.StatusOK, status, body)
			var link struct {
				URL string `json:"url"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &link))
			assert.Regexp(t, tt.want, link.URL)
			for _, v := range forged {
				assert.NotContains(t, body, v)
			}
		})
	}
}

// createLinkInLambda sends the golden event of POST /feedback-links, its headers forged,
// through the Lambda adapter the functions run behind, and returns the answer.
func createLinkInLambda(t *testing.T, api *apitest.API, domain string) (int, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "events", "feedback", "create-link.json"))
	require.NoError(t, err)
	var ev events.APIGatewayV2HTTPRequest
	require.NoError(t, json.Unmarshal(raw, &ev))
	require.Equal(t, domain, ev.RequestContext.DomainName)
	ev.Headers["authorization"] = "Bearer " + api.A.Key
	for k, v := range forged {
		ev.Headers[strings.ToLower(k)] = v
	}
	res, err := httpadapter.NewV2(api.Handler).ProxyWithContext(context.Background(), ev)
	require.NoError(t, err)
	return res.StatusCode, res.Body
}
