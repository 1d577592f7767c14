package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// ListDatasetsInput pages the datasets.
type ListDatasetsInput struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
}

// GetDatasetInput names a dataset and a page of its rows.
type GetDatasetInput struct {
	Name    string `json:"name" jsonschema:"the dataset's name, as list-datasets answers it"`
	Version int    `json:"version,omitempty" jsonschema:"a version number; default the latest"`
	Offset  int    `json:"offset,omitempty" jsonschema:"rows to skip: offset plus the rows of the previous answer"`
	Limit   int    `json:"limit,omitempty" jsonschema:"rows to read: 1 to 100, default 20"`
}

// GetDatasetOutput is get-dataset's answer.
type GetDatasetOutput struct {
	Dataset  api.Dataset          `json:"dataset" jsonschema:"the dataset: name, description, latest version_number and row_count"`
	Versions []api.DatasetVersion `json:"versions" jsonschema:"its newest versions (at most 20), newest first"`
	Rows     api.DatasetRows      `json:"rows" jsonschema:"a page of the version's rows (row_id and data) with totalRows"`
}

// ListExperimentsInput names a dataset.
type ListExperimentsInput struct {
	Dataset string `json:"dataset" jsonschema:"the dataset's name"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
}

// GetExperimentInput names an experiment and a page of its results.
type GetExperimentInput struct {
	ExperimentID string `json:"experiment_id" jsonschema:"the experiment's id, as list-experiments answers it"`
	Run          int    `json:"run,omitempty" jsonschema:"the run whose results to read; default 1"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer's results"`
}

// GetExperimentOutput is get-experiment's answer.
type GetExperimentOutput struct {
	Experiment api.ExperimentDetail     `json:"experiment" jsonschema:"the experiment with its runs, evaluators, column evaluations, metrics and each row evaluator's aggregate (pass rate or mean) per run"`
	Results    api.ExperimentResultList `json:"results" jsonschema:"a page (at most 20) of the run's results by row, with their evaluations"`
}

// CompareExperimentsInput names the experiments to compare.
type CompareExperimentsInput struct {
	IDs    []string `json:"ids" jsonschema:"2 to 5 experiment ids"`
	Run    int      `json:"run,omitempty" jsonschema:"the run to compare; default 1"`
	Cursor string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
}

// datasetTools are the read tools of datasets and experiments.
func (s *server) datasetTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-datasets", Annotations: readOnly("List datasets"),
			Description: "List the project's datasets by name, each with its latest version_number and row_count."},
			func(ctx context.Context, c *client.Client, in ListDatasetsInput) (api.DatasetList, error) {
				return c.Datasets(ctx, client.PageOptions{Cursor: in.Cursor})
			}),
		newTool(s, &mcp.Tool{Name: "get-dataset", Annotations: readOnly("Read a dataset"),
			Description: "Read a dataset: its newest versions and a page of a version's rows (the latest by default)."},
			func(ctx context.Context, c *client.Client, in GetDatasetInput) (GetDatasetOutput, error) {
				d, err := c.Dataset(ctx, in.Name)
				if err != nil {
					return GetDatasetOutput{}, err
				}
				versions, err := c.DatasetVersions(ctx, in.Name, client.PageOptions{Limit: 20})
				if err != nil {
					return GetDatasetOutput{}, err
				}
				out := GetDatasetOutput{Dataset: d, Versions: versions.Versions, Rows: api.DatasetRows{Rows: []api.DatasetRow{}}}
				if d.VersionNumber == 0 {
					return out, nil
				}
				limit := in.Limit
				if limit <= 0 || limit > 100 {
					limit = 20
				}
				out.Rows, err = c.DatasetRows(ctx, in.Name, in.Version, in.Offset, limit)
				return out, err
			}),
		newTool(s, &mcp.Tool{Name: "list-experiments", Annotations: readOnly("List experiments"),
			Description: "List a dataset's experiments, newest first."},
			func(ctx context.Context, c *client.Client, in ListExperimentsInput) (api.ExperimentList, error) {
				return c.Experiments(ctx, in.Dataset, client.PageOptions{Cursor: in.Cursor})
			}),
		newTool(s, &mcp.Tool{Name: "get-experiment", Annotations: readOnly("Read an experiment"),
			Description: "Read an experiment: its runs, evaluators and metrics, and a page of a run's results with their evaluations."},
			func(ctx context.Context, c *client.Client, in GetExperimentInput) (GetExperimentOutput, error) {
				e, err := c.Experiment(ctx, in.ExperimentID)
				if err != nil {
					return GetExperimentOutput{}, err
				}
				results, err := c.ExperimentResults(ctx, in.ExperimentID, in.Run, client.PageOptions{Limit: 20, Cursor: in.Cursor})
				return GetExperimentOutput{Experiment: e, Results: results}, err
			}),
		newTool(s, &mcp.Tool{Name: "compare-experiments", Annotations: readOnly("Compare experiments"),
			Description: "Compare 2 to 5 experiments: per dataset row each one's result and evaluations side by side (differs: not all the same), per metric each one's value and the difference; per row evaluator (judges included) each one's pass rate (booleans) or mean (numbers) over the run, with its counts, and the difference."},
			func(ctx context.Context, c *client.Client, in CompareExperimentsInput) (api.ExperimentComparison, error) {
				return c.CompareExperiments(ctx, in.IDs, in.Run, client.PageOptions{Limit: 20, Cursor: in.Cursor})
			}),
	}
}
