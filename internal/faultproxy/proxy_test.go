package faultproxy_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/faultproxy"
)

// These tests put the proxy in front of a small HTTP server that records what reaches it, to
// pin down the rules and the answers on the wire; dynamodb_test.go and s3_test.go check what
// the AWS SDK makes of them against the real emulators.

// received is a request as the target saw it.
type received struct {
	Method, RequestURI, Host string
	Header                   http.Header
	Body                     string
}

// target is a server that records every request and answers 200 "from target".
type target struct {
	URL string
	mu  sync.Mutex
	got []received
}

func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tg.mu.Lock()
		tg.got = append(tg.got, received{r.Method, r.RequestURI, r.Host, r.Header.Clone(), string(body)})
		tg.mu.Unlock()
		w.Header().Set("X-From-Target", "yes")
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "from target")
	}))
	t.Cleanup(srv.Close)
	tg.URL = srv.URL
	return tg
}

func (tg *target) requests() []received {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]received(nil), tg.got...)
}

// dynamoRequest returns a request of DynamoDB operation op to url.
func dynamoRequest(ctx context.Context, url, op string) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/", strings.NewReader(`{"TableName":"t"}`))
	if err != nil {
		return nil, err
	}
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	return r, nil
}

// send sends r and returns its status and body, or the transport error.
func send(r *http.Request) (int, string, error) {
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, string(body), err
}

// sendOp sends a request of DynamoDB operation op to url.
func sendOp(ctx context.Context, url, op string) (int, string, error) {
	r, err := dynamoRequest(ctx, url, op)
	if err != nil {
		return 0, "", err
	}
	return send(r)
}

func TestForwardsUnchanged(t *testing.T) {
	tg := newTarget(t)
	p := faultproxy.New(t, tg.URL)
	const uri = "/bucket/dir/a%2Fb%20c+d!%27%28%29%2A?x-id=PutObject&tagging"
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPut, p.URL()+uri, strings.NewReader("the body"))
	require.NoError(t, err)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=0")
	r.Header.Set("X-Amz-Date", "20260101T000000Z")
	r.Header.Add("X-Amz-Meta-Twice", "one")
	r.Header.Add("X-Amz-Meta-Twice", "two")
	r.Header.Set("User-Agent", "aws-sdk-go-v2/test")

	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "from target", string(body))
	assert.Equal(t, "yes", res.Header.Get("X-From-Target"), "the target's headers come back")

	got := tg.requests()
	require.Len(t, got, 1)
	assert.Equal(t, http.MethodPut, got[0].Method)
	assert.Equal(t, uri, got[0].RequestURI, "path and query as sent")
	assert.Equal(t, strings.TrimPrefix(p.URL(), "http://"), got[0].Host, "the proxy's Host, which the client signed")
	assert.Equal(t, "the body", got[0].Body)
	for _, h := range []string{"Authorization", "X-Amz-Date", "X-Amz-Meta-Twice", "User-Agent"} {
		assert.Equal(t, r.Header.Values(h), got[0].Header.Values(h), h)
	}
	assert.Equal(t, "8", got[0].Header.Get("Content-Length"))
	assert.Empty(t, got[0].Header.Values("X-Forwarded-For"), "no header added")
	assert.Equal(t, []string{"PUT object"}, p.Log())
}

