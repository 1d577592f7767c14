package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

func TestPage(t *testing.T) {
	type item struct {
		N    int    `json:"n"`
		Text string `json:"text"`
	}
	items := func(n int) []item {
		out := make([]item, n)
		for i := range out {
			out[i] = item{N: i, Text: strings.Repeat("x<&\"", 10)}
		}
		return out
	}
	one := httptest.NewRecorder()
	OK(one, items(1)[0])
	size := one.Body.Len() - 1 // an item's encoding, without the newline; commas apart
	tests := []struct {
		name   string
		items  []item
		offset int
		budget int
		want   int    // items answered
		next   string // X-Plume-Next-Offset; "" when the page is whole
		more   bool   // items follow the page
	}{
		{"empty", nil, 0, 100, 0, "", false},
		{"whole", items(3), 0, 1000, 3, "", false},
		{"whole, more follow", items(3), 0, 1000, 3, "", true},
		{"exactly the budget", items(3), 0, len("[") + 3*size + len(",,") + len("]\n"), 3, "", false},
		{"one byte short", items(3), 0, len("[") + 3*size + len(",,") + len("]\n") - 1, 2, "2", false},
		{"cut after an offset", items(10), 40, len("[") + 3*size + len(",,") + len("]\n") + size, 3, "43", true},
		{"the first item alone past the budget", items(2), 7, 10, 1, "8", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/spans?limit=10&names=a&names=b&offset=7&env=prod", nil)
			rec := httptest.NewRecorder()
			p := Paging{Offset: tt.offset, CursorAfter: func(i int) string { return fmt.Sprintf("c%d", i+1) }}
			if tt.more {
				p.Next = fmt.Sprintf("c%d", len(tt.items))
			}
			Page(rec, r, tt.items, p, tt.budget)

			require.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			// The prefix as web.OK would send it.
			whole := httptest.NewRecorder()
			OK(whole, tt.items[:tt.want:tt.want])
			if tt.want == 0 {
				assert.Equal(t, "[]\n", rec.Body.String())
			} else {
				assert.Equal(t, whole.Body.String(), rec.Body.String())
			}
			if tt.want > 1 {
				assert.LessOrEqual(t, rec.Body.Len(), tt.budget)
			}
			assert.Equal(t, tt.next, rec.Header().Get(api.NextOffsetHeader))
			if tt.next == "" && !tt.more {
				assert.Empty(t, rec.Header().Get("Link"))
				assert.Empty(t, rec.Header().Get(api.NextCursorHeader))
				return
			}
			cursor := fmt.Sprintf("c%d", tt.want)
			assert.Equal(t, cursor, rec.Header().Get(api.NextCursorHeader), "the cursor after the last item answered")
			link := rec.Header().Get("Link")
			target, ok := strings.CutSuffix(link, `>; rel="next"`)
			require.True(t, ok, "Link %q", link)
			u, err := url.Parse(strings.TrimPrefix(target, "<"))
			require.NoError(t, err)
			assert.Equal(t, "/spans", u.Path)
			assert.Equal(t, url.Values{"limit": {"10"}, "names": {"a", "b"}, "cursor": {cursor}, "env": {"prod"}}, u.Query())
		})
	}
}

// TestMaxAnswerBytesFitsLambda: an answer cut at api.MaxAnswerBytes, of the JSON that grows the
// most in the API Gateway proxy envelope (strings of quotes: each '"' is \" in the answer and
// \\\" in the envelope), with a long Link header, is under Lambda's 6 MB response payload limit
// once the adapter has made it an events.APIGatewayV2HTTPResponse and the runtime has encoded it
// (aws-lambda-go's handler: a json.Encoder, HTML escaping off).
func TestMaxAnswerBytesFitsLambda(t *testing.T) {
	const lambdaMaxPayload = 6 << 20 // 6,291,456 bytes
	items := make([]string, 100)
	for i := range items {
		items[i] = strings.Repeat(`"`, 40_000)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Plume-Tag-Filters", strings.Repeat("%22", 3000))
		cursor := func(int) string { return strings.Repeat("c", api.MaxCursorBytes) }
		Page(w, r, items, Paging{CursorAfter: cursor}, api.MaxAnswerBytes)
	})
	// API Gateway takes at most 10,240 bytes of request line and headers.
	query := "offset=0&q=" + strings.Repeat("%22", 3000)
	res, err := httpadapter.NewV2(h).ProxyWithContext(context.Background(), events.APIGatewayV2HTTPRequest{
		RawPath: "/spans", RawQueryString: query,
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/spans"}},
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.False(t, res.IsBase64Encoded)
	require.NotEmpty(t, res.Headers[api.NextOffsetHeader], "the page is cut")
	assert.Greater(t, len(res.Body), api.MaxAnswerBytes-100_000, "the answer is near the budget")

	var envelope bytes.Buffer
	enc := json.NewEncoder(&envelope)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(res))
	assert.Less(t, envelope.Len(), lambdaMaxPayload, "envelope of %d bytes for an answer of %d", envelope.Len(), len(res.Body))
	t.Logf("answer %d bytes, envelope %d bytes, margin %d", len(res.Body), envelope.Len(), lambdaMaxPayload-envelope.Len())
}
