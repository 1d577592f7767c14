package config

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// sdkLogger sends the AWS SDK's log lines to the default slog logger, at the SDK's own level:
// its Debug lines (such as "Response has no supported checksum" on every S3 GetObject from an
// emulator) are slog debug records, shown only at LOG_LEVEL=debug, and its warnings are JSON
// warnings. Without it the SDK writes every line, whatever its level, as plain text to stderr.
// The default logger is read at each line, so slog.SetDefault may come before or after AWS.
type sdkLogger struct{ ctx context.Context }

var _ logging.ContextLogger = sdkLogger{}

// Logf implements logging.Logger.
func (l sdkLogger) Logf(classification logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if classification == logging.Warn {
		level = slog.LevelWarn
	}
	ctx := l.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	logger := slog.Default()
	if !logger.Enabled(ctx, level) {
		return
	}
	logger.Log(ctx, level, fmt.Sprintf(format, v...), "logger", "aws-sdk")
}

// WithContext implements logging.ContextLogger: the SDK passes the request's context, so its
// lines carry the request id (web.NewLogger).
func (l sdkLogger) WithContext(ctx context.Context) logging.Logger { return sdkLogger{ctx: ctx} }