func TestRules(t *testing.T) {
	const forwarded, throttled = http.StatusOK, http.StatusBadRequest
	tests := []struct {
		name  string
		rules []faultproxy.Rule
		ops   []string // DynamoDB operations sent in order
		want  []int    // the status each one gets
	}{
		{
			name: "no rule",
			ops:  []string{"PutItem", "Query"},
			want: []int{forwarded, forwarded},
		},
		{
			name:  "zero Nth: the first matching request",
			rules: []faultproxy.Rule{{Op: "PutItem", Fault: faultproxy.Throttle}},
			ops:   []string{"Query", "PutItem", "PutItem"},
			want:  []int{forwarded, throttled, forwarded},
		},
		{
			name:  "the Nth",
			rules: []faultproxy.Rule{{Op: "PutItem", Nth: 2, Fault: faultproxy.Throttle}},
			ops:   []string{"PutItem", "Query", "PutItem", "PutItem"},
			want:  []int{forwarded, forwarded, throttled, forwarded},
		},
		{
			name:  "the Nth and the following ones",
			rules: []faultproxy.Rule{{Op: "PutItem", Nth: 2, Following: 1, Fault: faultproxy.Throttle}},
			ops:   []string{"PutItem", "PutItem", "PutItem", "PutItem"},
			want:  []int{forwarded, throttled, throttled, forwarded},
		},
		{
			name:  "forever",
			rules: []faultproxy.Rule{{Op: "PutItem", Nth: 2, Following: faultproxy.Forever, Fault: faultproxy.Throttle}},
			ops:   []string{"PutItem", "PutItem", "Query", "PutItem", "PutItem"},
			want:  []int{forwarded, throttled, forwarded, throttled, throttled},
		},
		{
			name:  "any operation",
			rules: []faultproxy.Rule{{Op: faultproxy.Any, Nth: 2, Fault: faultproxy.Throttle}},
			ops:   []string{"Query", "PutItem", "GetItem"},
			want:  []int{forwarded, throttled, forwarded},
		},
		{
			name: "the first rule added applies; the others count the request too",
			rules: []faultproxy.Rule{
				{Op: "PutItem", Fault: faultproxy.ServerError},
				{Op: faultproxy.Any, Nth: 1, Following: 1, Fault: faultproxy.Throttle},
			},
			ops:  []string{"PutItem", "Query", "Query"},
			want: []int{http.StatusInternalServerError, throttled, forwarded},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := faultproxy.New(t, newTarget(t).URL)
			for _, r := range tt.rules {
				p.Fail(r)
			}
			got := make([]int, len(tt.ops))
			for i, op := range tt.ops {
				status, _, err := sendOp(t.Context(), p.URL(), op)
				require.NoError(t, err)
				got[i] = status
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.ops, p.Log())
		})
	}
}

func TestRulesCountFromWhenAdded(t *testing.T) {
	p := faultproxy.New(t, newTarget(t).URL)
	for range 3 {
		status, _, err := sendOp(t.Context(), p.URL(), "PutItem")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
	}
	p.Fail(faultproxy.Rule{Op: "PutItem", Nth: 2, Fault: faultproxy.Throttle})
	var got []int
	for range 3 {
		status, _, err := sendOp(t.Context(), p.URL(), "PutItem")
		require.NoError(t, err)
		got = append(got, status)
	}
	assert.Equal(t, []int{http.StatusOK, http.StatusBadRequest, http.StatusOK}, got)
}

func TestCountLogReset(t *testing.T) {
	tg := newTarget(t)
	p := faultproxy.New(t, tg.URL)
	p.Fail(faultproxy.Rule{Op: faultproxy.Any, Following: faultproxy.Forever, Fault: faultproxy.Throttle})
	for _, op := range []string{"PutItem", "Query", "PutItem"} {
		status, _, err := sendOp(t.Context(), p.URL(), op)
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, status)
	}
	assert.Equal(t, 2, p.Count("PutItem"), "failed requests are counted")
	assert.Equal(t, 1, p.Count("Query"))
	assert.Equal(t, 0, p.Count("GetItem"))
	assert.Equal(t, 3, p.Count(faultproxy.Any))
	assert.Equal(t, []string{"PutItem", "Query", "PutItem"}, p.Log())
	assert.Empty(t, tg.requests(), "nothing forwarded")

	p.Reset()
	assert.Equal(t, 0, p.Count("PutItem"))
	assert.Equal(t, 0, p.Count(faultproxy.Any))
	assert.Empty(t, p.Log())
	status, _, err := sendOp(t.Context(), p.URL(), "PutItem")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, "the rule is gone")
	assert.Equal(t, []string{"PutItem"}, p.Log())
}

// TestErrorAnswers pins the error answers down on the wire, in each service's own format.
func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		name        string
		dynamo      bool
		fault       faultproxy.Fault
		status      int
		contentType string
		code        string
	}{
		{"DynamoDB throttle", true, faultproxy.Throttle, http.StatusBadRequest, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"},
		{"DynamoDB server error", true, faultproxy.ServerError, http.StatusInternalServerError, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#InternalServerError"},
		{"S3 throttle", false, faultproxy.Throttle, http.StatusServiceUnavailable, "application/xml", "SlowDown"},
		{"S3 server error", false, faultproxy.ServerError, http.StatusInternalServerError, "application/xml", "InternalError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			p := faultproxy.New(t, tg.URL)
			p.Fail(faultproxy.Rule{Op: faultproxy.Any, Fault: tt.fault})
			r, err := dynamoRequest(t.Context(), p.URL(), "PutItem")
			if !tt.dynamo {
				r, err = http.NewRequestWithContext(t.Context(), http.MethodPut, p.URL()+"/bucket/key", strings.NewReader("body"))
			}
			require.NoError(t, err)
			res, err := http.DefaultClient.Do(r)
			require.NoError(t, err)
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)

			assert.Equal(t, tt.status, res.StatusCode)
			assert.Equal(t, tt.contentType, res.Header.Get("Content-Type"))
			if tt.dynamo {
				var raw map[string]string
				require.NoError(t, json.Unmarshal(body, &raw), string(body))
				assert.Equal(t, tt.code, raw["__type"])
				assert.Contains(t, raw["message"], "faultproxy")
			} else {
				var e struct{ Code, Message, RequestId string }
				require.NoError(t, xml.Unmarshal(body, &e), string(body))
				assert.Equal(t, tt.code, e.Code)
				assert.Contains(t, e.Message, "faultproxy")
				assert.NotEmpty(t, e.RequestId)
			}
			assert.Empty(t, tg.requests(), "not forwarded")
		})
	}
}

