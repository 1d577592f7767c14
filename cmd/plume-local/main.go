// Command plume-local serves the whole Plume API on one local port: every area's handler
// mounted on the same route keys template.yaml gives API Gateway, against DynamoDB (DynamoDB
// Local, moto, LocalStack or AWS, from AWS_ENDPOINT_URL_DYNAMODB) and S3 (embedded gofakes3
// with SigV4 checks unless AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL is set). It creates the
// table and bucket, seeds a dev project and admin API key, prints how to call it and where the
// dashboard is (/ui/, signed in with that key), resumes the stale optimization runs every
// PLUME_RESUME_INTERVAL (15m) as OptimizerWorkerFunction's ResumeRuns schedule does, evaluates
// the monitors every PLUME_MONITOR_INTERVAL (1m) as MonitorFunction's does, and stops cleanly
// on SIGINT or SIGTERM. `make dev` starts it with DynamoDB Local.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "plume-local:", err)
		os.Exit(1)
	}
}
