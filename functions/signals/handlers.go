package signals

import (
	"fmt"
	"math"
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/signal"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/web"
)

// Bounds of a signal write: a bulk holds at most maxBulk signals (a TypeScript flush of 100
// spans with a few signals each fits), whose names and ids fit maxBulkBody.
const (
	maxBulk       = 1000
	maxBulkBody   = 1 << 20
	maxSignalBody = 64 << 10
	maxChoiceBody = 256 << 10
)

type server struct{ svc *signal.Service }

// postOne serves POST /signals/ (the TypeScript SDK's sendSignal): one signal.
func (s *server) postOne(w http.ResponseWriter, r *http.Request) {
	var req api.SignalRequest
	if err := web.Decode(w, r, &req, maxSignalBody); err != nil {
		web.Error(w, r, err)
		return
	}
	s.set(w, r, []api.SignalRequest{req})
}

// postBulk serves POST /signals/bulk (Python's set_signal, the TypeScript SDK's flushes).
func (s *server) postBulk(w http.ResponseWriter, r *http.Request) {
	var req api.BulkSignalsRequest
	if err := web.Decode(w, r, &req, maxBulkBody); err != nil {
		web.Error(w, r, err)
		return
	}
	if len(req.Signals) == 0 || len(req.Signals) > maxBulk {
		web.Error(w, r, errs.Invalid("signals must hold 1 to %d signals", maxBulk))
		return
	}
	s.set(w, r, req.Signals)
}

// set stores signals and answers in the shape the TypeScript SDK parses. Refused signals are
// listed by index beside the stored ones; when every signal is refused the answer is 400 with
// the first refusal, so that the Python SDK, which reads only the status, reports a failure.
func (s *server) set(w http.ResponseWriter, r *http.Request, reqs []api.SignalRequest) {
	inputs := make([]signal.Input, len(reqs))
	for i, q := range reqs {
		inputs[i] = signal.Input{Ref: signal.EntityRef{Type: q.EntityType, ID: q.EntityID}, Name: q.Name, Value: q.Value, Type: q.SignalType}
	}
	refused, err := s.svc.Set(r.Context(), auth.ProjectID(r), inputs)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if len(refused) == len(reqs) {
		f := refused[0]
		web.Error(w, r, errs.Invalid("signal %d (%q): %s", f.Index, textcut.Quote(f.Input.Name, 40), f.Err))
		return
	}
	ans := api.SignalsAnswer{Status: "success", ProcessedCount: len(reqs) - len(refused), FailedCount: len(refused), Errors: []api.SignalError{}}
	ans.Message = fmt.Sprintf("%d signals stored", ans.ProcessedCount)
	if len(refused) > 0 {
		ans.Status = "partial"
		ans.Message += fmt.Sprintf(", %d refused", len(refused))
	}
	for _, f := range refused {
		ans.Errors = append(ans.Errors, api.SignalError{Index: f.Index, EntityType: f.Input.Ref.Type, EntityID: f.Input.Ref.ID,
			SignalName: f.Input.Name, Error: f.Err.Error()})
	}
	web.OK(w, ans)
}

// entity serves GET /signals/entity/{signal_entity_type}/{entity_id}: the entity's signals by
// name, a JSON array (empty when it has none).
func (s *server) entity(w http.ResponseWriter, r *http.Request) {
	e, err := s.svc.Entity(r.Context(), auth.ProjectID(r), signal.EntityRef{Type: r.PathValue("signal_entity_type"), ID: r.PathValue("entity_id")})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, e.Wire())
}

// choose serves POST /ab-choices (ze.choose). An ingest key is answered with what its request
// determines (the test's status, the choice's derived id), not with what is stored (whether
// the entity already had a variant, the kept definition, the test's end).
func (s *server) choose(w http.ResponseWriter, r *http.Request) {
	var req api.ABChoiceRequest
	if err := web.Decode(w, r, &req, maxChoiceBody); err != nil {
		web.Error(w, r, err)
		return
	}
	in, err := toChoice(req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	res, err := s.svc.Choose(r.Context(), auth.ProjectID(r), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	ans := api.ABChoiceAnswer{TestStatus: res.Status}
	if res.Status == api.ABCompleted {
		ans.Message = fmt.Sprintf("A/B test %q has completed: serve the default variant", in.Test)
	} else {
		ans.Message = fmt.Sprintf("choice %q of A/B test %q recorded", in.Variant, in.Test)
		ans.ABChoiceID = &res.ID
	}
	if auth.MayRead(r) {
		ans.DefinitionKept = res.DefinitionKept
		ans.EndsAt = &res.Test.EndsAt
		ans.Recorded = &res.Recorded
		if res.DefinitionKept {
			ans.Message += "; the test's first definition is kept"
		}
	}
	web.OK(w, ans)
}

// toChoice reads a choice request.
func toChoice(req api.ABChoiceRequest) (signal.ChoiceInput, error) {
	d := req.DurationDays
	if d != math.Trunc(d) || d < 1 || d > signal.MaxDurationDays {
		return signal.ChoiceInput{}, errs.Invalid("duration_days must be a whole number from 1 to %d", signal.MaxDurationDays)
	}
	def := signal.Test{DurationDays: int(d)}
	for _, kv := range req.Variants {
		wt, ok := req.Weights[kv.Key]
		if !ok {
			return signal.ChoiceInput{}, errs.Invalid("weights has no weight for variant %q", textcut.Quote(kv.Key, 40))
		}
		def.Variants = append(def.Variants, signal.Variant{Key: kv.Key, Value: kv.Value, Weight: wt})
	}
	if len(req.Weights) != len(req.Variants) {
		return signal.ChoiceInput{}, errs.Invalid("weights and variants must have the same keys")
	}
	return signal.ChoiceInput{Ref: signal.EntityRef{Type: req.EntityType, ID: req.EntityID}, Test: req.ChoiceName,
		Variant: req.VariantKey, Definition: def}, nil
}

// tests serves GET /projects/{project_id}/ab-tests: the project's tests by name.
func (s *server) tests(w http.ResponseWriter, r *http.Request) {
	ts, err := s.svc.Tests(r.Context(), auth.ProjectID(r))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	now := s.svc.Now()
	out := make([]api.ABTest, len(ts))
	for i, t := range ts {
		out[i] = t.Wire(now)
	}
	web.List(w, r, out, func(out []api.ABTest) any { return api.ABTestList{Tests: out, Count: len(out)} })
}

// report serves GET /projects/{project_id}/ab-tests/{test_name}.
func (s *server) report(w http.ResponseWriter, r *http.Request) {
	rep, err := s.svc.Report(r.Context(), auth.ProjectID(r), r.PathValue("test_name"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, rep)
}
