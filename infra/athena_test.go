package infra_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/trace"
)

// TestAthenaTableMatchesBatchObjects: the Glue table over spans/ has a column for every field of
// a span as batch objects store it (trace.Span's JSON), and no other, so that a field added to
// spans cannot be missing from Athena; its partitions are the object keys' (project, date,
// hour).
func TestAthenaTableMatchesBatchObjects(t *testing.T) {
	tables := resourcesOfType(loadTemplate(t), "AWS::Glue::Table")
	require.Contains(t, tables, "SpansTable")
	input := tables["SpansTable"]["Properties"].(map[string]any)["TableInput"].(map[string]any)

	var columns []string
	for _, c := range input["StorageDescriptor"].(map[string]any)["Columns"].([]any) {
		columns = append(columns, c.(map[string]any)["Name"].(string))
	}
	var fields []string
	st := reflect.TypeFor[trace.Span]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields = append(fields, name)
		}
	}
	assert.ElementsMatch(t, fields, columns, "the columns are the span's JSON fields")

	var partitions []string
	for _, p := range input["PartitionKeys"].([]any) {
		partitions = append(partitions, p.(map[string]any)["Name"].(string))
	}
	assert.Equal(t, []string{"project", "date", "hour"}, partitions)
	assert.Equal(t, "true", input["Parameters"].(map[string]any)["projection.enabled"])
}
