package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/plumehq/plume/api"
)

// Path is where Handler serves the document.
const Path = "/openapi.json"

// document is the document, built once: it depends only on the code.
var document = sync.OnceValues(Document)

// Handler serves the document at GET /openapi.json (and HEAD), without an API key: JSON,
// cacheable for an hour by anyone, with an ETag that changes with the document. Any other
// path is a JSON 404 in the API's error shape. A document that cannot be built (a bug the
// tests catch) is a 500.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, serveDocument)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, api.CodeNotFound, "no route "+r.Method+" "+r.URL.Path)
	})
	return mux
}

func serveDocument(w http.ResponseWriter, r *http.Request) {
	doc, err := document()
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "the OpenAPI document cannot be built")
		return
	}
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(doc)
	}
}

func writeError(w http.ResponseWriter, status int, code api.ErrorCode, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
}
