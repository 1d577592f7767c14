package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SignalRequest is one signal of POST /signals/ and POST /signals/bulk, as the zeroeval SDKs
// send it. Value is a JSON number, boolean or string: the Python SDK sends True with
// signal_type "numerical" (a bool is an int in Python), the TypeScript SDK sends span signals
// as strings ("true", "0.82"); shared/signal reads each as the SDK meant it.
type SignalRequest struct {
	EntityType string          `json:"entity_type"`
	EntityID   string          `json:"entity_id"`
	Name       string          `json:"name"`
	Value      json.RawMessage `json:"value"`
	SignalType string          `json:"signal_type,omitempty"`
}

// BulkSignalsRequest is the body of POST /signals/bulk.
type BulkSignalsRequest struct {
	Signals []SignalRequest `json:"signals"`
}

// SignalsAnswer is the answer of both signal writes, in the shape the TypeScript SDK parses:
// status "success" when every signal was stored, "partial" when some were refused (listed in
// Errors by their index in the request), "error" when none was.
type SignalsAnswer struct {
	Status         string        `json:"status"`
	Message        string        `json:"message"`
	ProcessedCount int           `json:"processed_count"`
	FailedCount    int           `json:"failed_count"`
	Errors         []SignalError `json:"errors"`
}

// SignalError is one refused signal of a SignalsAnswer.
type SignalError struct {
	Index      int    `json:"index"`
	EntityType string `json:"entity_type"`
	EntityID   string `json:"entity_id"`
	SignalName string `json:"signal_name"`
	Error      string `json:"error"`
}

