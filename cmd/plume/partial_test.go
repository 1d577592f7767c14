package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
)

// TestPartialListsWarn: a list the server cut says so on stderr, in text and json output and
// with --quiet, and stdout holds the records only; --all fetches what a cut by size left.
func TestPartialListsWarn(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	fx := newTraceFixture(t, h)
	use := func(scanCut, sizeCut bool) *clientHarness {
		srv := httptest.NewServer(apitest.PartialLists(h.api.Handler, scanCut, sizeCut))
		t.Cleanup(srv.Close)
		p := *h
		p.env = maps(h.env, map[string]string{"PLUME_BASE_URL": srv.URL})
		return &p
	}
	scanCut, sizeCut := use(true, false), use(false, true)

	window, lookup := "narrow the window with --created-after and --created-before", "are not listed, at any offset"
	tests := []struct {
		args []string
		what string // what the warning says to do
	}{
		{[]string{"traces", "list"}, window},
		{[]string{"spans", "list", "--kind", "llm"}, window},
		{[]string{"sessions", "list"}, window},
		{[]string{"traces", "spans", fx.trace}, lookup},
		{[]string{"spans", "list", "--session-id", fx.session}, lookup},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			h, scanCut := *h, *scanCut
			h.t, scanCut.t = t, t
			want := h.ok(append([]string{"--output", "json"}, tt.args...)...)
			for _, mode := range [][]string{{"--output", "json"}, {"--output", "json", "--quiet"}, {}} {
				r := scanCut.run(append(mode, tt.args...)...)
				require.Equal(t, exitOK, r.code, "%v: a partial list is still a list\n%s", tt.args, r)
				assert.Contains(t, r.stderr, "warning: the server stopped at its scan bound", "%v %v", mode, tt.args)
				assert.Contains(t, r.stderr, client.HeaderScanTruncated)
				assert.Contains(t, r.stderr, tt.what)
				if len(mode) > 0 {
					assert.JSONEq(t, want, r.stdout, "%v: stdout is the records only", tt.args)
				}
			}
			r := h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Empty(t, r.stderr, "%v: a complete list warns of nothing", tt.args)
		})
	}

	args := []string{"--output", "json", "traces", "list", "--sort-by", "started_at", "--sort-order", "asc"}
	var all []struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(h.ok(args...)), &all))
	require.Len(t, all, 3)

	r := sizeCut.run(args...)
	require.Equal(t, exitOK, r.code, "%s", r)
	var rows []struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	assert.Equal(t, all[:1], rows)
	assert.Contains(t, r.stderr, "warning: the server cut its answer by size")
	assert.Contains(t, r.stderr, "--all")
	assert.Contains(t, r.stderr, "--offset 1")

	r = sizeCut.run(append(args, "--all")...)
	require.Equal(t, exitOK, r.code, "%s", r)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	assert.Equal(t, all, rows, "--all asks for the rest")
	assert.Empty(t, r.stderr)
}
