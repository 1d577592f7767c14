package signal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
)

// Limits of what is stored. Names and ids become parts of DynamoDB keys (1 KB sort keys).
const (
	// MaxSignals is how many signals one entity holds. Recording a choice on an entity adds
	// every signal it already has to the chosen variant's aggregates in the transaction that
	// records it: the record, the variant's count and one aggregate per signal must fit one
	// TransactWriteItems of 100 actions.
	MaxSignals = 98
	// MaxNameLen bounds signal and choice names, MaxKeyLen variant keys, MaxIDLen entity ids.
	MaxNameLen = 256
	MaxKeyLen  = 128
	MaxIDLen   = 128
)

// EntityTypes are the kinds of entity a signal or a choice is recorded on.
var EntityTypes = []string{"span", "trace", "session", "completion"}

// EntityRef names an entity of a project.
type EntityRef struct{ Type, ID string }

// Canonical is the ref as its record is stored: a session's id as ingestion stores the session
// (trace.SessionIDOf: a UUID as is, any other string as its uuid5, as the Python SDK derives
// it), so that the signals and choices an SDK sends under its own session id (any string) are
// those of the session shown by GET /sessions/{session_id}, whichever of the two ids names it.
// A span's or trace's id that is a UUID in another form (upper case, no hyphens) is its
// lowercase hyphenated form, as ingestion stores it (trace.CanonicalID). Other refs are kept
// as sent.
func (r EntityRef) Canonical() EntityRef {
	switch {
	case r.Type == "session" && r.ID != "":
		r.ID = trace.SessionIDOf(r.ID)
	case r.Type == "span" || r.Type == "trace":
		r.ID = trace.CanonicalID(r.ID)
	}
	return r
}

