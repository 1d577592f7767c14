package otlp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestExportResponseIsPdatas holds the hand-written ExportTraceServiceResponse equal, byte for
// byte, to what the Collector's ptraceotlp writes.
func TestExportResponseIsPdatas(t *testing.T) {
	tests := []struct {
		name     string
		rejected int64
		message  string
	}{
		{name: "all accepted"},
		{name: "partial", rejected: 3, message: `span 2: "name" is empty; span 5: <bad> & "worse"`},
		{name: "rejected without a message", rejected: 1},
		{name: "large count", rejected: 1 << 40, message: "é\u2028\x01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := ptraceotlp.NewExportResponse()
			want.PartialSuccess().SetRejectedSpans(tt.rejected)
			want.PartialSuccess().SetErrorMessage(tt.message)

			wantProto, err := want.MarshalProto()
			require.NoError(t, err)
			assert.Equal(t, wantProto, exportResponse(contentProtobuf, tt.rejected, tt.message))

			wantJSON, err := want.MarshalJSON()
			require.NoError(t, err)
			got := exportResponse(contentJSON, tt.rejected, tt.message)
			assert.JSONEq(t, string(wantJSON), string(got))
			back := ptraceotlp.NewExportResponse()
			require.NoError(t, back.UnmarshalJSON(got))
			assert.Equal(t, tt.rejected, back.PartialSuccess().RejectedSpans())
			assert.Equal(t, tt.message, back.PartialSuccess().ErrorMessage())
		})
	}
}

// TestStatusBodyIsProtobufs holds the hand-written google.rpc.Status equal to the protobuf
// runtime's encoding, and readable by protojson.
func TestStatusBodyIsProtobufs(t *testing.T) {
	tests := []struct {
		name    string
		code    int32
		message string
	}{
		{name: "invalid", code: 3, message: `span 1: bad "id" <x> (request id r-1)`},
		{name: "internal", code: 13, message: "internal error (request id r-2)"},
		{name: "no code", message: "m"},
		{name: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := &status.Status{Code: tt.code, Message: tt.message}
			wantProto, err := proto.Marshal(want)
			require.NoError(t, err)
			assert.Equal(t, wantProto, statusBody(contentProtobuf, tt.code, tt.message))

			var got status.Status
			require.NoError(t, protojson.Unmarshal(statusBody(contentJSON, tt.code, tt.message), &got))
			assert.True(t, proto.Equal(want, &got), "got %v", &got)
		})
	}
}
