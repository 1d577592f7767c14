package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// relayChatCompletions relays a request to an OpenAI-compatible provider: the model renamed to
// the provider's, the deployment's key instead of the caller's, the answer passed on as it
// comes, a stream chunk by chunk (each read is written and flushed at once). The provider's
// errors are already in OpenAI's shape and keep their status, except a refused provider key
// (401, 403), which is the deployment's problem, not the caller's: 502.
//
// A stream always asks for the usage chunk (stream_options.include_usage), which is how the
// gateway counts a streamed call's tokens; when the client did not ask for it, the chunk is
// not passed on (usageHider).
//
// The answer is read once, as it passes: for its usage alone (usageWatcher), or, when the call
// is traced, whole (answerScanner), its usage, text and first token at once.
func relayChatCompletions(w http.ResponseWriter, r *http.Request, up llm.Upstream, req *chatRequest, traced bool) outcome {
	req.set("model", trace.AppendJSONString(nil, up.Target.Model))
	hideUsage := askForUsage(req)
	res, out, ok := send(w, r, up, req.encode(), false) // a stream's answer comes from the same endpoint
	if !ok {
		return out
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
		slog.WarnContext(r.Context(), "gateway: the provider refused the deployment's key", "provider", up.Target.Provider, "status", res.StatusCode)
		return out.failed(w, http.StatusBadGateway, typeServer, "upstream_auth",
			fmt.Sprintf("%s refused the deployment's provider key (%d)", up.Target.Provider, res.StatusCode))
	}
	for _, h := range []string{"Content-Type", "Retry-After", "Retry-After-Ms"} {
		if v := res.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(res.StatusCode)
	contentType := res.Header.Get("Content-Type")
	var (
		watch watcher
		scan  *answerScanner
	)
	if traced {
		scan = newAnswerScanner(time.Now, contentType)
		watch = scan
	} else {
		watch = usageWatcher(contentType)
	}
	var dst io.Writer = w
	if hideUsage && strings.HasPrefix(contentType, "text/event-stream") {
		hider := &usageHider{dst: w}
		defer hider.Close()
		dst = hider
	}
	if err := copyFlushing(dst, http.NewResponseController(w), io.TeeReader(res.Body, watch)); err != nil {
		slog.WarnContext(r.Context(), "gateway: the answer was cut", "provider", up.Target.Provider, "error", err)
	}
	if scan != nil {
		a := scan.answer()
		out.answer, out.firstToken = &a, scan.rd.firstToken
	}
	if u, ok := watch.Usage(); ok && res.StatusCode/100 == 2 {
		out = out.metered(u)
	}
	return out
}

// askForUsage makes a streamed request ask for the usage chunk, and reports whether the client
// had not asked for it.
func askForUsage(req *chatRequest) bool {
	var stream bool
	if raw := req.fields["stream"]; !readValue(raw, &stream) && json.Unmarshal(raw, &stream) != nil || !stream {
		return false
	}
	raw, ok := req.fields["stream_options"]
	if !ok || string(raw) == "null" { // most streams: json.Marshal's encoding of the map below
		req.set("stream_options", json.RawMessage(`{"include_usage":true}`))
		return true
	}
	opts := map[string]json.RawMessage{}
	if json.Unmarshal(raw, &opts) != nil {
		return false // not an object: the provider says so
	}
	var asked bool
	if json.Unmarshal(opts["include_usage"], &asked) == nil && asked {
		return false
	}
	opts["include_usage"] = json.RawMessage("true")
	streamOptions, _ := json.Marshal(opts) // valid values
	req.set("stream_options", streamOptions)
	return true
}

// copyBuffers are copyFlushing's buffers, reused: a buffer per call was most of the
// gateway's garbage (BenchmarkChatCompletion).
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyFlushing copies src to w, flushing rc after every read, so that a streamed answer
// reaches the caller as it arrives.
func copyFlushing(w io.Writer, rc *http.ResponseController, src io.Reader) error {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
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
