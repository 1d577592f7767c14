package signals_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// pythonChoice is ze.choose's request body as the Python SDK's requests.post(json=...) writes
// it: json.dumps with its default separators, the dict's order kept, values str()-ed.
func pythonChoice(entityType, entityID, name, variant string) string {
	return fmt.Sprintf(`{"entity_type": %q, "entity_id": %q, "choice_name": %q, "variant_key": %q, "variant_value": "gpt-4o", `+
		`"variants": {"control": "gpt-4o-mini", "variant_a": "gpt-4o"}, "weights": {"control": 0.5, "variant_a": 0.5}, "duration_days": 14}`,
		entityType, entityID, name, variant)
}

// sdkChoice is what the Python SDK reads of the answer.
type sdkChoice struct {
	TestStatus string  `json:"test_status"`
	Message    string  `json:"message"`
	ABChoiceID *string `json:"ab_choice_id"`
}

// TestChooseReplays replays ze.choose inside a span, a trace and a session (the SDK picks the
// innermost) and then the span's /spans payload with its ab_choices; a retried choice gets the
// same id and counts once.
func TestChooseReplays(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	test := "model_test"
	ids := map[string]string{}
	for _, kind := range []string{"span", "trace", "session"} {
		t.Run(kind, func(t *testing.T) {
			id := uuid.NewString()
			res := srv.Do(t, "POST", "/ab-choices", a.Key, pythonChoice(kind, id, test, "variant_a"))
			require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
			var ans sdkChoice
			res.Decode(t, &ans)
			assert.Equal(t, "running", ans.TestStatus)
			assert.NotEmpty(t, ans.Message)
			require.NotNil(t, ans.ABChoiceID)
			_, err := uuid.Parse(*ans.ABChoiceID)
			assert.NoError(t, err)

			var again sdkChoice
			srv.MustDo(t, "POST", "/ab-choices", a.Key, pythonChoice(kind, id, test, "variant_a")).Decode(t, &again)
			assert.Equal(t, *ans.ABChoiceID, *again.ABChoiceID, "a retry answers the same id")
			ids[kind] = id
		})
	}
	// The span carries the choice to /spans, as the SDK appends it.
	choiceID := *decodeChoice(t, srv.MustDo(t, "POST", "/ab-choices", a.Key, pythonChoice("span", ids["span"], test, "variant_a"))).ABChoiceID
	at := float64(time.Now().UnixMicro()) / 1e6
	srv.MustDo(t, "POST", "/spans", a.Key, []any{map[string]any{"id": ids["span"], "trace_id": ids["trace"], "session_id": ids["session"],
		"name": "pick", "started_at": at, "ended_at": at, "ab_choices": []any{map[string]any{"ab_choice_id": choiceID,
			"choice_name": test, "variant_key": "variant_a", "variant_value": "gpt-4o"}}}})

	rep := report(t, srv, a, test)
	assert.Equal(t, "welch_t", rep.Test)
	require.Len(t, rep.Results, 2)
	assert.Equal(t, "control", rep.Results[0].Key, "the first variant the SDK sent is the control")
	assert.Equal(t, int64(0), rep.Results[0].Choices)
	assert.Equal(t, int64(3), rep.Results[1].Choices, "one per entity, retries counted once")
	assert.Equal(t, rep.EndsAt, rep.DecisionAt)
	assert.Equal(t, 14*24*time.Hour, rep.EndsAt.Sub(rep.StartedAt))
}

func decodeChoice(t *testing.T, res interface{ Decode(testing.TB, any) }) sdkChoice {
	var c sdkChoice
	res.Decode(t, &c)
	return c
}

