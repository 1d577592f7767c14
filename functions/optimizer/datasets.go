package optimizer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/optimize"
)

// dataset resolves the dataset version a run takes examples from (nil when req is) and checks
// its columns against the rows the run will read: one read of the version (a GetItem; for the
// latest, one Query) and one ranged GET a page of rows (one for api.MaxOptimizationDatasetRows
// rows of up to 30 KB each). Errors: errs.Invalid for a bad request, a column that none of
// those rows has, or fewer usable rows than a run needs; errs.NotFound for a dataset or version
// the project does not have.
func (s *Service) dataset(ctx context.Context, projectID string, req *optimize.Dataset) (*optimize.Dataset, error) {
	if req == nil {
		return nil, nil
	}
	d := *req
	if err := checkColumns(d); err != nil {
		return nil, err
	}
	var (
		v   dataset.Version
		err error
	)
	switch {
	case d.VersionID != "":
		if v, err = s.datasets.VersionByID(ctx, projectID, d.VersionID); err != nil {
			return nil, err
		}
		if d.Name != "" && d.Name != v.DatasetName {
			return nil, errs.Invalid("config.dataset.version_id %s is a version of dataset %q, not %q", d.VersionID, v.DatasetName, d.Name)
		}
		if d.Version != 0 && d.Version != v.Number {
			return nil, errs.Invalid("config.dataset.version_id %s is version %d, not %d", d.VersionID, v.Number, d.Version)
		}
	case d.Name == "":
		return nil, errs.Invalid("config.dataset needs a name (and a version: default the latest) or a version_id")
	case !dataset.IsName(d.Name):
		return nil, errs.Invalid("config.dataset.name %q is not a dataset name", d.Name)
	case d.Version < 0:
		return nil, errs.Invalid("config.dataset.version must be a version number (1, 2 ...), or 0 for the latest")
	default:
		if v, err = s.datasets.Version(ctx, projectID, d.Name, d.Version); err != nil {
			return nil, err
		}
	}
	d.Name, d.Version, d.VersionID, d.RowCount = v.DatasetName, v.Number, v.ID, v.RowCount

	seen := map[string]bool{}
	examples, err := optimize.LoadDatasetExamples(ctx, func(ctx context.Context, offset, limit int) ([]api.DatasetRow, error) {
		rows, err := s.datasets.Page(ctx, v, offset, limit)
		for _, row := range rows {
			var cols map[string]json.RawMessage
			if json.Unmarshal(row.Data, &cols) == nil {
				for c := range cols {
					seen[c] = true
				}
			}
		}
		return rows, err
	}, d, api.MaxOptimizationDatasetRows, api.MaxOptimizationDatasetBytes)
	if err != nil {
		return nil, err
	}
	read := min(d.RowCount, api.MaxOptimizationDatasetRows)
	for _, c := range append(slices.Clone(d.InputColumns), d.ExpectedOutputColumn) {
		if c != "" && !seen[c] {
			known := make([]string, 0, len(seen))
			for k := range seen {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, errs.Invalid("column %q is in none of the %d rows a run reads of dataset %q version %d (its columns: %s)",
				c, read, d.Name, d.Version, strings.Join(known, ", "))
		}
	}
	if !d.WithFeedback && len(examples) < api.MinOptimizationExamples {
		return nil, errs.Invalid("%d of the %d rows a run reads of dataset %q version %d have an input column; an optimization needs at least %d (or with_feedback)",
			len(examples), read, d.Name, d.Version, api.MinOptimizationExamples)
	}
	return &d, nil
}

// checkColumns checks a request's columns before anything is read.
func checkColumns(d optimize.Dataset) error {
	switch n := len(d.InputColumns); {
	case n == 0:
		return errs.Invalid("config.dataset.input_columns: name the column (or columns) whose values are the prompt's input")
	case n > api.MaxOptimizationInputColumns:
		return errs.Invalid("config.dataset.input_columns: at most %d", api.MaxOptimizationInputColumns)
	}
	for i, c := range d.InputColumns {
		switch {
		case c == "":
			return errs.Invalid("config.dataset.input_columns[%d] is empty", i)
		case slices.Contains(d.InputColumns[:i], c):
			return errs.Invalid("config.dataset.input_columns: %q is given twice", c)
		case c == d.ExpectedOutputColumn:
			return errs.Invalid("config.dataset: %q is both an input column and the expected_output_column", c)
		}
	}
	return nil
}

// datasetExamples reads the examples of a run's dataset version (the first
// api.MaxOptimizationDatasetRows rows, page by page: one GetItem of the version and one ranged
// GET a page) and names the version for the report.
func (w *Worker) datasetExamples(ctx context.Context, r optimize.Run) ([]optimize.Example, *optimize.ReportDataset, error) {
	d := *r.Config.Dataset
	if w.datasets == nil {
		return nil, nil, fmt.Errorf("run %s names a dataset version and the worker reads no datasets", r.ID)
	}
	v, err := w.datasets.VersionByID(ctx, r.ProjectID, d.VersionID)
	if err != nil {
		return nil, nil, err
	}
	d.RowCount = v.RowCount
	examples, err := optimize.LoadDatasetExamples(ctx, func(ctx context.Context, offset, limit int) ([]api.DatasetRow, error) {
		return w.datasets.Page(ctx, v, offset, limit)
	}, d, api.MaxOptimizationDatasetRows, api.MaxOptimizationDatasetBytes)
	if err != nil {
		return nil, nil, err
	}
	return examples, &optimize.ReportDataset{Name: v.DatasetName, Version: v.Number, VersionID: v.ID, RowCount: v.RowCount, Examples: len(examples)}, nil
}

// loadExamples reads a run's examples: its dataset version's rows, the prompt's completions with
// their feedback, or both (the rows first), and the dataset version for the report (nil
// without one).
func (w *Worker) loadExamples(ctx context.Context, r optimize.Run) ([]optimize.Example, *optimize.ReportDataset, error) {
	var (
		out []optimize.Example
		rep *optimize.ReportDataset
		err error
	)
	d := r.Config.Dataset
	if d != nil {
		if out, rep, err = w.datasetExamples(ctx, r); err != nil {
			return nil, nil, err
		}
	}
	if d == nil || d.WithFeedback {
		fb, err := optimize.LoadExamples(ctx, w.examples, r.ProjectID, r.Target.Slug, r.Config.Intents, api.MaxOptimizationExamples)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, fb...)
	}
	if len(out) < api.MinOptimizationExamples {
		if d != nil {
			return nil, nil, errs.Invalid("the run has %d examples (%d of them rows of dataset %q version %d with an input column, the rest completions); an optimization needs at least %d",
				len(out), rep.Examples, d.Name, d.Version, api.MinOptimizationExamples)
		}
		return nil, nil, errs.Invalid("the prompt has %d completions; an optimization needs at least %d", len(out), api.MinOptimizationExamples)
	}
	return out, rep, nil
}
