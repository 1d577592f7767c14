package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/plumehq/plume/shared/llm"
)

// relayChatCompletions relays a request to an OpenAI-compatible provider: the model renamed to
// the provider's, the deployment's key instead of the caller's, the answer passed on as it
// comes, a stream chunk by chunk (each read is written and flushed at once). The provider's
// errors are already in OpenAI's shape and keep their status, except a refused provider key
// (401, 403), which is the deployment's problem, not the caller's: 502.
func relayChatCompletions(w http.ResponseWriter, r *http.Request, up llm.Upstream, fields map[string]json.RawMessage) {
	fields["model"], _ = json.Marshal(up.Target.Model)
	body, err := json.Marshal(fields)
	if err != nil {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "the request cannot be encoded: "+err.Error(), 0)
		return
	}
	res, err := up.Do(r.Context(), body)
	if err != nil {
		writeError(w, http.StatusBadGateway, typeServer, "upstream_unreachable", fmt.Sprintf("%s cannot be reached: %v", up.Target.Provider, err), 0)
		return
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
		slog.WarnContext(r.Context(), "gateway: the provider refused the deployment's key", "provider", up.Target.Provider, "status", res.StatusCode)
		writeError(w, http.StatusBadGateway, typeServer, "upstream_auth",
			fmt.Sprintf("%s refused the deployment's provider key (%d)", up.Target.Provider, res.StatusCode), 0)
		return
	}
	for _, h := range []string{"Content-Type", "Retry-After", "Retry-After-Ms"} {
		if v := res.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(res.StatusCode)
	watch := usageWatcher(res.Header.Get("Content-Type"))
	if err := copyFlushing(w, io.TeeReader(res.Body, watch)); err != nil {
		slog.WarnContext(r.Context(), "gateway: the answer was cut", "provider", up.Target.Provider, "error", err)
	}
	if u, ok := watch.Usage(); ok && res.StatusCode/100 == 2 {
		reportUsage(r, u)
	}
}

// copyFlushing copies src to w, flushing after every read, so that a streamed answer reaches
// the caller as it arrives.
func copyFlushing(w http.ResponseWriter, src io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			_ = rc.Flush() // a writer that cannot flush (a buffered Lambda answer) sends at the end
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
