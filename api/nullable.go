package api

import "encoding/json"

// Nullable is a request field with three states, as PATCH bodies need them: absent (the zero
// Nullable: keep the current value), null (Set with a nil Value: clear it), or a value. With
// the omitzero option an absent field is left out when encoding.
type Nullable[T any] struct {
	Set   bool
	Value *T
}

// Null is a Nullable holding an explicit null.
func Null[T any]() Nullable[T] { return Nullable[T]{Set: true} }

// Some is a Nullable holding v.
func Some[T any](v T) Nullable[T] { return Nullable[T]{Set: true, Value: &v} }

// IsZero reports whether n is absent.
func (n Nullable[T]) IsZero() bool { return !n.Set }

// MarshalJSON implements json.Marshaler: null or the value.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.Value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*n.Value)
}

// UnmarshalJSON implements json.Unmarshaler: n is Set, with a nil Value for null.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	*n = Nullable[T]{Set: true}
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	n.Value = &v
	return nil
}