// TestChooseDefinitions: the first definition wins; another is told (to a member) and the
// choice still counts; an unknown variant is 409; bad requests are 400 and store nothing.
func TestChooseDefinitions(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("span", uuid.NewString(), "t", "a", 7))

	other := choiceBody("span", uuid.NewString(), "t", "b", 30)
	var ans api.ABChoiceAnswer
	srv.MustDo(t, "POST", "/ab-choices", a.Key, other).Decode(t, &ans)
	assert.True(t, ans.DefinitionKept)
	require.NotNil(t, ans.Recorded)
	assert.True(t, *ans.Recorded)
	rep := report(t, srv, a, "t")
	assert.Equal(t, 7, rep.DurationDays, "the first definition")
	assert.Equal(t, int64(1), rep.Results[1].Choices)

	unknown := choiceBody("span", uuid.NewString(), "t", "c", 7)
	unknown["variants"] = map[string]any{"a": "x", "c": "y"}
	unknown["weights"] = map[string]any{"a": 0.5, "c": 0.5}
	res := srv.Do(t, "POST", "/ab-choices", a.Key, unknown)
	assert.Equal(t, http.StatusConflict, res.Status, "body: %s", res.Body)
	assert.Equal(t, "conflict", res.ErrCode(t))

	bad := []func(m map[string]any){
		func(m map[string]any) { m["duration_days"] = 0 },
		func(m map[string]any) { m["duration_days"] = 1.5 },
		func(m map[string]any) { m["weights"] = map[string]any{"a": 1} },
		func(m map[string]any) { m["variant_key"] = "z" },
		func(m map[string]any) { m["entity_type"] = "user" },
		func(m map[string]any) { m["choice_name"] = "" },
		func(m map[string]any) { m["weights"] = map[string]any{"a": 0, "b": 0} },
		func(m map[string]any) { m["variants"] = []any{"a", "b"} },
	}
	for i, change := range bad {
		body := choiceBody("span", uuid.NewString(), fmt.Sprint("bad-", i), "a", 7)
		change(body)
		res := srv.Do(t, "POST", "/ab-choices", a.Key, body)
		assert.Equal(t, http.StatusBadRequest, res.Status, "case %d: %s", i, res.Body)
		assert.Equal(t, "invalid_request", res.ErrCode(t))
	}
	var list api.ABTestList
	srv.MustDo(t, "GET", "/projects/"+a.ProjectID+"/ab-tests", a.Key, nil).Decode(t, &list)
	require.Len(t, list.Tests, 1, "no test stored by a bad request")
	assert.Equal(t, "t", list.Tests[0].Name)
	assert.Equal(t, "running", list.Tests[0].Status)

	res = srv.Do(t, "GET", "/projects/"+a.ProjectID+"/ab-tests/nope", a.Key, nil)
	assert.Equal(t, http.StatusNotFound, res.Status)
}

// fixture is the test the report is checked on: per variant, per entity, the signals.
var fixture = map[string][]map[string]any{
	"control": {
		{"score": 1, "converted": true, "latency": 10},
		{"score": 2, "converted": false, "latency": 11},
		{"score": 3, "converted": false, "latency": 12},
		{"score": 4, "converted": false, "latency": 13},
	},
	"treat": {
		{"score": 3, "converted": true, "latency": 20},
		{"score": 4, "converted": true, "latency": 21},
		{"score": 5, "converted": true, "latency": 22},
		{"score": 6, "converted": false, "latency": 23},
		{"score": 7, "converted": true, "latency": 24},
	},
}

