package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
)

// listNote is what json output says of a list on stderr.
type listNote struct {
	List struct {
		NextCursor *string  `json:"next_cursor"`
		Partial    bool     `json:"partial"`
		Truncated  bool     `json:"truncated"`
		Scanned    int      `json:"scanned"`
		Warnings   []string `json:"warnings"`
	} `json:"list"`
}

// note reads the list note of json output's stderr (its first line).
func note(t *testing.T, stderr string) listNote {
	t.Helper()
	var n listNote
	line, _, _ := strings.Cut(stderr, "\n")
	require.NoError(t, json.Unmarshal([]byte(line), &n), "stderr is not a list note: %s", stderr)
	return n
}

// through is h's commands sent to the API through wrap.
func through(h *clientHarness, wrap func(http.Handler) http.Handler) *clientHarness {
	srv := httptest.NewServer(wrap(h.api.Handler))
	h.t.Cleanup(srv.Close)
	p := *h
	p.env = maps(h.env, map[string]string{"PLUME_BASE_URL": srv.URL})
	return &p
}

// ids is the id of each record of a json list.
func ids(t *testing.T, stdout string) []string {
	t.Helper()
	var rows []struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows), "stdout is not a JSON list: %s", stdout)
	out := []string{}
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

// TestPartialListsWarn: a list the server cut says so on stderr, as warnings in text output
// (also with --quiet) and as the list note in json output, and stdout holds the records only;
// a page cut by size names the cursor that reads on, which --cursor and --all follow.
func TestPartialListsWarn(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	fx := newTraceFixture(t, h)
	scanCut := through(h, func(h http.Handler) http.Handler { return apitest.PartialLists(h, true, false) })
	sizeCut := through(h, func(h http.Handler) http.Handler { return apitest.PartialLists(h, false, true) })

	window, lookup := "narrow the window with --created-after and --created-before", "are not listed, at any offset or cursor"
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
			for _, mode := range [][]string{{"--output", "json"}, {"--output", "json", "--quiet"}} {
				r := scanCut.run(append(mode, tt.args...)...)
				require.Equal(t, exitOK, r.code, "%v: a partial list is still a list\n%s", tt.args, r)
				assert.JSONEq(t, want, r.stdout, "%v: stdout is the records only", tt.args)
				n := note(t, r.stderr)
				assert.True(t, n.List.Partial)
				assert.True(t, n.List.Truncated)
				assert.Nil(t, n.List.NextCursor)
				require.Len(t, n.List.Warnings, 1)
				assert.Contains(t, n.List.Warnings[0], "the server stopped at its scan bound")
				assert.Contains(t, n.List.Warnings[0], client.HeaderScanTruncated)
				assert.Contains(t, n.List.Warnings[0], tt.what)
			}
			for _, mode := range [][]string{{}, {"--quiet"}} {
				r := scanCut.run(append(mode, tt.args...)...)
				require.Equal(t, exitOK, r.code, "%s", r)
				assert.Contains(t, r.stderr, "warning: the server stopped at its scan bound", "%v %v", mode, tt.args)
				assert.Contains(t, r.stderr, tt.what)
			}
			r := h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Empty(t, r.stderr, "%v: a complete list says nothing", tt.args)
		})
	}

	// A page the scan bound cut whose list goes on: the warning, and where it goes on.
	r := scanCut.run("traces", "list", "--limit", "1")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stderr, "warning: the server stopped at its scan bound")
	assert.Regexp(t, `more traces follow: rerun with --cursor \S+ to read on`, r.stderr)

	args := []string{"--output", "json", "traces", "list", "--sort-by", "started_at", "--sort-order", "asc"}
	all := ids(t, h.ok(args...))
	require.Len(t, all, 3)

	r = sizeCut.run(args...)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Equal(t, all[:1], ids(t, r.stdout))
	n := note(t, r.stderr)
	assert.True(t, n.List.Partial, "fewer than --limit asked")
	assert.False(t, n.List.Truncated)
	require.NotNil(t, n.List.NextCursor)
	require.Len(t, n.List.Warnings, 1)
	assert.Contains(t, n.List.Warnings[0], "the server answered fewer traces than --limit asked")
	assert.Contains(t, n.List.Warnings[0], "--cursor "+*n.List.NextCursor)
	assert.Contains(t, n.List.Warnings[0], "--all")

	text := sizeCut.run(args[2:]...)
	require.Equal(t, exitOK, text.code, "%s", text)
	assert.Contains(t, text.stderr, "warning: the server answered fewer traces than --limit asked")
	// A cursor of the list index holds its window, which ends when its first page was read: each
	// run names its own.
	assert.Regexp(t, `rerun with --cursor \S+ to read on`, text.stderr)

	r = sizeCut.run(append(args, "--cursor", *n.List.NextCursor)...)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Equal(t, all[1:], ids(t, r.stdout), "the cursor reads on")
	assert.Empty(t, r.stderr, "the list has ended")

	r = sizeCut.run(append(args, "--all")...)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Equal(t, all, ids(t, r.stdout), "--all reads the rest")
	assert.Empty(t, r.stderr)
}

