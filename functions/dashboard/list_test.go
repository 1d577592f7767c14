package dashboard_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The names of a list page's rows, in order.
var (
	rowNames        = rowsNamed("trace-row", `/ui/traces/[^"]+`)
	sessionRowNames = rowsNamed("session-row", `/ui/sessions/[^"]+`)
	spanRowNames    = rowsNamed("span-row", `/ui/traces/[^"]+/spans/[^"]+`)
)

// rowsNamed reads the names of a list page's rows (data-testid rowID), in order: the text of
// each row's link whose URL matches href (a regular expression).
func rowsNamed(rowID, href string) func(body string) []string {
	re := regexp.MustCompile(`(?s)data-testid="` + rowID + `".*?<a href="` + href + `">([^<]*)</a>`)
	return func(body string) []string {
		var out []string
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			out = append(out, html.UnescapeString(m[1]))
		}
		return out
	}
}

// listCase is a filter of a list page (traces, sessions, spans) and the rows it must show.
type listCase struct {
	name  string
	query url.Values
	want  []string // in order, or in any order when any; nil: none, the empty state
	any   bool
}

// checkList loads the list page at path with each case's query as b and checks the rows
// (rows reads their names from the page), that no text of leaks (another project's rows) is
// on it, and that a filter matching nothing says so with a way back to the whole list.
func checkList(t *testing.T, b *browser, path string, rows func(body string) []string, leaks []string, cases []listCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get(t, path+"?"+tt.query.Encode())
			require.Equal(t, http.StatusOK, p.Status, p.Body)
			assertPage(t, p)
			if tt.any {
				assert.ElementsMatch(t, tt.want, rows(p.Body))
			} else {
				assert.Equal(t, tt.want, rows(p.Body))
			}
			for _, leak := range leaks {
				assert.NotContains(t, p.Body, leak, "another project's row")
			}
			if tt.want == nil {
				assert.Contains(t, p.Body, "match this filter.")
				assert.Contains(t, p.Body, `<a href="`+path+`">Clear the filter</a>`)
			}
		})
	}
}

// badFilter is a query a list page refuses, and what its error page must say.
type badFilter struct {
	name, query, want string
}

// checkBadFilters loads the list page at path with each query as b: a 400 error page saying
// what is wrong, and no row (rowTestID is the rows' data-testid).
func checkBadFilters(t *testing.T, b *browser, path, rowTestID string, cases []badFilter) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get(t, path+"?"+tt.query)
			assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
			assertPage(t, p)
			assert.Contains(t, p.Body, tt.want)
			assert.NotContains(t, p.Body, `data-testid="`+rowTestID+`"`)
		})
	}
}