// TestReportByHand checks the report of the fixture against figures computed by hand (in
// docs/signals.md's worked example: sample means and standard deviations, Student t quantiles
// t(0.975; 3) = 3.182446 and t(0.975; 4) = 2.776445, Welch's t and degrees of freedom, and
// two-sided p-values integrated numerically from the t density). Half the entities get their
// signals before their choice, half after; every signal write is sent twice, and one value is
// first sent wrong and corrected: the report counts each entity's last value once.
func TestReportByHand(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC())
	srv := apitest.New(t, apitest.Options{Clock: c.Now})
	a := srv.A
	const test = "checkout"
	for variant, entities := range fixture {
		for i, sigs := range entities {
			id := uuid.NewString()
			var bulk []any
			for name, v := range sigs {
				bulk = append(bulk, map[string]any{"entity_type": "trace", "entity_id": id, "name": name, "value": v})
			}
			body := map[string]any{"signals": bulk}
			choose := func() {
				b := choiceBody("trace", id, test, "a", 10)
				b["variants"] = map[string]any{"control": "old", "treat": "new"}
				b["weights"] = map[string]any{"control": 0.5, "treat": 0.5}
				b["variant_key"] = variant
				srv.MustDo(t, "POST", "/ab-choices", a.Key, b)
			}
			if i%2 == 0 {
				srv.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
					map[string]any{"entity_type": "trace", "entity_id": id, "name": "score", "value": 99}}})
				choose()
			}
			srv.MustDo(t, "POST", "/signals/bulk", a.Key, body)
			srv.MustDo(t, "POST", "/signals/bulk", a.Key, body)
			if i%2 == 1 {
				choose()
			}
		}
	}

	rep := report(t, srv, a, test)
	assert.False(t, rep.Decided)
	assert.InDelta(t, 0.05/3, rep.Alpha, 1e-12, "Bonferroni over 3 signals x 1 comparison")
	require.Len(t, rep.Results, 2)
	ctl, trt := rep.Results[0], rep.Results[1]
	assert.Equal(t, "control", ctl.Key)
	assert.Equal(t, int64(4), ctl.Choices)
	assert.Equal(t, int64(5), trt.Choices)

	type want struct {
		n              int64
		mean, sd, l, h float64
	}
	check := func(st api.ABSignalStats, w want) {
		t.Helper()
		assert.Equal(t, w.n, st.N, st.Name)
		assert.InDelta(t, w.mean, st.Mean, 1e-9, st.Name)
		require.NotNil(t, st.StdDev)
		assert.InDelta(t, w.sd, *st.StdDev, 1e-6, st.Name)
		assert.InDelta(t, w.l, *st.CILow, 1e-5, st.Name)
		assert.InDelta(t, w.h, *st.CIHigh, 1e-5, st.Name)
	}
	byName := func(r api.ABVariantResult) map[string]api.ABSignalStats {
		m := map[string]api.ABSignalStats{}
		for _, s := range r.Signals {
			m[s.Name] = s
		}
		return m
	}
	cs, ts := byName(ctl), byName(trt)
	check(cs["score"], want{4, 2.5, 1.290994, 0.445740, 4.554260})
	check(ts["score"], want{5, 5, 1.581139, 3.036757, 6.963243})
	check(cs["converted"], want{4, 0.25, 0.5, -0.545612, 1.045612})
	check(ts["converted"], want{5, 0.8, 0.447214, 0.244711, 1.355289})
	check(cs["latency"], want{4, 11.5, 1.290994, 9.445740, 13.554260})
	check(ts["latency"], want{5, 22, 1.581139, 20.036757, 23.963243})
	assert.Equal(t, api.SignalBoolean, cs["converted"].SignalType)

	cmp := map[string]api.ABComparison{}
	for _, x := range rep.Comparisons {
		cmp[x.Signal] = x
		assert.Nil(t, x.Significant, "%s: no decision before the horizon", x.Signal)
	}
	for sig, w := range map[string]struct{ diff, t, df, p float64 }{
		"score":     {2.5, 2.611165, 6.980769, 0.0349388},
		"converted": {0.55, 1.717911, 6.172583, 0.1352321},
		"latency":   {10.5, 10.966892, 6.980769, 1.18415e-05},
	} {
		x := cmp[sig]
		assert.Equal(t, "treat", x.Variant)
		assert.Equal(t, "control", x.Control)
		assert.InDelta(t, w.diff, x.Difference, 1e-9, sig)
		require.NotNil(t, x.PValue, sig)
		assert.InDelta(t, w.t, *x.T, 1e-5, sig)
		assert.InDelta(t, w.df, *x.DF, 1e-5, sig)
		assert.InEpsilon(t, w.p, *x.PValue, 1e-4, sig)
	}

	// At the horizon: the decision. score's p (0.035) would pass 0.05 but not 0.05/3.
	c.Add(10 * 24 * time.Hour)
	rep = report(t, srv, a, test)
	assert.True(t, rep.Decided)
	assert.Equal(t, "completed", rep.Status)
	for _, x := range rep.Comparisons {
		require.NotNil(t, x.Significant)
		assert.Equal(t, x.Signal == "latency", *x.Significant, x.Signal)
	}

	// A completed test records nothing more: the SDK is told to serve its default.
	b := choiceBody("trace", uuid.NewString(), test, "a", 10)
	b["variants"] = map[string]any{"control": "old", "treat": "new"}
	b["weights"] = map[string]any{"control": 0.5, "treat": 0.5}
	b["variant_key"] = "treat"
	ans := decodeChoice(t, srv.MustDo(t, "POST", "/ab-choices", a.Key, b))
	assert.Equal(t, "completed", ans.TestStatus)
	assert.Nil(t, ans.ABChoiceID)
	assert.Equal(t, int64(5), report(t, srv, a, test).Results[1].Choices)
}

// TestConcurrentSignals: writers racing on one entity in a test count each signal once, with
// its last value.
func TestConcurrentSignals(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	id := uuid.NewString()
	srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("session", id, "race", "a", 3))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := srv.Do(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
				map[string]any{"entity_type": "session", "entity_id": id, "name": fmt.Sprint("s", i), "value": i},
				map[string]any{"entity_type": "session", "entity_id": id, "name": "shared", "value": 5},
			}})
			assert.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		}()
	}
	wg.Wait()
	rep := report(t, srv, a, "race")
	require.Len(t, rep.Results[0].Signals, 9)
	for _, s := range rep.Results[0].Signals {
		assert.Equal(t, int64(1), s.N, s.Name)
	}
}