// TestListsByCursor: a list that goes on past its page says where (a note in text output, its
// cursor in json output's list note); --cursor reads on from it, page after page, each record
// once and in order; --all walks the whole list, --limit a request; a walk that fails part
// way prints what it read, says where to resume, and fails.
func TestListsByCursor(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	fx := newTraceFixture(t, h)
	for _, args := range [][]string{
		{"traces", "list", "--sort-by", "started_at", "--sort-order", "asc"},
		{"spans", "list"},
		{"sessions", "list"},
		{"traces", "spans", fx.trace},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			h := *h
			h.t = t
			jargs := append([]string{"--output", "json"}, args...)
			all := ids(t, h.ok(jargs...))

			var walked []string
			var cursor string
			for page := 0; ; page++ {
				next := append(jargs, "--limit", "1")
				if cursor != "" {
					next = append(next, "--cursor", cursor)
				}
				r := h.run(next...)
				require.Equal(t, exitOK, r.code, "%s", r)
				walked = append(walked, ids(t, r.stdout)...)
				if page == len(all)-1 {
					assert.Empty(t, r.stderr, "the list has ended")
					break
				}
				n := note(t, r.stderr)
				assert.False(t, n.List.Partial, "a whole page")
				require.NotNil(t, n.List.NextCursor, "page %d of %d", page+1, len(all))
				cursor = *n.List.NextCursor
			}
			assert.Equal(t, all, walked, "each record once, in order")

			r := h.run(append(jargs, "--all", "--limit", "1")...)
			require.Equal(t, exitOK, r.code, "%s", r)
			assert.Equal(t, all, ids(t, r.stdout))
			assert.Empty(t, r.stderr)

			if len(all) > 1 {
				text := h.run(append(args, "--limit", "1")...)
				require.Equal(t, exitOK, text.code, "%s", text)
				assert.Regexp(t, `more \w+ follow: rerun with --cursor \S+ to read on, or with --all for every one`, text.stderr)
				quiet := h.run(append(args, "--limit", "1", "--quiet")...)
				assert.Empty(t, quiet.stderr, "a note, not a warning")
			}
		})
	}

	r := h.run("traces", "list", "--cursor", "o1", "--offset", "1")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, "--cursor and --offset cannot be combined")

	// A walk whose second request fails: the first page is printed, the cursor to resume from
	// is told, and the command fails as the request did.
	failing := through(h, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has(api.ParamCursor) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeInvalid, Message: "cursor refused"}})
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	args := []string{"--output", "json", "traces", "list", "--sort-by", "started_at", "--sort-order", "asc", "--limit", "2"}
	all := ids(t, h.ok(args...))
	r = failing.run(append(args, "--all")...)
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Equal(t, all, ids(t, r.stdout), "what the walk read")
	n := note(t, r.stderr)
	assert.True(t, n.List.Partial)
	require.NotNil(t, n.List.NextCursor)
	require.Len(t, n.List.Warnings, 1)
	assert.Contains(t, n.List.Warnings[0], "rerun with --cursor "+*n.List.NextCursor+" --all to read on")
	assert.Contains(t, r.stderr, `"cursor refused"`, "then the error")
}

// TestJudgeEvaluationsWarnTruncated: a judge's evaluations that the server's scan bound cut
// print a warning on stderr, also with --quiet; a complete list prints none.
func TestJudgeEvaluationsWarnTruncated(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	a := h.api.A
	jid := h.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "J", "template": "Is it right?"}).Map(t)["id"].(string)
	scanCut := through(h, func(h http.Handler) http.Handler { return apitest.PartialLists(h, true, false) })
	for _, mode := range [][]string{{}, {"--quiet"}, {"--output", "json"}} {
		r := scanCut.run(append(mode, "judges", "evaluations", jid, "--without-feedback")...)
		require.Equal(t, exitOK, r.code, "%s", r)
		assert.Contains(t, r.stderr, "warning: partial list", "%v", mode)
		assert.Contains(t, r.stderr, "--start-date")
	}
	r := h.run("judges", "evaluations", jid, "--without-feedback")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.NotContains(t, r.stderr, "partial")
}
