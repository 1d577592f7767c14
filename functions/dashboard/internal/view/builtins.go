package view

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// builtins are the predefined functions of text/template the pages use, with its semantics.
// and and or are evaluated lazily by evalFunc; their functions here give their signature.
var builtins = map[string]any{
	"and": func(arg0 reflect.Value, args ...reflect.Value) reflect.Value { panic("evaluated by andOr") },
	"or":  func(arg0 reflect.Value, args ...reflect.Value) reflect.Value { panic("evaluated by andOr") },
	"not": func(arg reflect.Value) bool { return !truth(arg) },
	"eq":  eq,
	"ne":  func(a, b reflect.Value) (bool, error) { e, err := eq(a, b); return !e, err },
	"lt":  lt,
	"le": func(a, b reflect.Value) (bool, error) {
		l, err := lt(a, b)
		return l || err == nil && mustEq(a, b), err
	},
	"gt": func(a, b reflect.Value) (bool, error) {
		l, err := lt(a, b)
		return !l && err == nil && !mustEq(a, b), err
	},
	"ge":     func(a, b reflect.Value) (bool, error) { l, err := lt(a, b); return !l, err },
	"len":    length,
	"index":  index,
	"printf": fmt.Sprintf,
}

// Builtin reports whether name is a predefined function this package implements.
func Builtin(name string) bool { return builtins[name] != nil }

func truth(v reflect.Value) bool {
	t, _ := isTrue(indirectInterface(v))
	return t
}

// kind is the class of a basic value two values are compared in.
type kind int

const (
	invalidKind kind = iota
	boolKind
	complexKind
	intKind
	floatKind
	stringKind
	uintKind
)

func basicKind(v reflect.Value) kind {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind
	case reflect.Float32, reflect.Float64:
		return floatKind
	case reflect.Complex64, reflect.Complex128:
		return complexKind
	case reflect.String:
		return stringKind
	}
	return invalidKind
}

var (
	errBadComparison = errors.New("incompatible types for comparison")
	errNoComparison  = errors.New("missing argument for comparison")
)

// eq reports whether a equals any of bs: basic values by value (signed and unsigned integers
// compared as numbers), other comparable values with ==, nil with nil.
func eq(a reflect.Value, bs ...reflect.Value) (bool, error) {
	a = indirectInterface(a)
	if len(bs) == 0 {
		return false, errNoComparison
	}
	ka := basicKind(a)
	for _, b := range bs {
		b = indirectInterface(b)
		kb := basicKind(b)
		var same bool
		switch {
		case ka == intKind && kb == uintKind:
			same = a.Int() >= 0 && uint64(a.Int()) == b.Uint()
		case ka == uintKind && kb == intKind:
			same = b.Int() >= 0 && a.Uint() == uint64(b.Int())
		case ka != kb:
			if a.IsValid() && b.IsValid() {
				return false, errBadComparison
			}
		case ka == boolKind:
			same = a.Bool() == b.Bool()
		case ka == complexKind:
			same = a.Complex() == b.Complex()
		case ka == floatKind:
			same = a.Float() == b.Float()
		case ka == intKind:
			same = a.Int() == b.Int()
		case ka == stringKind:
			same = a.String() == b.String()
		case ka == uintKind:
			same = a.Uint() == b.Uint()
		default:
			var err error
			if same, err = eqOther(a, b); err != nil {
				return false, err
			}
		}
		if same {
			return true, nil
		}
	}
	return false, nil
}

// eqOther compares two values that are not basic: both nil, or equal by ==.
func eqOther(a, b reflect.Value) (bool, error) {
	if a.IsValid() && b.IsValid() && a.Kind() != b.Kind() {
		return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", a, a.Type(), b.Type(), b)
	}
	if isNil(a) || isNil(b) {
		return isNil(a) == isNil(b), nil
	}
	if !b.Type().Comparable() {
		return false, fmt.Errorf("non-comparable type %s: %v", b, b.Type())
	}
	return a.Interface() == b.Interface(), nil
}

