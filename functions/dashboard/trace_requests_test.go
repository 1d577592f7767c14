package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestTracePageRequests: a page of a trace's tree costs what the page holds, not the trace: the
// session and its key (two GetItem), the trace's signals (a BatchGetItem of its signal record,
// GET /signals/entity/trace/{id}), then GET /traces/{trace_id}/tree: the trace (a
// BatchGetItem), its member items (one Query) and one BatchGetItem per 100 summaries read, the
// whole trace up to api.SpanTreeWholeMax spans, only the page's past it (the page read every
// summary of the trace before, a BatchGetItem per 100 spans).
func TestTracePageRequests(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	tests := []struct {
		spans, page, rows int
		want              map[string]int
	}{
		{100, 1, 100, map[string]int{"GetItem": 2, "BatchGetItem": 3, "Query": 1}},
		{api.SpanTreeWholeMax + 100, 2, 200, map[string]int{"GetItem": 2, "BatchGetItem": 4, "Query": 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.spans), func(t *testing.T) {
			traceID, _ := f.seedTrace(t, f.api.A.Key, "many", tt.spans-1, nil)
			f.api.DDB.Reset()
			p := b.get(t, fmt.Sprintf("/ui/traces/%s?page=%d", traceID, tt.page))
			require.Equal(t, http.StatusOK, p.Status, p.Body)
			assert.Equal(t, tt.rows, strings.Count(p.Body, `data-testid="span-row"`))
			assert.Equal(t, tt.want, f.api.DDB.Counts())
		})
	}
}
