package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequestsPerPage counts the AWS requests of the trace pages (our users' bill): the tree of
// a 1,000-span trace reads the span index and its summaries in batches of 100 and no span body
// (no S3 read); opening a span reads its body once.
func TestRequestsPerPage(t *testing.T) {
	f := newFixture(t)
	traceID, spans := f.seedTrace(t, f.api.A.Key, "big", 999, nil)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)

	f.api.DDB.Reset()
	f.api.S3.Reset()
	p := b.get(t, "/ui/traces/"+traceID)
	require.Equal(t, http.StatusOK, p.Status)
	counts := f.api.DDB.Counts()
	t.Logf("trace page of 1,000 spans: DynamoDB %v, S3 GET %d", counts, f.api.S3.Count("GetObject"))
	assert.Equal(t, map[string]int{"GetItem": 2, "Query": 1, "BatchGetItem": 12}, counts,
		"the session and its key; the trace's span index; the trace's item and its 1,000 summaries in batches of 100; the trace's signals")
	assert.Zero(t, f.api.S3.Count("GetObject"), "the tree reads no span body")

	f.api.DDB.Reset()
	f.api.S3.Reset()
	p = b.get(t, "/ui/traces/"+traceID+"/spans/"+spans[500])
	require.Equal(t, http.StatusOK, p.Status)
	t.Logf("span page: DynamoDB %v, S3 GET %d", f.api.DDB.Counts(), f.api.S3.Count("GetObject"))
	assert.Equal(t, map[string]int{"GetItem": 3, "BatchGetItem": 1, "Query": 1}, f.api.DDB.Counts(),
		"the session and its key; the span's summary and its signals; its feedback and evaluations")
	assert.Equal(t, 1, f.api.S3.Count("GetObject"), "the span's body, once: a span without attachments asks for none")
}
