// Command query is the tracing area's reading Lambda function (TracingQueryFunction in
// template.yaml): GET /spans, /traces, /sessions and /spans/{id}/attachments.
package main

import (
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(tracing.QueryFunction) }
