package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/plumehq/plume/functions/datasets"
	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/functions/signals"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// apiFunctions are the REST areas the pages call in-process (api.go). DashboardFunction's
// policy in template.yaml is the union of theirs and its sessions'; the optimization runs' area
// is added when the process has the runs' queue. Of the datasets area, the pages call the
// reads only (they write no dataset or experiment), so DashboardFunction may only read the
// versions' objects (datasets/*).
var apiFunctions = []app.Function{prompts.Function, tracing.QueryFunction, judges.Function, feedback.Function, settings.Function,
	signals.Function, app.Only(datasets.Function, http.MethodGet), monitors.Function, webhooks.Function}

// Function is DashboardFunction of template.yaml.
var Function = app.Function{
	Name:   "DashboardFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		fns := apiFunctions
		if _, err := e.OptimizationQueue(); err == nil {
			fns = append(fns[:len(fns):len(fns)], optimizer.Function)
		}
		api, err := app.Mount(e, fns)
		if err != nil {
			return nil, err
		}
		blobs, err := e.Blobs()
		if err != nil {
			return nil, err
		}
		return NewHandler(Deps{
			Sessions: ddb.NewWebSessionStore(e.Table()), Authn: e.Authn(), API: api, Now: e.Now,
			ImageOriginOf: func() (string, error) { return AttachmentOrigin(context.Background(), blobs) },
			PublicURL:     e.Config.PublicURL,
		}), nil
	},
}

// Presigner signs GET URLs of the bucket's objects, as the attachment routes of the tracing
// area do (tracing.Bucket); *blob.Store is one.
type Presigner interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// AttachmentOrigin is the origin (scheme://host[:port]) of the URLs b presigns for GETs: that
// of every attachment URL the API answers, since tracing presigns them with the same store.
// It presigns a GET of a fixed key, which sends nothing; the key does not change the origin
// (a bucket is addressed by host or by path, whatever the key).
func AttachmentOrigin(ctx context.Context, b Presigner) (string, error) {
	u, err := b.PresignGet(ctx, "plume-dashboard/origin", time.Minute)
	if err != nil {
		return "", fmt.Errorf("presign the bucket's origin: %w", err)
	}
	origin := imageOrigin(u)
	if origin == "" {
		return "", fmt.Errorf("the bucket's presigned URLs have no usable origin")
	}
	return origin, nil
}
