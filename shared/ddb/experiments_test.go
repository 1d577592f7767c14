package ddb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// TestEvaluatorTalliesEqualARecount writes random evaluations (new ones, replacements by
// another value, the same one sent again) from several writers at once, and checks that every
// evaluator's tally in every run equals a recount of the evaluations stored.
func TestEvaluatorTalliesEqualARecount(t *testing.T) {
	client, counter, name := ddbtest.NewTable(t)
	store := ddb.NewDatasetStore(ddb.NewTable(client, name))
	ctx := context.Background()
	const pid = "p1"
	x := dataset.Experiment{ID: uuid.NewString(), ProjectID: pid, Name: "e", DatasetID: "d", DatasetVersionID: uuid.NewString(), VersionNumber: 1, CreatedAt: time.Now().UTC()}
	require.NoError(t, store.CreateExperiment(ctx, x))
	rows := make([]string, 12)
	for i := range rows {
		rows[i] = fmt.Sprintf("%032x", i+1)
		for run := 1; run <= 2; run++ {
			_, err := store.PutResult(ctx, pid, dataset.Result{ExperimentID: x.ID, RowID: rows[i], Run: run, Result: "r", CreatedAt: time.Now().UTC()})
			require.NoError(t, err)
		}
	}
	evaluators := []string{"correct", "score", "mixed"}
	values := map[string][]string{
		"correct": {"true", "false"},
		"score":   {"0.25", "1", "0.5", "-2.75"},
		"mixed":   {"true", "0.75", `"text"`, "false", "3", "null"},
	}
	evaluation := func(rng *rand.Rand) dataset.Evaluation {
		ev := evaluators[rng.IntN(len(evaluators))]
		vs := values[ev]
		return dataset.Evaluation{
			EvaluatorID: dataset.EvaluatorID(x.ID, ev, "row"), EvaluatorName: ev, RowID: rows[rng.IntN(len(rows))], Run: 1 + rng.IntN(2),
			Value: json.RawMessage(vs[rng.IntN(len(vs))]), Type: "x",
		}
	}

	// Sequentially first: each outcome's requests counted.
	rng := rand.New(rand.NewPCG(1, 2))
	e := evaluation(rng)
	counter.Reset()
	require.NoError(t, store.PutEvaluation(ctx, pid, x.ID, e))
	require.Equal(t, map[string]int{"TransactWriteItems": 1}, counter.Counts(), "a new evaluation")
	counter.Reset()
	require.NoError(t, store.PutEvaluation(ctx, pid, x.ID, e))
	require.Equal(t, map[string]int{"TransactWriteItems": 2}, counter.Counts(), "the same evaluation again")
	for range 150 {
		e := evaluation(rng)
		require.NoError(t, store.PutEvaluation(ctx, pid, x.ID, e))
		if rng.IntN(3) == 0 { // a retry
			require.NoError(t, store.PutEvaluation(ctx, pid, x.ID, e))
		}
	}
	requireTalliesEqualRecount(t, store, pid, x.ID)

	// Then writers at once, on few results so that they replace each other's evaluations. A
	// write that loses to contention fails whole; what is stored must still add up.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range 40 {
				e := evaluation(rng)
				e.RowID = rows[rng.IntN(2)]
				_ = store.PutEvaluation(ctx, pid, x.ID, e)
			}
		})
	}
	wg.Wait()
	requireTalliesEqualRecount(t, store, pid, x.ID)

	// An evaluation of a result that does not exist is NotFound, and counts nowhere.
	missing := evaluation(rng)
	missing.RowID = fmt.Sprintf("%032x", 999)
	require.Error(t, store.PutEvaluation(ctx, pid, x.ID, missing))
	requireTalliesEqualRecount(t, store, pid, x.ID)
}

// requireTalliesEqualRecount recounts the stored evaluations of every run and compares them
// with the tallies an experiment's definition reads.
func requireTalliesEqualRecount(t *testing.T, store *ddb.DatasetStore, pid, id string) {
	t.Helper()
	ctx := context.Background()
	want := map[string]dataset.Tally{}
	for run := 1; run <= 2; run++ {
		results, next, err := store.Results(ctx, pid, id, run, "", 1000)
		require.NoError(t, err)
		require.Empty(t, next)
		for _, r := range results {
			for _, e := range r.Evaluations {
				k := fmt.Sprintf("%d/%s", run, e.EvaluatorName)
				want[k] = want[k].Add(dataset.TallyOf(e.Value))
			}
		}
	}
	d, err := store.Detail(ctx, pid, id)
	require.NoError(t, err)
	got := map[string]dataset.Tally{}
	for _, a := range d.Aggregates {
		if !a.IsZero() {
			got[fmt.Sprintf("%d/%s", a.Run, a.EvaluatorName)] = a.Tally
		}
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, got)
}
