package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
)

// CreateDataset creates a dataset. An existing name is an *Error with status 409.
func (c *Client) CreateDataset(ctx context.Context, name, description string) (api.Dataset, error) {
	var out api.Dataset
	req := api.CreateDatasetRequest{Name: name}
	if description != "" {
		req.Description = &description
	}
	err := c.do(ctx, call{method: http.MethodPost, path: "/v1/datasets", body: req}, &out)
	return out, err
}

// Dataset reads a dataset by name.
func (c *Client) Dataset(ctx context.Context, name string) (api.Dataset, error) {
	var out api.Dataset
	err := c.do(ctx, call{method: http.MethodGet, path: datasetPath(name)}, &out)
	return out, err
}

// PageOptions select a page of a list: Limit items (0: the server's default) after Cursor
// (the NextCursor of the previous page; empty for the first).
type PageOptions struct {
	Limit  int
	Cursor string
}

func (o PageOptions) values() url.Values {
	v := url.Values{}
	if o.Limit > 0 {
		v.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		v.Set("cursor", o.Cursor)
	}
	return v
}

// Datasets reads a page of the project's datasets, by name.
func (c *Client) Datasets(ctx context.Context, opts PageOptions) (api.DatasetList, error) {
	var out api.DatasetList
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/datasets", query: opts.values()}, &out)
	return out, err
}

// DatasetVersions reads a page of a dataset's versions, newest first.
func (c *Client) DatasetVersions(ctx context.Context, name string, opts PageOptions) (api.DatasetVersionList, error) {
	var out api.DatasetVersionList
	err := c.do(ctx, call{method: http.MethodGet, path: datasetPath(name) + "/versions", query: opts.values()}, &out)
	return out, err
}

// DatasetRows reads a page of version's rows (0: the latest) from offset, at most limit (0:
// the server's default). A page may hold fewer rows than asked (the answer's byte bound);
// TotalRows is exact.
func (c *Client) DatasetRows(ctx context.Context, name string, version, offset, limit int) (api.DatasetRows, error) {
	v := url.Values{"offset": {strconv.Itoa(offset)}}
	if version > 0 {
		v.Set("version_number", strconv.Itoa(version))
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out api.DatasetRows
	err := c.do(ctx, call{method: http.MethodGet, path: datasetPath(name) + "/data", query: v}, &out)
	return out, err
}

// PullDataset reads every row of a version (0: the latest), page by page, calling each with
// every row in order. It returns the version read.
func (c *Client) PullDataset(ctx context.Context, name string, version int, each func(api.DatasetRow) error) (api.VersionRef, error) {
	for offset := 0; ; {
		page, err := c.DatasetRows(ctx, name, version, offset, api.MaxDatasetRowsLimit)
		if err != nil {
			return api.VersionRef{}, err
		}
		version = page.Version.VersionNumber // later pages read the same version
		for _, r := range page.Rows {
			if err := each(r); err != nil {
				return page.Version, err
			}
		}
		offset += len(page.Rows)
		if offset >= page.TotalRows || len(page.Rows) == 0 {
			return page.Version, nil
		}
	}
}

// PushDataset makes rows (NDJSON: one JSON object a line) the dataset's next version. Rows
// that fit one request (api.MaxDatasetPushBytes) are pushed as the SDK pushes them; larger
// ones go through an upload: a presigned PUT of the NDJSON, then a commit.
func (c *Client) PushDataset(ctx context.Context, name string, ndjson []byte) (api.DatasetVersion, error) {
	if len(ndjson) < api.MaxDatasetPushBytes*9/10 {
		var rows []json.RawMessage
		for _, line := range bytes.Split(ndjson, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				rows = append(rows, json.RawMessage(line))
			}
		}
		var out api.DatasetVersion
		err := c.do(ctx, call{method: http.MethodPost, path: datasetPath(name) + "/data", body: api.PushDatasetRequest{Data: rows}}, &out)
		return out, err
	}
	return c.UploadDataset(ctx, name, ndjson)
}

// UploadDataset makes ndjson the dataset's next version through an upload, whatever its size.
func (c *Client) UploadDataset(ctx context.Context, name string, ndjson []byte) (api.DatasetVersion, error) {
	var up api.DatasetUpload
	if err := c.do(ctx, call{method: http.MethodPost, path: datasetPath(name) + "/uploads", body: api.CreateUploadRequest{Bytes: int64(len(ndjson))}}, &up); err != nil {
		return api.DatasetVersion{}, err
	}
	if err := c.put(ctx, cmp.Or(up.Method, http.MethodPut), up.URL, ndjson); err != nil {
		return api.DatasetVersion{}, fmt.Errorf("client: upload %s of dataset %q: %w", up.ID, name, err)
	}
	var out api.DatasetVersion
	err := c.do(ctx, call{method: http.MethodPost, path: datasetPath(name) + "/uploads/" + url.PathEscape(up.ID) + "/commit", idempotent: true}, &out)
	return out, err
}

// put sends data to a presigned URL.
func (c *Client) put(ctx context.Context, method, target string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.ContentLength = int64(len(data))
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return &Error{Status: resp.StatusCode, Code: codeOfStatus(resp.StatusCode), Message: strings.TrimSpace(string(body))}
	}
	return nil
}

// Experiments reads a page of a dataset's experiments, newest first.
func (c *Client) Experiments(ctx context.Context, dataset string, opts PageOptions) (api.ExperimentList, error) {
	v := opts.values()
	v.Set("dataset", dataset)
	var out api.ExperimentList
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/experiments", query: v}, &out)
	return out, err
}

// Experiment reads an experiment with its runs, evaluators and metrics.
func (c *Client) Experiment(ctx context.Context, id string) (api.ExperimentDetail, error) {
	var out api.ExperimentDetail
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/experiments/" + url.PathEscape(id)}, &out)
	return out, err
}

// ExperimentResults reads a page of a run's results (run 0: the first) with their evaluations.
func (c *Client) ExperimentResults(ctx context.Context, id string, run int, opts PageOptions) (api.ExperimentResultList, error) {
	v := opts.values()
	if run > 0 {
		v.Set("run_number", strconv.Itoa(run))
	}
	var out api.ExperimentResultList
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/experiments/" + url.PathEscape(id) + "/results", query: v}, &out)
	return out, err
}

// CompareExperiments reads a page of experiments side by side (2 to api.MaxCompared ids), per
// dataset row, and their metrics (run 0: the first).
func (c *Client) CompareExperiments(ctx context.Context, ids []string, run int, opts PageOptions) (api.ExperimentComparison, error) {
	v := opts.values()
	v.Set("ids", strings.Join(ids, ","))
	if run > 0 {
		v.Set("run_number", strconv.Itoa(run))
	}
	var out api.ExperimentComparison
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/experiments/compare", query: v}, &out)
	return out, err
}

// AttachJudge makes judge judgeID of the project evaluate every result of experiment id, those
// posted later too; the judge runner writes its verdicts as the experiment's evaluations.
func (c *Client) AttachJudge(ctx context.Context, id, judgeID string) (api.AttachedJudge, error) {
	var out api.AttachedJudge
	err := c.do(ctx, call{method: http.MethodPost, path: "/v1/experiments/" + url.PathEscape(id) + "/judges", body: api.AttachJudgeRequest{JudgeID: judgeID}}, &out)
	return out, err
}

func datasetPath(name string) string { return "/v1/datasets/" + url.PathEscape(name) }
