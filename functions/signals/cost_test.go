package signals_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestRequestsPerOperation counts the DynamoDB requests of each operation: a signal is one
// read of its entity's record and one write (a transaction when the entity is in a test); a
// bulk reads its entities 100 a request and writes each once; a choice is the test's
// conditional put, the record's read and one transaction; a report and a list are one Query
// each, whatever the number of entities.
func TestRequestsPerOperation(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	inTest := uuid.NewString()
	srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("span", inTest, "cost", "a", 3))
	for range 20 { // entities whose aggregates the report does not walk
		id := uuid.NewString()
		srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("span", id, "cost", "b", 3))
		srv.MustDo(t, "POST", "/signals/", a.Key, map[string]any{"entity_type": "span", "entity_id": id, "name": "ok", "value": true})
	}
	sig := func(id, name string, v any) map[string]any {
		return map[string]any{"entity_type": "span", "entity_id": id, "name": name, "value": v}
	}
	bulk := make([]any, 10)
	for i := range bulk {
		bulk[i] = sig(uuid.NewString(), "n", i)
	}
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		want   map[string]int
	}{
		{"one signal", "POST", "/signals/", sig(uuid.NewString(), "x", 1), map[string]int{"BatchGetItem": 1, "PutItem": 1}},
		{"one signal on an entity in a test", "POST", "/signals/", sig(inTest, "x", 1), map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"the same signal again", "POST", "/signals/", sig(inTest, "x", 1), map[string]int{"BatchGetItem": 1}},
		{"bulk of 10 entities", "POST", "/signals/bulk", map[string]any{"signals": bulk}, map[string]int{"BatchGetItem": 1, "PutItem": 10}},
		{"choice of a new test", "POST", "/ab-choices", choiceBody("span", uuid.NewString(), "new", "a", 3),
			map[string]int{"PutItem": 1, "BatchGetItem": 1, "TransactWriteItems": 1}},
		{"choice of an existing test", "POST", "/ab-choices", choiceBody("span", uuid.NewString(), "cost", "a", 3),
			map[string]int{"PutItem": 1, "BatchGetItem": 1, "TransactWriteItems": 1}},
		{"entity signals", "GET", "/signals/entity/span/" + inTest, nil, map[string]int{"BatchGetItem": 1}},
		{"report", "GET", "/projects/" + a.ProjectID + "/ab-tests/cost", nil, map[string]int{"Query": 1}},
		{"list", "GET", "/projects/" + a.ProjectID + "/ab-tests", nil, map[string]int{"Query": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.DDB.Reset()
			srv.MustDo(t, tt.method, tt.path, a.Key, tt.body)
			assert.Equal(t, tt.want, srv.DDB.Counts(), fmt.Sprint(srv.DDB))
		})
	}
	rep := report(t, srv, a, "cost")
	require.Len(t, rep.Results, 2)
	assert.Equal(t, int64(22), rep.Results[0].Choices+rep.Results[1].Choices, "the choices above and the cases' one")
}
