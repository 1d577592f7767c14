package optimize

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/plumehq/plume/api"
)

// Dataset is the dataset version a prompt run takes examples from (api.OptimizationDataset),
// resolved when the run starts: the version's id, name and number are all set.
type Dataset struct {
	Name                 string   `json:"name"`
	Version              int      `json:"version"`
	VersionID            string   `json:"version_id"`
	InputColumns         []string `json:"input_columns"`
	ExpectedOutputColumn string   `json:"expected_output_column,omitempty"`
	// WithFeedback adds the prompt's feedback examples to the dataset's.
	WithFeedback bool `json:"with_feedback,omitempty"`
	// RowCount is the version's rows.
	RowCount int `json:"row_count"`
}

// ReportDataset is the dataset version of a run's report: the version, its rows, and how many
// of them became examples.
type ReportDataset struct {
	Name      string `json:"name"`
	Version   int    `json:"version"`
	VersionID string `json:"version_id"`
	RowCount  int    `json:"row_count"`
	Examples  int    `json:"examples"`
}

// RowPages reads a dataset version's rows from offset on, in order: at most limit, fewer when
// a page's byte budget ends first, never none while rows remain (dataset.Service.Page).
type RowPages func(ctx context.Context, offset, limit int) ([]api.DatasetRow, error)

// LoadDatasetExamples reads the first rows of dataset version d, page by page (never the whole
// object when the rows read are fewer): at most limit rows, and no row past maxBytes of row
// data (the first row is always read), and makes each an example (ExampleOfRow); a row
// without any of d's input columns is left out.
func LoadDatasetExamples(ctx context.Context, pages RowPages, d Dataset, limit, maxBytes int) ([]Example, error) {
	var out []Example
	want := min(limit, d.RowCount)
	size, read := 0, 0
	for offset := 0; offset < want; {
		rows, err := pages(ctx, offset, want-offset)
		if err != nil {
			return nil, fmt.Errorf("read rows of dataset %q version %d from %d: %w", d.Name, d.Version, offset, err)
		}
		if len(rows) == 0 {
			break // the version has fewer rows than it says: nothing more to read
		}
		offset += len(rows)
		for _, row := range rows {
			if read > 0 && size+len(row.Data) > maxBytes {
				return out, nil
			}
			size += len(row.Data)
			read++
			if ex, ok := ExampleOfRow(row, d); ok {
				out = append(out, ex)
			}
		}
	}
	return out, nil
}

// ExampleOfRow is a dataset row as an example: its id is the row's row_id; its input the
// value of d's one input column (text as is, anything else as JSON), or a JSON object of
// several; its expected output the expected-output column's value (text as is, else JSON);
// every other column fills the prompt's {{variables}} (the expected output never does, so the
// answer never leaks into the prompt). A row with none of the input columns is not an example.
func ExampleOfRow(row api.DatasetRow, d Dataset) (Example, bool) {
	var cols map[string]json.RawMessage
	if err := json.Unmarshal(row.Data, &cols); err != nil {
		return Example{}, false
	}
	ex := Example{ID: row.RowID, Variables: map[string]string{}}
	inputs := map[string]json.RawMessage{}
	for _, c := range d.InputColumns {
		if v, ok := cols[c]; ok {
			inputs[c] = v
		}
	}
	switch {
	case len(inputs) == 0:
		return Example{}, false
	case len(d.InputColumns) == 1:
		ex.Input = text(inputs[d.InputColumns[0]])
	default:
		b, _ := json.Marshal(inputs) // raw messages: cannot fail; keys sorted
		ex.Input = string(b)
	}
	for name, v := range cols {
		if name == d.ExpectedOutputColumn {
			ex.ExpectedOutput = text(v)
			continue
		}
		ex.Variables[name] = text(v)
	}
	return ex, true
}

// text is a JSON value as a prompt shows it: a string's text, anything else its JSON.
func text(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}
