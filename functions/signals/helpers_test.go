package signals_test

import (
	"testing"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// choiceBody is ze.choose's POST /ab-choices: variants a and b (a the control), even weights.
func choiceBody(entityType, entityID, test, variant string, days int) map[string]any {
	return map[string]any{"entity_type": entityType, "entity_id": entityID, "choice_name": test, "variant_key": variant,
		"variant_value": "value-" + variant, "variants": map[string]any{"a": "value-a", "b": "value-b"},
		"weights": map[string]any{"a": 0.5, "b": 0.5}, "duration_days": days}
}

// report reads a test's report.
func report(t *testing.T, srv *apitest.API, tenant apitest.Tenant, name string) api.ABReport {
	t.Helper()
	var rep api.ABReport
	srv.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/ab-tests/"+name, tenant.Key, nil).Decode(t, &rep)
	return rep
}
