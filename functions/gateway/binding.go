package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// PromptVersionHeader names the prompt version a call is made with, for clients that do not
// send the prompt's linkage metadata in the system message.
const PromptVersionHeader = "X-Plume-Prompt-Version"

// checkBinding checks a call that names a prompt version against the version's binding: the
// version named by PromptVersionHeader, or by the linkage metadata of the first system message
// (<zeroeval>{...}</zeroeval>, which the zeroeval SDKs strip before calling and a plain client
// may not). The metadata is stripped and its variables substituted, as the SDKs do, so the
// provider never sees it. A version the project does not have is 404; a call whose model is not
// the one bound to its version is 400 (model_not_bound): the gateway serves what the version
// was bound to, or says why not. A version without a binding takes any model.
//
// It returns the prompt version the call is made with, for its span: the linkage's, or the
// header's version alone.
func (s *server) checkBinding(w http.ResponseWriter, r *http.Request, projectID string, req *chatRequest, model string) (trace.PromptLink, bool) {
	var link trace.PromptLink
	if v := strings.TrimSpace(r.Header.Get(PromptVersionHeader)); v != "" {
		link.PromptVersionID = v
	}
	var msgs []map[string]json.RawMessage
	// Only messages that name the metadata's tag are decoded for it (most do not). Its angle
	// brackets may be escaped (Go's encoder writes \u003c): the tag's word is looked for.
	if bytes.Contains(req.fields["messages"], []byte(api.LinkageAttribute)) && json.Unmarshal(req.fields["messages"], &msgs) == nil {
		if l, _, found := api.ApplyLinkage(msgs); found {
			stripped, err := json.Marshal(msgs)
			if err != nil {
				writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "messages: "+err.Error(), 0)
				return link, false
			}
			req.set("messages", stripped)
			if link.PromptVersionID == "" || link.PromptVersionID == l.PromptVersionID {
				link = trace.PromptLink(l.PromptLink())
			}
		}
	}
	versionID := link.PromptVersionID
	if versionID == "" || s.Bindings == nil {
		return link, true
	}
	b, err := s.Bindings.Model(r.Context(), projectID, versionID)
	switch {
	case errs.CodeOf(err) == errs.CodeNotFound:
		writeError(w, http.StatusNotFound, typeInvalidRequest, "prompt_version_not_found",
			fmt.Sprintf("prompt version %q not found in this project", versionID), 0)
		return link, false
	case err != nil:
		slog.ErrorContext(r.Context(), "gateway: the prompt version's binding cannot be read", "version", versionID, "error", err)
		writeError(w, http.StatusServiceUnavailable, typeServer, "", "the prompt version's model binding cannot be read; retry", 0)
		return link, false
	case b.ModelID == nil || sameModel(*b.ModelID, model):
		return link, true
	}
	writeError(w, http.StatusBadRequest, typeInvalidRequest, "model_not_bound",
		fmt.Sprintf("prompt version %s is bound to model %q, not %q: call it with the bound model", versionID, *b.ModelID, model), 0)
	return link, false
}

// sameModel reports whether two model ids name the same model of the same provider, the
// gateway's prefixes looked through ("zeroeval/gpt-4o-mini" is "openai/gpt-4o-mini").
func sameModel(a, b string) bool {
	ta, errA := llm.Route(a)
	tb, errB := llm.Route(b)
	if errA != nil || errB != nil {
		return strings.EqualFold(a, b)
	}
	return ta.Provider == tb.Provider && ta.Model == tb.Model
}
