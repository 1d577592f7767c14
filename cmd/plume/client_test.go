package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// clientHarness runs plume's client commands in-process against the whole API (every function,
// DynamoDB Local, the embedded S3) behind a real HTTP server, as tenant A, with its own
// configuration directory.
type clientHarness struct {
	t   *testing.T
	api *apitest.API
	url string
	env map[string]string
}

func newClientHarness(t *testing.T, opts apitest.Options) *clientHarness {
	t.Helper()
	a := apitest.New(t, opts)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return &clientHarness{t: t, api: a, url: srv.URL, env: map[string]string{
		"PLUME_BASE_URL":   srv.URL,
		"PLUME_API_KEY":    a.A.Key,
		"PLUME_PROJECT_ID": a.A.ProjectID,
		"XDG_CONFIG_HOME":  t.TempDir(),
	}}
}

// run executes plume with args; stdin is the command's standard input.
func (h *clientHarness) run(args ...string) result { return h.runIn("", args...) }

func (h *clientHarness) runIn(stdin string, args ...string) result {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	f := cmdutil.New(func(k string) string { return h.env[k] }, &stdout, &stderr)
	f.IO.In = strings.NewReader(stdin)
	code := execute(context.Background(), f, args)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// ok runs args, requires success and returns stdout.
func (h *clientHarness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, exitOK, r.code, "plume %s\n%s", strings.Join(args, " "), r)
	return r.stdout
}

// okJSON runs args in json mode and decodes stdout into v.
func (h *clientHarness) okJSON(v any, args ...string) {
	h.t.Helper()
	out := h.ok(append([]string{"--output", "json"}, args...)...)
	require.NoError(h.t, json.Unmarshal([]byte(out), v), "stdout is not JSON: %s", out)
}

// scrubbers replace what changes from run to run (ids, times, hashes, keys) in golden output.
var scrubbers = []struct {
	re   *regexp.Regexp
	with string // "" numbers the matches: <uuid-1>, <uuid-2>, ... in order of appearance
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), ""},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "<sha256>"},
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "<hex32>"},
	{regexp.MustCompile(`plm_[A-Za-z0-9_-]+`), "<key>"},
	{regexp.MustCompile(`\bu-[0-9a-f]{8}\b`), "<user>"},
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+`), "<base-url>"},
	{regexp.MustCompile(`\b[0-9a-f]{8}@example\.com\b`), "<email>"}, // webtest tenants' users
	{regexp.MustCompile(`\bTester [0-9a-f]{4}\b`), "Tester <user>"},
	{regexp.MustCompile(`"latency_ms": [0-9.e+-]+`), `"latency_ms": <ms>`},              // optimization simulations: measured
	{regexp.MustCompile(`plf_[A-Za-z0-9_-]+`), "<link-token>"},                          // feedback links' tokens
	{regexp.MustCompile(`X-Amz-Date=\d{8}T\d{6}Z`), "X-Amz-Date=<amz-date>"},            // presigned URLs: signing time
	{regexp.MustCompile(`%2F\d{8}%2F`), "%2F<amz-day>%2F"},                              // and the credential's day
	{regexp.MustCompile(`Credential=plumetest[0-9a-z]+%2F`), "Credential=plumetest%2F"}, // and the test's key (blobtest.AccessKeyFor)
}

// inner collapses the padding of text tables, whose width follows the scrubbed values.
var inner = regexp.MustCompile(`(\S)  +`)

// scrub makes out comparable across runs.
func scrub(out string) string {
	ids := map[string]string{}
	for _, s := range scrubbers {
		out = s.re.ReplaceAllStringFunc(out, func(m string) string {
			if s.with != "" {
				return s.with
			}
			if _, ok := ids[m]; !ok {
				ids[m] = fmt.Sprintf("<uuid-%d>", len(ids)+1)
			}
			return ids[m]
		})
	}
	return inner.ReplaceAllString(out, "$1  ")
}

// golden compares the scrubbed out with testdata/golden/<name>.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	got := scrub(out)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run go test ./cmd/plume -run %s -update", t.Name())
	assert.Equal(t, string(want), got, "%s differs: rerun with -update after checking the change", path)
}

// goldenBoth runs args in text and json mode and compares each with its golden file.
func (h *clientHarness) goldenBoth(name string, args ...string) {
	h.t.Helper()
	golden(h.t, name+".text", h.ok(args...))
	golden(h.t, name+".json", h.ok(append([]string{"--output", "json"}, args...)...))
}

// usageError is a command line that cannot run, before or after the API answers.
type usageError struct {
	name string
	args []string
	// code is the error's code in json mode, and stderr a part of its message in both modes.
	code   errs.Code
	stderr string
}

// refuses runs each of tests as a subtest: it exits 2 with nothing on stdout and its message on
// stderr, and in json mode the same message as the error shape with its code.
func (h *clientHarness) refuses(tests []usageError) {
	for _, tt := range tests {
		h.t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			r := h.run(tt.args...)
			assert.Equal(t, exitUsage, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, tt.stderr)
			r = h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Equal(t, exitUsage, r.code, "%s", r)
			var body jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), "stderr is not JSON: %s", r.stderr)
			assert.Equal(t, string(tt.code), body.Error.Code)
			assert.Contains(t, body.Error.Message, tt.stderr)
		})
	}
}
