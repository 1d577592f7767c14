package feedback_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/feedback"
)

// TestUnifiedFeedbackIndexMatchesBruteForce: random projects (traces in sessions or not, traces
// that join their session through a span that comes later, feedback before its span, feedback
// on spans that never come, evaluations, submissions again), read through the feedback index
// that the stream consumer keeps, answer every trace and session exactly as a brute-force
// evaluation over everything stored (a Scan) does, and as the reads without the index do.
func TestUnifiedFeedbackIndexMatchesBruteForce(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 27))
			api := apitest.New(t, apitest.Options{})
			a := api.A
			vid := api.EnsurePrompt(t, a, "bot", "Answer.")
			jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "J", "template": "Is it right?"}).Map(t)["id"].(string)
			sessions := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
			type span struct{ id, trace, session string }
			var early, late []span // posted in the first round, in the second
			var traces []string
			for range 4 + rng.IntN(6) {
				trace, session := uuid.NewString(), ""
				if rng.IntN(4) > 0 {
					session = sessions[rng.IntN(len(sessions))]
				}
				traces = append(traces, trace)
				joinLate := session != "" && rng.IntN(2) == 0
				for i := range 1 + rng.IntN(4) {
					s := span{uuid.NewString(), trace, session}
					switch {
					case joinLate && i == 0:
						s.session = "" // the trace's first span names no session; a later one does
						early = append(early, s)
					case joinLate || rng.IntN(3) == 0:
						late = append(late, s)
					default:
						early = append(early, s)
					}
				}
			}
			never := uuid.NewString() // feedback on a span that never comes
			post := func(spans []span) {
				var batch []any
				for _, s := range spans {
					batch = append(batch, apitest.LLMSpan(s.id, s.trace, s.session, "bot", vid, "q", "a", nowish()))
				}
				if len(batch) > 0 {
					api.MustDo(t, "POST", "/spans", a.Key, batch)
				}
			}
			keys := []string{a.Key, api.KeyFor(t, a, "reviewer-2"), api.KeyFor(t, a, "reviewer-3")}
			give := func(spans []span, users int) {
				for _, s := range spans {
					for u := range rng.IntN(users + 1) {
						body := map[string]any{"thumbs_up": rng.IntN(2) == 0, "reason": fmt.Sprint("r", u)}
						api.MustDo(t, "POST", feedbackPath("bot", s.id), keys[u], body)
					}
				}
			}
			evaluate := func(spans []span) {
				var evals []any
				for _, s := range spans {
					if rng.IntN(2) == 0 {
						evals = append(evals, map[string]any{"span_id": s.id, "evaluation_result": rng.IntN(2) == 0})
					}
				}
				if len(evals) > 0 {
					api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals)
				}
			}

			post(early)
			give(append(slices.Clone(early), late...), 2) // feedback on late spans: orphans for now
			give([]span{{id: never}}, 1)
			evaluate(early)
			api.DrainStream(t)
			post(late) // late traces join their sessions; orphans' spans arrive
			give(late[:len(late)/2], 1)
			evaluate(late)
			api.DrainStream(t)

			want := bruteForce(t, api, a.ProjectID)
			ctx := context.Background()
			old := ddb.NewFeedbackStore(ddb.NewTable(ddbtest.Client(t, nil), api.TableName))
			check := func(kind, id string) {
				got := unifiedIDs(t, api, kind, id)
				assert.Equal(t, want[kind+" "+id], got, "%s %s through the index", kind, id)
				items, err := old.EntityFeedback(ctx, a.ProjectID, kind, id)
				require.NoError(t, err)
				var ids []string
				for _, it := range items {
					ids = append(ids, itemID(it))
				}
				slices.Sort(ids)
				assert.Equal(t, want[kind+" "+id], ids, "%s %s without the index", kind, id)
			}
			for _, tr := range traces {
				if want["trace "+tr] != nil {
					check("trace", tr)
				}
			}
			for _, s := range sessions {
				if want["session "+s] != nil {
					check("session", s)
				}
			}
		})
	}
}

// unifiedIDs reads an entity's unified feedback through the API and returns its items' ids,
// sorted, after checking the summary counts them.
func unifiedIDs(t *testing.T, api *apitest.API, kind, id string) []string {
	t.Helper()
	u := api.MustDo(t, "GET", unifiedPath(api.A.ProjectID, kind, id), api.A.Key, nil).Map(t)
	var ids []string
	for _, it := range u["items"].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	slices.Sort(ids)
	assert.Equal(t, float64(len(ids)), u["summary"].(map[string]any)["total"])
	return ids
}

