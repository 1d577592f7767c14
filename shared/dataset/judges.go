package dataset

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// Judges reads a project's judges (ddb.JudgeStore).
type Judges interface {
	// Judge reads a judge. Errors: NotFound.
	Judge(ctx context.Context, projectID, id string) (judge.Judge, error)
}

// RequestObjects stores objects in the bucket (blob.Store): where JudgeRequests go.
type RequestObjects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
}

// WithJudges lets judges evaluate experiments (AttachJudge): judges reads them, and requests
// stores the JudgeRequests the judge runner answers. Without it, AttachJudge is unavailable.
func (x *Experiments) WithJudges(judges Judges, requests RequestObjects) *Experiments {
	x.judges, x.requests = judges, requests
	return x
}

// JudgeRequest asks the judge runner (functions/evaluator) for verdicts on an experiment's
// results. It is stored as an object under JudgeRequestPrefix, whose Object Created event
// reaches the runner as a span batch's does (the same retries and dead-letter queue), so the
// API needs no permission to invoke functions.
//
// With JudgeID, that judge evaluates every result of the experiment, run by run from Run
// (0: the first) and row by row after Cursor (a row id, "" from the start): what
// AttachJudge asks for, and what the runner asks itself to continue with when its invocation
// ends first. With Results, every judge attached to the experiment evaluates those results:
// what a result posted after a judge was attached asks for.
type JudgeRequest struct {
	ProjectID    string      `json:"project_id"`
	ExperimentID string      `json:"experiment_id"`
	JudgeID      string      `json:"judge_id,omitempty"`
	Run          int         `json:"run,omitempty"`
	Cursor       string      `json:"cursor,omitempty"`
	Results      []ResultRef `json:"results,omitempty"`
	RequestedAt  time.Time   `json:"requested_at"`
}

// ResultRef names a result: its row and run.
type ResultRef struct {
	RowID string `json:"row_id"`
	Run   int    `json:"run"`
}

// JudgeRequestPrefix starts the key of every JudgeRequest.
const JudgeRequestPrefix = "experiment-judges/"

// JudgeRequestKey is a new key for a JudgeRequest about an experiment of a project:
// experiment-judges/project=<id>/<experiment>/<uuid v7>.json.
func JudgeRequestKey(projectID, experimentID string) string {
	return fmt.Sprintf("%sproject=%s/%s/%s.json", JudgeRequestPrefix, projectID, experimentID, uuid.Must(uuid.NewV7()))
}

// ParseJudgeRequestKey returns the project and experiment of a JudgeRequest's key; ok is
// false for a key that is not one.
func ParseJudgeRequestKey(key string) (projectID, experimentID string, ok bool) {
	rest, found := strings.CutPrefix(key, JudgeRequestPrefix+"project=")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || !strings.HasSuffix(parts[2], ".json") {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// PutJudgeRequest stores req under a new key of its project and experiment.
func PutJudgeRequest(ctx context.Context, objects RequestObjects, req JudgeRequest) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode judge request: %w", err)
	}
	key := JudgeRequestKey(req.ProjectID, req.ExperimentID)
	if err := objects.Put(ctx, key, body, "application/json"); err != nil {
		return fmt.Errorf("store judge request %s: %w", key, err)
	}
	return nil
}

func (x *Experiments) requestJudging(ctx context.Context, req JudgeRequest) error {
	if x.requests == nil {
		return errs.Unavailable("judges cannot evaluate experiments here: no bucket is configured")
	}
	return PutJudgeRequest(ctx, x.requests, req)
}

// JudgeEvaluatorID is the id of the evaluator of judge judgeID in an experiment: the same on
// every attach, so that attaching a judge again changes nothing.
func JudgeEvaluatorID(experimentID, judgeID string) string {
	sum := sha256.Sum256([]byte(experimentID + "\x00judge\x00" + judgeID))
	return uuid.Must(uuid.FromBytes(sum[:16])).String()
}

// AttachJudge makes judge judgeID evaluate every result of experiment id, those posted
// later too: its evaluator (named as the judge, mode row) is stored with the experiment, and
// the evaluation of the results already posted is queued for the judge runner. Attaching a
// judge again queues the evaluation again, which calls the model only for results whose
// content the judge has not seen. Errors: NotFound for an unknown experiment or judge,
// Unavailable when judges are not configured.
func (x *Experiments) AttachJudge(ctx context.Context, projectID, id, judgeID string) (api.AttachedJudge, error) {
	if x.judges == nil || x.requests == nil {
		return api.AttachedJudge{}, errs.Unavailable("judges cannot evaluate experiments here: no bucket is configured")
	}
	if _, err := uuid.Parse(id); err != nil {
		return api.AttachedJudge{}, errs.NotFound("experiment %q not found", id)
	}
	if strings.TrimSpace(judgeID) == "" {
		return api.AttachedJudge{}, errs.Invalid("judge_id is required")
	}
	j, err := x.judges.Judge(ctx, projectID, judgeID)
	if err != nil {
		return api.AttachedJudge{}, err
	}
	now := x.now().UTC()
	e := Evaluator{ID: JudgeEvaluatorID(id, j.ID), ExperimentID: id, Name: j.Name, Mode: api.EvaluationModeRow, JudgeID: j.ID, CreatedAt: now}
	if err := x.store.AttachJudge(ctx, projectID, e); err != nil {
		return api.AttachedJudge{}, err
	}
	if err := x.requestJudging(ctx, JudgeRequest{ProjectID: projectID, ExperimentID: id, JudgeID: j.ID, RequestedAt: now}); err != nil {
		return api.AttachedJudge{}, err
	}
	return api.AttachedJudge{ExperimentID: id, JudgeID: j.ID, EvaluatorID: e.ID, EvaluatorName: e.Name, Status: "queued", RequestedAt: now}, nil
}

// VerdictEvaluation is a judge's evaluation as an experiment's evaluation of the result
// (row, run) under the judge's evaluator: a binary judge's verdict as a boolean, a scored
// judge's score as a number, with the judge's reason.
func VerdictEvaluation(experimentID string, j judge.Judge, ev judge.Evaluation, rowID string, run int) (Evaluation, error) {
	var (
		value any = ev.Result
		typ       = "boolean"
	)
	if j.EvaluationType == judge.TypeScored && ev.Score != nil {
		value, typ = *ev.Score, "number"
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return Evaluation{}, fmt.Errorf("encode verdict: %w", err)
	}
	var reason *string
	if ev.Reason != "" {
		reason = &ev.Reason
	}
	return Evaluation{
		EvaluatorID: JudgeEvaluatorID(experimentID, j.ID), EvaluatorName: j.Name, RowID: rowID, Run: run,
		Value: raw, Type: typ, Reason: reason,
	}, nil
}

// ReadRows reads a version's object (its lines {"row_id", "data"}) and returns the data of
// the rows whose ids want holds (every row when want is nil), stopping as soon as it has them
// all.
func ReadRows(r io.Reader, want map[string]bool) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(want))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), api.MaxDatasetRowBytes+4096)
	for sc.Scan() && (want == nil || len(out) < len(want)) {
		var row struct {
			RowID string          `json:"row_id"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("decode row: %w", err)
		}
		if want == nil || want[row.RowID] {
			out[row.RowID] = row.Data
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	return out, nil
}
