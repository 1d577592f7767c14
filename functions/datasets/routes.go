// Package datasets is the datasets and experiments HTTP area (issue 28): versioned datasets
// whose rows are NDJSON objects in the bucket, and experiments that run a task over a
// version, with their results, evaluators, evaluations and metrics. The zeroeval Python SDK's
// Dataset.push/pull, run and eval use these routes as COMPAT.md lists; the GET routes are
// Plume's own read API. The Lambda entry point is functions/datasets/lambda.
package datasets

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/dataset"
)

// Routes are the API Gateway route keys of DatasetsFunction.
var Routes = []string{
	"POST /v1/datasets",
	"GET /v1/datasets",
	"GET /v1/datasets/{dataset}",
	"POST /v1/datasets/{dataset}/data",
	"GET /v1/datasets/{dataset}/data",
	"GET /v1/datasets/{dataset}/versions",
	"POST /v1/datasets/{dataset}/uploads",
	"POST /v1/datasets/{dataset}/uploads/{upload_id}/commit",
	"POST /v1/experiments",
	"GET /v1/experiments",
	"GET /v1/experiments/compare",
	"GET /v1/experiments/{experiment_id}",
	"GET /v1/experiments/{experiment_id}/results",
	"POST /v1/experiments/{experiment_id}/results",
	"POST /v1/experiments/{experiment_id}/evaluators",
	"POST /v1/experiments/{experiment_id}/evaluations",
	"POST /v1/experiments/{experiment_id}/judges",
	"POST /v1/column-evaluations",
	"POST /v1/column-metrics",
	"POST /v1/run-metrics",
}

// NewHandler returns the area. Datasets are read and written by member and admin keys; an
// ingest key (an application's) may write what a run of an experiment writes, its results,
// evaluators, evaluations and metrics, each answered with an id only, never read anything.
func NewHandler(d *dataset.Service, x *dataset.Experiments, authn *auth.Authenticator) http.Handler {
	s := &server{d: d, x: x}
	r := auth.NewRouter(authn)
	r.HandleFunc("POST /v1/datasets", s.create)
	r.HandleFunc("GET /v1/datasets", s.list)
	r.HandleFunc("GET /v1/datasets/{dataset}", s.get)
	r.HandleFunc("POST /v1/datasets/{dataset}/data", s.push)
	r.HandleFunc("GET /v1/datasets/{dataset}/data", s.rows)
	r.HandleFunc("GET /v1/datasets/{dataset}/versions", s.versions)
	r.HandleFunc("POST /v1/datasets/{dataset}/uploads", s.startUpload)
	r.HandleFunc("POST /v1/datasets/{dataset}/uploads/{upload_id}/commit", s.commitUpload)
	r.HandleFunc("POST /v1/experiments", s.createExperiment, auth.AllowIngest)
	r.HandleFunc("GET /v1/experiments", s.listExperiments)
	r.HandleFunc("GET /v1/experiments/compare", s.compare)
	r.HandleFunc("GET /v1/experiments/{experiment_id}", s.getExperiment)
	r.HandleFunc("GET /v1/experiments/{experiment_id}/results", s.listResults)
	r.HandleFunc("POST /v1/experiments/{experiment_id}/results", s.addResult, auth.AllowIngest)
	r.HandleFunc("POST /v1/experiments/{experiment_id}/evaluators", s.addEvaluator, auth.AllowIngest)
	r.HandleFunc("POST /v1/experiments/{experiment_id}/evaluations", s.addEvaluation, auth.AllowIngest)
	r.HandleFunc("POST /v1/experiments/{experiment_id}/judges", s.attachJudge)
	r.HandleFunc("POST /v1/column-evaluations", s.addColumnEvaluation, auth.AllowIngest)
	r.HandleFunc("POST /v1/column-metrics", s.addColumnMetric, auth.AllowIngest)
	r.HandleFunc("POST /v1/run-metrics", s.addRunMetric, auth.AllowIngest)
	return r
}
