package config

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/web"
)

// TestSDKLogsAtItsLevel: the SDK's debug lines (here the one every S3 GetObject from an
// emulator causes) appear only at LOG_LEVEL=debug, as JSON; nothing reaches stderr as text.
func TestSDKLogsAtItsLevel(t *testing.T) {
	// An S3 endpoint that answers objects without a checksum.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)

	tests := []struct {
		level     string
		wantDebug bool
	}{
		{level: "debug", wantDebug: true},
		{level: "info"},
		{level: "warn"},
		{level: "error"},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			cfg, err := FromEnv(func(k string) string {
				return map[string]string{"TABLE_NAME": "t", "LOG_LEVEL": tt.level}[k]
			})
			require.NoError(t, err)
			var logs bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(web.NewLogger(&logs, cfg.LogLevel))
			t.Cleanup(func() { slog.SetDefault(prev) })
			stderr := captureStderr(t)

			awsCfg, err := AWS(context.Background())
			require.NoError(t, err)
			client := s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true })
			out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
			require.NoError(t, err)
			body, err := io.ReadAll(out.Body)
			require.NoError(t, err)
			require.Equal(t, "hello", string(body))

			assert.Empty(t, stderr(), "the SDK wrote to stderr")
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if !tt.wantDebug {
				assert.Empty(t, strings.TrimSpace(logs.String()), "LOG_LEVEL=%s", tt.level)
				return
			}
			require.Len(t, lines, 1, logs.String())
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec), lines[0])
			assert.Equal(t, "DEBUG", rec["level"])
			assert.Equal(t, "aws-sdk", rec["logger"])
			assert.Contains(t, rec["msg"], "no supported checksum")
		})
	}
}

func TestSDKLoggerLevels(t *testing.T) {
	tests := []struct {
		name           string
		level          slog.Level
		classification logging.Classification
		want           string // the record's level; "": none
	}{
		{"debug at debug", slog.LevelDebug, logging.Debug, "DEBUG"},
		{"debug at info", slog.LevelInfo, logging.Debug, ""},
		{"warning at info", slog.LevelInfo, logging.Warn, "WARN"},
		{"warning at error", slog.LevelError, logging.Warn, ""},
		{"unknown classification at info", slog.LevelInfo, logging.Classification("TRACE"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(web.NewLogger(&logs, tt.level))
			t.Cleanup(func() { slog.SetDefault(prev) })

			ctx := web.WithRequestID(context.Background(), "req-1")
			sdkLogger{}.WithContext(ctx).Logf(tt.classification, "x=%d", 1)
			if tt.want == "" {
				assert.Empty(t, logs.String())
				return
			}
			var rec map[string]any
			require.NoError(t, json.Unmarshal(logs.Bytes(), &rec), logs.String())
			assert.Equal(t, tt.want, rec["level"])
			assert.Equal(t, "x=1", rec["msg"])
			assert.Equal(t, "req-1", rec["request_id"])
		})
	}
}

// captureStderr points os.Stderr at a file until the test ends; the returned function reads
// what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	prev := os.Stderr
	os.Stderr = f
	t.Cleanup(func() { os.Stderr = prev; _ = f.Close() })
	return func() string {
		raw, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		return string(raw)
	}
}