// Signal is one stored signal. Value is decimal text: 1 or 0 for a boolean.
type Signal struct {
	Name      string
	Type      string
	Value     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Choice is the variant of one A/B test recorded on an entity.
type Choice struct {
	Test    string
	Variant string
	ID      string
	At      time.Time
	// Carried marks a choice a span carries in its ab_choices (Carry), not recorded through
	// POST /ab-choices or a prompt split: it joins the span's signals to the variant but is
	// not one of the variant's choices (the choice was counted where it was recorded). A
	// choice recorded later on the same span counts it then, in the carried variant.
	Carried bool
}

// Entity is the record of one entity: its signals and choices by name, and the version its
// writes are conditioned on (0: not stored yet).
type Entity struct {
	Ref     EntityRef
	Signals map[string]Signal
	Choices map[string]Choice
	Version int64
}

// Delta is what one change adds to one aggregate of a test: to the variant's count of
// choices when Signal is empty, else to the count, sum and sum of squares of the signal's
// values in the variant.
type Delta struct {
	Test, Variant string
	Signal        string
	SignalType    string
	N             int64
	Sum, SumSq    string
}

// Change is one signal set or one choice recorded on an entity, with the deltas it makes.
// A change's deltas are at most MaxSignals+1.
type Change struct {
	Signal *Signal
	Choice *Choice
	Deltas []Delta
}

// Store keeps entity records, tests and their aggregates.
type Store interface {
	// Entities reads the records of refs; a ref with no record maps to an empty Entity.
	Entities(ctx context.Context, projectID string, refs []EntityRef) (map[EntityRef]Entity, error)
	// Save applies changes to e, a record as read, and adds their deltas to the aggregates,
	// atomically per transaction: a change and its deltas are never split. It returns
	// ErrStale when the record is no longer at e.Version (another write got there first);
	// changes saved before that stay saved.
	Save(ctx context.Context, projectID string, e Entity, changes []Change) error
	// CreateTest stores t unless a test of its name exists, and returns the stored test.
	CreateTest(ctx context.Context, projectID string, t Test) (Test, error)
	// Tests lists the project's tests by name.
	Tests(ctx context.Context, projectID string) ([]Test, error)
	// TestsNamed reads the tests of names that exist, by name.
	TestsNamed(ctx context.Context, projectID string, names []string) (map[string]Test, error)
	// Aggregates reads a test and its aggregates (errs.NotFound for an unknown test).
	Aggregates(ctx context.Context, projectID, name string) (Test, []Aggregate, error)
}

// ErrStale is Store.Save's answer when the record moved since it was read.
var ErrStale = errors.New("entity record changed since it was read")

// Input is one signal as a client sent it.
type Input struct {
	Ref   EntityRef
	Name  string
	Value json.RawMessage
	Type  string
	// derived marks the signals Plume records itself (DerivedPrefix), which clients may not
	// send.
	derived bool
}

// parse checks an input and reads its value as the SDK meant it: a JSON boolean is a boolean
// whatever its signal_type says (the Python SDK sends True as "numerical"), a string "true" or
// "false" too (the TypeScript SDK sends span signals as strings), a number or numeric string
// is numerical unless signal_type says boolean and it is 0 or 1.
func (in Input) parse() (Signal, error) {
	if err := CheckRef(in.Ref); err != nil {
		return Signal{}, err
	}
	if err := checkName("signal name", in.Name, MaxNameLen); err != nil {
		return Signal{}, err
	}
	if strings.HasPrefix(in.Name, DerivedPrefix) && !in.derived {
		return Signal{}, fmt.Errorf("signal names starting with %q are Plume's own (judges' verdicts, feedback)", DerivedPrefix)
	}
	if in.Type != "" && in.Type != api.SignalBoolean && in.Type != api.SignalNumerical {
		return Signal{}, fmt.Errorf(`signal_type must be "boolean" or "numerical", not %q`, in.Type)
	}
	var raw any
	if err := json.Unmarshal(in.Value, &raw); err != nil || raw == nil {
		return Signal{}, errors.New("value must be a number or a boolean")
	}
	s := Signal{Name: in.Name}
	switch v := raw.(type) {
	case bool:
		s.Type, s.Value = api.SignalBoolean, boolText(v)
		return s, nil
	case float64:
		return s.number(v, in.Type)
	case string:
		t := strings.TrimSpace(v)
		if b, err := strconv.ParseBool(strings.ToLower(t)); err == nil && (strings.EqualFold(t, "true") || strings.EqualFold(t, "false")) {
			s.Type, s.Value = api.SignalBoolean, boolText(b)
			return s, nil
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return s.number(f, in.Type)
		}
	}
	return Signal{}, errors.New("value must be a number or a boolean")
}

// number sets a numerical value, or a boolean one when the type says so and v is 0 or 1.
func (s Signal) number(v float64, typ string) (Signal, error) {
	if !finite(v) {
		return Signal{}, fmt.Errorf("value must be a finite number of at most %g in magnitude", maxMagnitude)
	}
	if typ == api.SignalBoolean && (v == 0 || v == 1) {
		s.Type, s.Value = api.SignalBoolean, boolText(v == 1)
		return s, nil
	}
	s.Type, s.Value = api.SignalNumerical, decimalText(v)
	return s, nil
}

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Wire is the signal as GET /signals/entity answers it.
func (s Signal) Wire() api.Signal {
	var v any = float(s.Value)
	if s.Type == api.SignalBoolean {
		v = s.Value == "1"
	}
	return api.Signal{Name: s.Name, Value: v, SignalType: s.Type, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

// Wire is the entity's signals in the API's form, by name (never nil, so that none encodes as
// []).
func (e Entity) Wire() []api.Signal {
	out := make([]api.Signal, 0, len(e.Signals))
	for _, sig := range e.Signals {
		out = append(out, sig.Wire())
	}
	slices.SortFunc(out, func(a, b api.Signal) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// CheckRef checks an entity reference.
func CheckRef(r EntityRef) error {
	ok := false
	for _, t := range EntityTypes {
		ok = ok || r.Type == t
	}
	if !ok {
		return fmt.Errorf(`entity_type must be "span", "trace", "session" or "completion", not %q`, clip(r.Type))
	}
	return checkName("entity_id", r.ID, MaxIDLen)
}

// checkName checks a name or id: 1 to max bytes of UTF-8 without control characters.
func checkName(what, s string, max int) error {
	if s == "" || len(s) > max || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%s must have 1 to %d bytes of UTF-8 without control characters", what, max)
	}
	return nil
}

// clip shortens a refused value for an error message.
func clip(s string) string { return textcut.Quote(s, 40) }