func isNil(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// mustEq is eq(a, b) for two values lt has already compared without error.
func mustEq(a, b reflect.Value) bool {
	e, _ := eq(a, b)
	return e
}

// lt reports whether a < b, for basic values that are ordered.
func lt(a, b reflect.Value) (bool, error) {
	a, b = indirectInterface(a), indirectInterface(b)
	ka, kb := basicKind(a), basicKind(b)
	if ka == invalidKind || kb == invalidKind {
		return false, errors.New("invalid type for comparison")
	}
	switch {
	case ka == intKind && kb == uintKind:
		return a.Int() < 0 || uint64(a.Int()) < b.Uint(), nil
	case ka == uintKind && kb == intKind:
		return b.Int() >= 0 && a.Uint() < uint64(b.Int()), nil
	case ka != kb:
		return false, errBadComparison
	case ka == boolKind, ka == complexKind:
		return false, errors.New("invalid type for comparison")
	case ka == floatKind:
		return a.Float() < b.Float(), nil
	case ka == intKind:
		return a.Int() < b.Int(), nil
	case ka == stringKind:
		return a.String() < b.String(), nil
	}
	return a.Uint() < b.Uint(), nil
}

// length is len of an array, a channel, a map, a slice or a string.
func length(v reflect.Value) (int, error) {
	v, isNil := indirect(v)
	if isNil {
		return 0, errors.New("len of nil pointer")
	}
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return v.Len(), nil
	}
	return 0, fmt.Errorf("len of type %s", v.Type())
}

// index is item[i][j]...: an element of an array, a slice or a string by an integer in range,
// or a map's entry (its zero value when there is none).
func index(item reflect.Value, indexes ...reflect.Value) (reflect.Value, error) {
	item = indirectInterface(item)
	if !item.IsValid() {
		return reflect.Value{}, errors.New("index of untyped nil")
	}
	for _, ix := range indexes {
		ix = indirectInterface(ix)
		var isNil bool
		if item, isNil = indirect(item); isNil {
			return reflect.Value{}, errors.New("index of nil pointer")
		}
		switch item.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			i, err := intIndex(ix, item.Len())
			if err != nil {
				return reflect.Value{}, err
			}
			item = item.Index(i)
		case reflect.Map:
			key, err := validateType(ix, item.Type().Key())
			if err != nil {
				return reflect.Value{}, err
			}
			if v := item.MapIndex(key); v.IsValid() {
				item = v
			} else {
				item = reflect.Zero(item.Type().Elem())
			}
		case reflect.Invalid:
			return reflect.Value{}, errors.New("index of untyped nil")
		default:
			return reflect.Value{}, fmt.Errorf("can't index item of type %s", item.Type())
		}
	}
	return item, nil
}

func intIndex(ix reflect.Value, n int) (int, error) {
	var i int64
	switch basicKind(ix) {
	case intKind:
		i = ix.Int()
	case uintKind:
		i = int64(ix.Uint())
	default:
		if !ix.IsValid() {
			return 0, errors.New("cannot index slice/array with nil")
		}
		return 0, fmt.Errorf("cannot index slice/array with type %s", ix.Type())
	}
	if i < 0 || int(i) >= n {
		return 0, fmt.Errorf("index out of range: %d", i)
	}
	return int(i), nil
}

// sortedKeys are a map's keys in the order text/template ranges over them (fmt's sorted map
// order), for the key types a page ranges over: numbers, strings and booleans.
func sortedKeys(m reflect.Value) ([]reflect.Value, error) {
	keys := m.MapKeys()
	if len(keys) == 0 {
		return nil, nil
	}
	var compare func(a, b reflect.Value) int
	switch basicKind(keys[0]) {
	case intKind:
		compare = func(a, b reflect.Value) int { return cmp.Compare(a.Int(), b.Int()) }
	case uintKind:
		compare = func(a, b reflect.Value) int { return cmp.Compare(a.Uint(), b.Uint()) }
	case floatKind:
		compare = func(a, b reflect.Value) int { return cmp.Compare(a.Float(), b.Float()) }
	case stringKind:
		compare = func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) }
	case boolKind:
		compare = func(a, b reflect.Value) int {
			switch {
			case a.Bool() == b.Bool():
				return 0
			case !a.Bool():
				return -1
			}
			return 1
		}
	default:
		return nil, fmt.Errorf("range over a map with keys of type %s", keys[0].Type())
	}
	slices.SortFunc(keys, compare)
	return keys, nil
}
