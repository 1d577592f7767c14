package apitest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
)

// PartialLists serves h with its tracing lists (GET /spans, /traces, /sessions) made partial,
// for the tests of their clients: with scanCut, every list answer says the scan bound cut it
// (api.ScanTruncatedHeader), a judge's evaluations (GET .../judges/{id}/evaluations) too;
// with sizeCut, a first request (no offset or cursor, not by id) for
// more than one record is answered one record, api.NextOffsetHeader 1 and the cursor after
// it, as a server that cut its answer by size.
func PartialLists(h http.Handler, scanCut, sizeCut bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if scanCut && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/judges/") && strings.HasSuffix(r.URL.Path, "/evaluations") {
			w.Header().Set(api.ScanTruncatedHeader, "true")
		}
		if r.Method != http.MethodGet || !slices.Contains([]string{"/spans", "/traces", "/sessions"}, r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		if scanCut {
			w.Header().Set(api.ScanTruncatedHeader, "true")
		}
		q := r.URL.Query()
		offset, _ := strconv.Atoi(q.Get("offset"))
		if limit, _ := strconv.Atoi(q.Get("limit")); sizeCut && offset == 0 && !q.Has(api.ParamCursor) && limit > 1 && q.Get("id") == "" {
			q.Set("limit", "1")
			r.URL.RawQuery = q.Encode()
			w.Header().Set(api.NextOffsetHeader, "1")
		}
		h.ServeHTTP(w, r)
	})
}
