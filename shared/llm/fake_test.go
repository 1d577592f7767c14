package llm_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
)

// reply is one scripted answer of the fake provider.
type reply struct {
	status int
	header map[string]string
	file   string // a recorded answer in testdata
	body   string // or an inline body
}

// received is a request the fake provider got.
type received struct {
	Method, Path, RawPath, Query string
	Header                       http.Header
	Body                         []byte
}

// provider is a fake model provider on loopback: it answers the scripted replies in order and
// records what it receives.
type provider struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []received
	sleeps  []time.Duration
}

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	p := &provider{t: t, replies: replies}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.got = append(p.got, received{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(),
		Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if len(p.replies) == 0 {
		p.mu.Unlock()
		p.t.Errorf("unexpected request %d to %s", len(p.got), r.URL.Path)
		http.Error(w, "unexpected", http.StatusTeapot)
		return
	}
	rep := p.replies[0]
	p.replies = p.replies[1:]
	p.mu.Unlock()
	data := []byte(rep.body)
	if rep.file != "" {
		var err error
		data, err = os.ReadFile(filepath.Join("testdata", rep.file))
		if err != nil {
			p.t.Errorf("read %s: %v", rep.file, err)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(cmpOr(rep.status, http.StatusOK))
	_, _ = w.Write(data)
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// requests returns what the provider received.
func (p *provider) requests() []received {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]received(nil), p.got...)
}

// sleep records the waits between attempts instead of waiting.
func (p *provider) sleep(ctx context.Context, d time.Duration) error {
	p.mu.Lock()
	p.sleeps = append(p.sleeps, d)
	p.mu.Unlock()
	return ctx.Err()
}

func (p *provider) waits() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.sleeps...)
}

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// client returns a Client whose every provider is p, with options adjusted by opts.
func (p *provider) client(opts ...func(*llm.Options)) *llm.Client {
	e := llm.Endpoint{BaseURL: p.srv.URL, APIKey: "test-key"}
	azure := e
	azure.APIVersion = "2024-10-21"
	cfg := llm.Config{Providers: map[string]llm.Endpoint{
		llm.ProviderOpenAI: e, llm.ProviderAnthropic: e, llm.ProviderAzure: azure,
		llm.ProviderGroq: e, llm.ProviderOllama: {BaseURL: p.srv.URL},
		llm.ProviderBedrock: {BaseURL: p.srv.URL, Region: "us-east-1"},
	}}
	o := llm.Options{
		Sleep: p.sleep,
		Now:   func() time.Time { return testNow },
		AWSCredentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
		}),
	}
	for _, f := range opts {
		f(&o)
	}
	return llm.New(cfg, o)
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}
