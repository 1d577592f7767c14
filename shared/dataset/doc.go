// Package dataset is the domain of versioned datasets and the experiments run on them
// (issue 28): a dataset is a name and a gap-free series of immutable versions; each version's
// rows are one NDJSON object in the bucket (one row a line, each with a row_id that is a hash
// of its content), with a small index of byte offsets in the version's item, so that a page of
// rows is one ranged GET. An experiment runs a task over one version: a result per row and
// run, evaluated by row and column evaluators.
//
// The zeroeval Python SDK's calls are in COMPAT.md ("Datasets, experiments ..."); the HTTP
// area is functions/datasets, the storage shared/ddb (DatasetStore) and shared/blob.
package dataset
