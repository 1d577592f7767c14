package dashboard

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/api"
)

// TestListSortsAreQuerySorts checks each list page's sorts against the sort keys its query
// accepts: a key the query does not know would be refused by the API, or sorted by nothing.
func TestListSortsAreQuerySorts(t *testing.T) {
	tests := []struct {
		page  filterPage
		known []string
	}{
		{tracesPage, api.TraceList.Sorts},
		{sessionsPage, api.SessionList.Sorts},
		{spansPage, api.SpanList.Sorts},
	}
	for _, tt := range tests {
		t.Run(tt.page.Noun, func(t *testing.T) {
			assert.Equal(t, "newest", tt.page.Sorts[0].Key, "the default first")
			for _, s := range tt.page.Sorts {
				if s.by != "" {
					assert.Contains(t, tt.known, s.by, s.Key)
				}
			}
			assert.Equal(t, "", tt.page.Own.Options[0].Value, "the first option is no filter")
			for _, c := range tt.page.More {
				assert.Equal(t, "", c.Options[0].Value, "the first option of %s is no filter", c.Key)
				assert.NotEqual(t, tt.page.Own.Key, c.Key)
			}
		})
	}
}
