package trace

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/jsonscan"
)

// Limits of a span's ab_choices. A span carrying more, or an element breaking a rule, is
// rejected alone, like every other span limit (WIRE.md): the choices are what joins the span's
// outcomes to a variant, so none is dropped silently.
const (
	// MaxABChoices is how many A/B choices one span carries.
	MaxABChoices = api.MaxSpanABChoices
	// MaxChoiceNameLen bounds choice_name and variant_key (signal.MaxKeyLen: they name a
	// test and its variant), MaxVariantValueLen variant_value.
	MaxChoiceNameLen   = 128
	MaxVariantValueLen = 4096
)

// ABChoice is one element of a span's ab_choices: the variant of an A/B test the code that
// ran in the span was given (ze.choose, COMPAT.md), or the version a split prompt tag served.
type ABChoice struct {
	// ID is the choice's ab_choice_id ("" when the SDK sent none).
	ID      string `json:"ab_choice_id,omitempty"`
	Name    string `json:"choice_name"`
	Variant string `json:"variant_key"`
	Value   string `json:"variant_value,omitempty"`
}

// abChoicesField reads ab_choices: absent or null is none; else an array of at most
// MaxABChoices objects, each {ab_choice_id, choice_name, variant_key, variant_value}
// (choice_name and variant_key required). Of two elements naming one choice_name the first is
// kept: a span is in a test's first variant, as an entity is (signal.Choose).
func (t *spanText) abChoicesField(raw []byte) ([]ABChoice, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	if raw[0] != '[' {
		return nil, fmt.Errorf("ab_choices: must be an array, got %s", jsonKind(raw))
	}
	r := jsonscan.NewReader(raw)
	if err := r.Enter(); err != nil {
		return nil, err
	}
	var out []ABChoice
	for i, first := 0, true; ; i, first = i+1, false {
		more, err := r.Next(']', first)
		if err != nil || !more {
			return out, err
		}
		start := r.Pos()
		if err := r.SkipValue(); err != nil {
			return nil, err
		}
		if i == MaxABChoices {
			return nil, fmt.Errorf("ab_choices: more than %d choices", MaxABChoices)
		}
		c, err := t.abChoice(fmt.Sprintf("ab_choices[%d]", i), raw[start:r.Pos()])
		if err != nil {
			return nil, err
		}
		if !hasChoice(out, c.Name) {
			out = append(out, c)
		}
	}
}

// abChoice reads one element of ab_choices, named name in errors.
func (t *spanText) abChoice(name string, raw []byte) (ABChoice, error) {
	if !isObject(raw) {
		return ABChoice{}, fmt.Errorf("%s: must be an object, got %s", name, jsonKind(raw))
	}
	var id, choice, variant, value []byte
	for it := jsonscan.Members(raw); it.Next(); {
		switch string(it.Key) {
		case "ab_choice_id":
			id = it.Value
		case "choice_name":
			choice = it.Value
		case "variant_key":
			variant = it.Value
		case "variant_value":
			value = it.Value
		}
	}
	var c ABChoice
	var err error
	if c.ID, err = t.uuidField(name+".ab_choice_id", id); err != nil {
		return ABChoice{}, err
	}
	if c.Name, err = t.choiceName(name+".choice_name", choice); err != nil {
		return ABChoice{}, err
	}
	if c.Variant, err = t.choiceName(name+".variant_key", variant); err != nil {
		return ABChoice{}, err
	}
	if !isAbsent(value) && value[0] != '"' {
		// The Python SDK str()s the value; any other JSON value is kept as its text.
		c.Value = string(jsonscan.AppendCompact(nil, value))
	} else if c.Value, err = t.stringField(name+".variant_value", value, -1); err != nil {
		return ABChoice{}, err
	}
	if len(c.Value) > MaxVariantValueLen || !utf8.ValidString(c.Value) {
		return ABChoice{}, fmt.Errorf("%s.variant_value: longer than %d bytes", name, MaxVariantValueLen)
	}
	return c, nil
}

// choiceName reads a required choice_name or variant_key: 1 to MaxChoiceNameLen bytes of
// UTF-8 without control characters (the rule of the names POST /ab-choices takes).
func (t *spanText) choiceName(name string, raw []byte) (string, error) {
	s, err := t.stringField(name, raw, MaxChoiceNameLen)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", fmt.Errorf("%s: required", name)
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("%s: must be UTF-8 without control characters", name)
	}
	return s, nil
}

// hasChoice reports whether cs holds a choice of the test named name.
func hasChoice(cs []ABChoice, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// mergeChoices is the union of a span's stored choices and a later write's: a later write adds
// the tests the span did not carry and keeps the variant of those it did (the first variant
// counts, signal.Choose), up to MaxABChoices (the earliest are kept).
func mergeChoices(stored, later []ABChoice) []ABChoice {
	out := stored
	for _, c := range later {
		if len(out) == MaxABChoices {
			break
		}
		if !hasChoice(out, c.Name) {
			out = append(out[:len(out):len(out)], c)
		}
	}
	return out
}

// checkChoices checks ab_choices as DecodeBatch makes them (Span.Check).
func checkChoices(cs []ABChoice) error {
	if len(cs) > MaxABChoices {
		return fmt.Errorf("ab_choices: more than %d", MaxABChoices)
	}
	for i, c := range cs {
		for _, s := range []string{c.Name, c.Variant} {
			if s == "" || len(s) > MaxChoiceNameLen || !utf8.ValidString(s) {
				return fmt.Errorf("ab_choices[%d]: name or variant %q", i, truncate([]byte(s)))
			}
		}
		if hasChoice(cs[:i], c.Name) {
			return fmt.Errorf("ab_choices[%d]: %q twice", i, truncate([]byte(c.Name)))
		}
		if c.ID != "" && !isCanonicalUUID(c.ID) {
			return fmt.Errorf("ab_choices[%d]: ab_choice_id %q", i, truncate([]byte(c.ID)))
		}
		if len(c.Value) > MaxVariantValueLen || !utf8.ValidString(c.Value) {
			return fmt.Errorf("ab_choices[%d]: variant_value", i)
		}
	}
	return nil
}