// Signal is one stored signal of an entity (GET /signals/entity/{entity_type}/{entity_id}, a
// JSON array of them). Value is a JSON boolean for signal_type "boolean", a number for
// "numerical".
type Signal struct {
	Name       string    `json:"name"`
	Value      any       `json:"value"`
	SignalType string    `json:"signal_type"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Signal types.
const (
	SignalBoolean   = "boolean"
	SignalNumerical = "numerical"
)

// ABChoiceRequest is the body of POST /ab-choices, sent by the Python SDK's ze.choose: the
// choice made for one entity and the definition of its test (variant values str()-ed).
// Variants keeps the order the SDK sent them in: the first variant is the test's control.
type ABChoiceRequest struct {
	EntityType   string             `json:"entity_type"`
	EntityID     string             `json:"entity_id"`
	ChoiceName   string             `json:"choice_name"`
	VariantKey   string             `json:"variant_key"`
	VariantValue string             `json:"variant_value"`
	Variants     OrderedValues      `json:"variants"`
	Weights      map[string]float64 `json:"weights"`
	DurationDays float64            `json:"duration_days"`
}

// ABChoiceAnswer answers POST /ab-choices. The SDK reads TestStatus ("completed": it serves its
// default variant), Message and ABChoiceID (appended to the span's ab_choices). ABChoiceID is
// derived from the project, the entity and the choice name, so a retried choice gets the same
// id and the answer holds nothing the request did not determine. DefinitionKept says the test
// already existed with another definition, which was kept; it , EndsAt and Recorded are given only to
// keys that may read the project.
type ABChoiceAnswer struct {
	TestStatus     string     `json:"test_status"`
	Message        string     `json:"message"`
	ABChoiceID     *string    `json:"ab_choice_id"`
	Recorded       *bool      `json:"recorded,omitempty"`
	DefinitionKept bool       `json:"definition_kept,omitempty"`
	EndsAt         *time.Time `json:"ends_at,omitempty"`
}

// A/B test statuses.
const (
	ABRunning   = "running"
	ABCompleted = "completed"
)

// ABVariant is one variant of an A/B test's definition.
type ABVariant struct {
	Key    string  `json:"key"`
	Value  string  `json:"value"`
	Weight float64 `json:"weight"`
}

// ABTest is an A/B test as listed (GET /projects/{project_id}/ab-tests).
type ABTest struct {
	Name         string      `json:"name"`
	Status       string      `json:"status"`
	Variants     []ABVariant `json:"variants"`
	DurationDays int         `json:"duration_days"`
	StartedAt    time.Time   `json:"started_at"`
	EndsAt       time.Time   `json:"ends_at"`
	// Prompt and Tag name the prompt tag whose split the test is (absent for a test of
	// ze.choose); its variants are the versions ("v3"), their values the versions' ids.
	Prompt string `json:"prompt,omitempty"`
	Tag    string `json:"tag,omitempty"`
}

// ABTestList is the answer of GET /projects/{project_id}/ab-tests.
type ABTestList struct {
	Tests []ABTest `json:"tests"`
	Count int      `json:"count"`
}

// ABReport is the answer of GET /projects/{project_id}/ab-tests/{name}: per variant the number
// of entities that got it and, per signal, the mean with its 95% confidence interval (Student
// t); and each variant's difference from the control (the first variant) per signal, tested
// with Welch's t-test at Alpha, the 0.05 family-wise level split over every comparison of the
// report (Bonferroni). The horizon is fixed: a difference is declared (Significant non-null)
// only once the test has completed, at DecisionAt (its end), however small the p-value
// before; looking earlier cannot change the decision.
type ABReport struct {
	ABTest
	Test        string            `json:"test"`
	Alpha       float64           `json:"alpha"`
	DecisionAt  time.Time         `json:"decision_at"`
	Decided     bool              `json:"decided"`
	Results     []ABVariantResult `json:"results"`
	Comparisons []ABComparison    `json:"comparisons"`
}

// ABVariantResult is one variant's outcomes. Judges and Feedback read the signals Plume derives
// on the spans of the variant (a choice recorded on the span): "plume.judge.<judge id>", a
// judge's verdict, and "plume.feedback.up" / ".down", the span's thumbs; they are in Signals
// too, so their comparisons are in the report's.
type ABVariantResult struct {
	Key      string          `json:"key"`
	Choices  int64           `json:"choices"`
	Signals  []ABSignalStats `json:"signals"`
	Judges   []ABJudgeStats  `json:"judges"`
	Feedback ABFeedback      `json:"feedback"`
}

// ABJudgeStats is one judge's verdicts on the spans of a variant.
type ABJudgeStats struct {
	JudgeID     string  `json:"judge_id"`
	Evaluations int64   `json:"evaluations"`
	Passed      int64   `json:"passed"`
	PassRate    float64 `json:"pass_rate"`
}

// ABFeedback is people's feedback on the spans of a variant: the spans that have some, and
// their thumbs up and down.
type ABFeedback struct {
	Spans int64 `json:"spans"`
	Up    int64 `json:"up"`
	Down  int64 `json:"down"`
}

// ABSignalStats is one signal's summary over the entities of one variant that carry it. The
// mean of a boolean signal is its rate of true. StdDev, CILow and CIHigh need two values.
type ABSignalStats struct {
	Name       string   `json:"name"`
	SignalType string   `json:"signal_type"`
	N          int64    `json:"n"`
	Mean       float64  `json:"mean"`
	StdDev     *float64 `json:"std_dev"`
	CILow      *float64 `json:"ci95_low"`
	CIHigh     *float64 `json:"ci95_high"`
}

// ABComparison is Welch's t-test of one signal between a variant and the control.
type ABComparison struct {
	Signal     string   `json:"signal"`
	Variant    string   `json:"variant"`
	Control    string   `json:"control"`
	Difference float64  `json:"difference"`
	T          *float64 `json:"t"`
	DF         *float64 `json:"df"`
	PValue     *float64 `json:"p_value"`
	// Significant is null until the test has completed (ABReport.Decided).
	Significant *bool `json:"significant"`
}

// OrderedValues is a JSON object of strings that keeps its keys' order (the A/B variants,
// whose first is the control). Values that are not strings are kept as their JSON text.
type OrderedValues []KeyValue

// KeyValue is one member of an OrderedValues.
type KeyValue struct {
	Key   string
	Value string
}

// UnmarshalJSON reads a JSON object in order; a key given twice keeps its last value at its
// first place, as a JSON object would.
func (o *OrderedValues) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*o = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("must be a JSON object")
	}
	var out OrderedValues
	at := map[string]int{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		v := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			v = s
		}
		key := fmt.Sprint(k)
		if i, ok := at[key]; ok {
			out[i].Value = v
			continue
		}
		at[key] = len(out)
		out = append(out, KeyValue{Key: key, Value: v})
	}
	*o = out
	return nil
}

// MarshalJSON writes the object in order.
func (o OrderedValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		v, _ := json.Marshal(kv.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SpanWithSignals answers GET /spans/{span_id}: the span as GET /spans answers it, and the
// signals recorded on it (GET /signals/entity/span/{span_id}'s array, [] when none).
type SpanWithSignals struct {
	Span
	Signals []Signal `json:"signals"`
}

// TraceWithSignals answers GET /traces/{trace_id}: the trace as GET /traces answers it, and
// the signals recorded on it.
type TraceWithSignals struct {
	Trace
	Signals []Signal `json:"signals"`
}

// SessionWithSignals answers GET /sessions/{session_id}: the session as GET /sessions answers
// it, and the signals recorded on it.
type SessionWithSignals struct {
	Session
	Signals []Signal `json:"signals"`
}
