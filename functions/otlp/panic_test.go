package otlp_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/plumehq/plume/functions/otlp"
	"github.com/plumehq/plume/internal/apitest"
	otlpmap "github.com/plumehq/plume/shared/otlp"
	"github.com/plumehq/plume/shared/web"
)

// TestDecoderPanicIsLogged500: a decoder panic (which otlpmap.Decode recovers into a
// *PanicError, see its own test) is answered 500 with google.rpc.Code INTERNAL and a generic
// message with the request id, and logged exactly once with the request id and the stack.
func TestDecoderPanicIsLogged500(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	svc, err := api.Env.TraceService()
	require.NoError(t, err)
	var logs bytes.Buffer
	saved := slog.Default()
	slog.SetDefault(web.NewLogger(&logs, slog.LevelInfo))
	t.Cleanup(func() { slog.SetDefault(saved) })

	traces := otlp.TracesWithDecoder(svc, api.Env.Authn(), func([]byte, string) (*otlpmap.Export, error) {
		return nil, &otlpmap.PanicError{Encoding: "protobuf", Value: "index out of range", Stack: []byte("goroutine 1 [running]:\nthe stack")}
	})
	req := httptest.NewRequest("POST", "/v1/traces", strings.NewReader("x"))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+api.A.Key)
	req = req.WithContext(web.WithRequestID(req.Context(), "req-123"))
	rec := httptest.NewRecorder()
	traces(rec, req)

	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	var body status.Status
	require.NoError(t, proto.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, int32(13), body.Code, "google.rpc.Code INTERNAL")
	assert.Equal(t, "internal error (request id req-123)", body.Message, "the panic is not quoted to the client")

	var lines []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["level"] == "ERROR" {
			lines = append(lines, rec)
		}
	}
	require.Len(t, lines, 1, "logged once: %s", logs.String())
	assert.Equal(t, "req-123", lines[0]["request_id"])
	assert.Equal(t, "the OTLP protobuf decoder panicked: index out of range", lines[0]["error"])
	assert.Contains(t, lines[0]["stack"], "the stack")
}