func TestDropsAndDelays(t *testing.T) {
	tests := []struct {
		name      string
		fault     faultproxy.Fault
		answered  bool // the client gets the target's answer
		forwarded bool // the target gets the request
	}{
		{name: "drop", fault: faultproxy.Drop},
		{name: "drop after forward", fault: faultproxy.DropAfterForward, forwarded: true},
		{name: "delay", fault: faultproxy.Delay(time.Millisecond), answered: true, forwarded: true},
		{name: "zero delay", fault: faultproxy.Delay(0), answered: true, forwarded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			p := faultproxy.New(t, tg.URL)
			p.Fail(faultproxy.Rule{Op: "PutItem", Fault: tt.fault})
			status, body, err := sendOp(t.Context(), p.URL(), "PutItem")
			if tt.answered {
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, status)
				assert.Equal(t, "from target", body)
			} else {
				assert.Error(t, err, "no answer: got %d %q", status, body)
			}
			assert.Equal(t, tt.forwarded, len(tg.requests()) == 1, "forwarded")
			assert.Equal(t, []string{"PutItem"}, p.Log())

			status, _, err = sendOp(t.Context(), p.URL(), "PutItem")
			require.NoError(t, err, "the next request passes")
			assert.Equal(t, http.StatusOK, status)
		})
	}
}

// wroteRequest returns a context whose requests call wrote once they have been sent.
func wroteRequest(ctx context.Context, wrote func()) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote() },
	})
}

func TestDelayedRequestIsNotForwardedOnceTheClientLeaves(t *testing.T) {
	tg := newTarget(t)
	t.Run("client gives up", func(t *testing.T) {
		p := faultproxy.New(t, tg.URL)
		p.Fail(faultproxy.Rule{Op: "PutItem", Fault: faultproxy.Delay(time.Hour)})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		_, _, err := sendOp(wroteRequest(ctx, cancel), p.URL(), "PutItem")
		assert.ErrorIs(t, err, context.Canceled)
	}) // the proxy is closed here, once its handlers have returned
	assert.Empty(t, tg.requests())
}

func TestCloseEndsDelayedRequests(t *testing.T) {
	tg := newTarget(t)
	errc := make(chan error, 1)
	t.Run("proxy", func(t *testing.T) {
		p := faultproxy.New(t, tg.URL)
		p.Fail(faultproxy.Rule{Op: "PutItem", Fault: faultproxy.Delay(time.Hour)})
		wrote := make(chan struct{})
		ctx := wroteRequest(context.Background(), sync.OnceFunc(func() { close(wrote) }))
		go func() {
			_, _, err := sendOp(ctx, p.URL(), "PutItem")
			errc <- err
		}()
		select {
		case <-wrote:
		case err := <-errc:
			errc <- err // the request ended before it was sent; reported below
		}
	}) // the proxy closes here, with the request held
	assert.Error(t, <-errc, "the held request is dropped, not answered")
	assert.Empty(t, tg.requests())
}

func TestConcurrentUse(t *testing.T) {
	const workers, each = 8, 25
	tg := newTarget(t)
	p := faultproxy.New(t, tg.URL)
	p.Fail(faultproxy.Rule{Op: faultproxy.Any, Nth: 10, Following: 4, Fault: faultproxy.Throttle})
	statuses := make(chan int, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				status, _, err := sendOp(t.Context(), p.URL(), "PutItem")
				assert.NoError(t, err)
				statuses <- status
				_ = p.Count("PutItem") // read while others write
				_ = p.Log()
			}
		})
	}
	wg.Wait()
	close(statuses)
	got := map[int]int{}
	for s := range statuses {
		got[s]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: workers*each - 5, http.StatusBadRequest: 5}, got)
	assert.Equal(t, workers*each, p.Count("PutItem"))
	assert.Len(t, p.Log(), workers*each)
	assert.Len(t, tg.requests(), workers*each-5)
}
