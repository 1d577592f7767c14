package tracing

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// IngestFunction is TracingIngestFunction of template.yaml: it writes spans and never deletes.
var IngestFunction = app.Function{
	Name:   "TracingIngestFunction",
	Routes: IngestRoutes,
	Build: func(e *app.Env) (http.Handler, error) {
		svc, err := e.TraceService()
		if err != nil {
			return nil, err
		}
		return NewIngestHandler(svc, e.Authn(), attachmentURLs(e)), nil
	},
}

// QueryFunction is TracingQueryFunction of template.yaml: it only reads.
var QueryFunction = app.Function{
	Name:   "TracingQueryFunction",
	Routes: QueryRoutes,
	Build: func(e *app.Env) (http.Handler, error) {
		q, err := e.TraceQueries()
		if err != nil {
			return nil, err
		}
		return NewQueryHandler(q, e.SignalRecords(), e.Rollups(), e.Now, e.Authn(), attachmentURLs(e)), nil
	},
}

// attachmentURLs signs attachment uploads and downloads in the Env's bucket (TraceService and
// TraceQueries have checked that there is one).
func attachmentURLs(e *app.Env) AttachmentURLs {
	blobs, _ := e.Blobs()
	return AttachmentURLs{Bucket: blobs, TTL: e.Config.AttachmentURLTTL, MaxBytes: e.Config.AttachmentMaxBytes}
}
