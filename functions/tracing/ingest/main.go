// Command ingest is the tracing area's writing Lambda function (TracingIngestFunction in
// template.yaml): POST /spans, /traces, /sessions and /spans/{id}/attachments.
package main

import (
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(tracing.IngestFunction) }
