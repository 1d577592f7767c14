package dashboard_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListPagesFollowCursors: the traces and sessions pages, and a session's traces, link
// their next page by the cursor after their last row (never an offset): following the links
// shows every row once, in the API's order, numbered on from page to page, to a last page
// without a next link; every later page links the first.
func TestListPagesFollowCursors(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	session := uuid.NewString()
	start := time.Now().Add(-2 * time.Hour)
	var inSession, alone []seeded
	for i := range 205 {
		inSession = append(inSession, seeded{name: fmt.Sprintf("turn %03d", i), start: start.Add(time.Duration(i) * time.Second),
			duration: time.Second, session: session})
	}
	for i := range 55 {
		alone = append(alone, seeded{name: fmt.Sprintf("visit %02d", i), start: start.Add(time.Duration(i) * time.Second),
			duration: time.Second, session: uuid.NewString()})
	}
	f.seedTraces(t, f.api.A, inSession...)
	f.seedTraces(t, f.api.A, alone...)

	names := func(path string, key func(map[string]any) string) []string {
		var recs []map[string]any
		require.NoError(t, json.Unmarshal(f.api.MustDo(t, "GET", path, f.api.A.Key, nil).Body, &recs))
		var out []string
		for _, r := range recs {
			out = append(out, key(r))
		}
		return out
	}
	name := func(r map[string]any) string { return r["name"].(string) }
	tests := []struct {
		name, path string
		rows       func(string) []string
		want       []string
		perPage    int
		caption    string // the caption's start, before the rows' numbers
	}{
		{"traces", "/ui/traces", rowNames, names("/traces?limit=500", name), 50, "Traces"},
		{"sessions", "/ui/sessions", sessionRowNames, names("/sessions?limit=500", func(r map[string]any) string { return "(unnamed) " + r["id"].(string) }),
			50, "Sessions"},
		{"a session's traces", "/ui/sessions/" + session, rowsNamed("session-trace", `/ui/traces/[^"]+`),
			names("/traces?limit=500&sort_by=started_at&sort_order=asc&session_id="+session, name), 200, "Traces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Greater(t, len(tt.want), tt.perPage, "more than a page")
			var got []string
			next := tt.path
			for page := 1; next != ""; page++ {
				p := b.get(t, next)
				require.Equal(t, http.StatusOK, p.Status, p.Body)
				rows := tt.rows(p.Body)
				first := len(got) + 1
				got = append(got, rows...)
				assert.Contains(t, p.Body, fmt.Sprintf("<caption>%s %d–%d", tt.caption, first, len(got)), "page %d", page)
				if page > 1 {
					assert.Contains(t, p.Body, `href="`+tt.path+`" rel="first"`)
				} else {
					assert.NotContains(t, p.Body, `rel="first"`)
				}
				next = ""
				if m := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(p.Body); m != nil {
					next = html.UnescapeString(m[1])
					u, err := url.Parse(next)
					require.NoError(t, err)
					assert.NotEmpty(t, u.Query().Get("cursor"))
					assert.False(t, u.Query().Has("offset"))
					require.Len(t, rows, tt.perPage, "a page with a next is whole")
				}
				require.Less(t, page, 10, "the pages end")
			}
			assert.Equal(t, tt.want, got, "each row once, in order")
		})
	}

	// A cursor link without its row number still opens its page, unnumbered.
	p := b.get(t, "/ui/traces")
	next, err := url.Parse(html.UnescapeString(regexpFind(t, `<a href="([^"]+)" rel="next">`, p.Body)))
	require.NoError(t, err)
	q := next.Query()
	q.Del("row")
	p = b.get(t, "/ui/traces?"+q.Encode())
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, "<caption>Traces (continued)")
	assert.Len(t, rowNames(p.Body), 50)
}