func itemID(it feedback.Item) string {
	if it.Feedback != nil {
		return it.Feedback.ID
	}
	return it.Evaluation.ID
}

// bruteForce scans the table and returns the ids of the feedback and evaluations of every
// trace ("trace <id>") and session ("session <id>"), sorted: an item is its span's, the span
// its trace's (its summary), the trace its session's (its TRACE item).
func bruteForce(t *testing.T, api *apitest.API, projectID string) map[string][]string {
	t.Helper()
	client := ddbtest.Client(t, nil)
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(api.TableName), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		items = append(items, page.Items...)
	}
	str := func(it map[string]types.AttributeValue, name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	spanPrefix, tracePrefix := "P#"+projectID+"#S#", "P#"+projectID+"#T#"
	traceOf, sessionOf := map[string]string{}, map[string]string{}
	for _, it := range items {
		switch pk, sk := str(it, "PK"), str(it, "SK"); {
		case sk == "SPAN" && strings.HasPrefix(pk, spanPrefix):
			traceOf[strings.TrimPrefix(pk, spanPrefix)] = str(it, "t")
		case sk == "TRACE" && strings.HasPrefix(pk, tracePrefix):
			sessionOf[strings.TrimPrefix(pk, tracePrefix)] = str(it, "ss")
		}
	}
	out := map[string][]string{}
	for _, it := range items {
		pk, sk := str(it, "PK"), str(it, "SK")
		if !strings.HasPrefix(pk, spanPrefix) || !(strings.HasPrefix(sk, "FB#") || strings.HasPrefix(sk, "EVAL#") && it["r"] != nil) {
			continue
		}
		trace, ok := traceOf[strings.TrimPrefix(pk, spanPrefix)]
		if !ok {
			continue // its span never came
		}
		out["trace "+trace] = append(out["trace "+trace], str(it, "id"))
		if s := sessionOf[trace]; s != "" {
			out["session "+s] = append(out["session "+s], str(it, "id"))
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// TestSessionFeedbackRequestsDoNotGrowWithTraces: through the feedback index, a session's
// unified feedback costs the same DynamoDB requests at 10 and at 100 traces (one Query), and
// a trace's three (its session, and a Query of each of its index keys), whatever the session.
func TestSessionFeedbackRequestsDoNotGrowWithTraces(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "J", "template": "Is it right?"}).Map(t)["id"].(string)
	requests := map[int]string{}
	for _, n := range []int{10, 100} {
		session := uuid.NewString()
		var evals []any
		var lastTrace string
		for i := range n {
			trace, spans := ingestTrace(t, api, a, "bot", vid, session, 2)
			lastTrace = trace
			api.MustDo(t, "POST", feedbackPath("bot", spans[0]), a.Key, map[string]any{"thumbs_up": i%2 == 0})
			evals = append(evals, map[string]any{"span_id": spans[1], "evaluation_result": true})
		}
		for start := 0; start < len(evals); start += 100 {
			api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals[start:min(start+100, len(evals))])
		}
		api.DrainStream(t)

		path := unifiedPath(a.ProjectID, "session", session)
		api.MustDo(t, "GET", path, a.Key, nil) // the key is read and cached: only the read's own requests count
		api.DDB.Reset()
		u := api.MustDo(t, "GET", path, a.Key, nil).Map(t)
		assert.Equal(t, float64(2*n), u["summary"].(map[string]any)["total"])
		requests[n] = api.DDB.String()
		assert.Equal(t, 1, api.DDB.Total(), "a session of %d traces: DynamoDB requests %s", n, api.DDB)

		path = unifiedPath(a.ProjectID, "trace", lastTrace)
		api.MustDo(t, "GET", path, a.Key, nil)
		api.DDB.Reset()
		u = api.MustDo(t, "GET", path, a.Key, nil).Map(t)
		assert.Equal(t, 2.0, u["summary"].(map[string]any)["total"])
		assert.Equal(t, 3, api.DDB.Total(), "a trace of a session of %d traces: DynamoDB requests %s", n, api.DDB)
	}
	assert.Equal(t, requests[10], requests[100], "requests at 10 and 100 traces")
}
