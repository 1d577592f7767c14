package view

import (
	"fmt"
	"reflect"
)

// evalFunc calls the function name with args and, when the command is not a pipeline's
// first, final (the previous command's value) as its last argument.
func (s *state) evalFunc(dot reflect.Value, name string, args []Arg, final reflect.Value) (reflect.Value, error) {
	f, ok := s.funcs[name]
	var fn reflect.Value
	switch {
	case ok:
		fn = reflect.ValueOf(f)
	case builtins[name] != nil:
		fn = reflect.ValueOf(builtins[name])
	case escapers[name] != nil:
		fn = reflect.ValueOf(escapers[name])
	default:
		return reflect.Value{}, fmt.Errorf("%q is not a defined function", name)
	}
	typ := fn.Type()
	numIn := len(args)
	if final != missing {
		numIn++
	}
	numFixed := len(args)
	if typ.IsVariadic() {
		numFixed = typ.NumIn() - 1
		if numIn < numFixed {
			return reflect.Value{}, fmt.Errorf("wrong number of args for %s: want at least %d got %d", name, numFixed, numIn)
		}
	} else if numIn != typ.NumIn() {
		return reflect.Value{}, fmt.Errorf("wrong number of args for %s: want %d got %d", name, typ.NumIn(), numIn)
	}
	if !ok && (name == "and" || name == "or") {
		return s.andOr(dot, name == "or", typ.In(0), args, final)
	}
	argv := make([]reflect.Value, numIn)
	i := 0
	for ; i < numFixed && i < len(args); i++ {
		v, err := s.evalArg(dot, typ.In(i), args[i])
		if err != nil {
			return reflect.Value{}, err
		}
		argv[i] = v
	}
	if typ.IsVariadic() {
		elem := typ.In(typ.NumIn() - 1).Elem()
		for ; i < len(args); i++ {
			v, err := s.evalArg(dot, elem, args[i])
			if err != nil {
				return reflect.Value{}, err
			}
			argv[i] = v
		}
	}
	if final != missing {
		t := typ.In(typ.NumIn() - 1)
		if typ.IsVariadic() {
			if numIn-1 < numFixed {
				t = typ.In(numIn - 1)
			} else {
				t = t.Elem()
			}
		}
		v, err := validateType(final, t)
		if err != nil {
			return reflect.Value{}, err
		}
		argv[i] = v
	}
	v, err := safeCall(fn, argv)
	if err != nil {
		return reflect.Value{}, fmt.Errorf("error calling %s: %w", name, err)
	}
	if v.Type() == valueType {
		v = v.Interface().(reflect.Value)
	}
	return v, nil
}

// andOr evaluates and/or's arguments in order up to the first that decides the result (false
// for and, true for or) and is that argument's value, or the last one's.
func (s *state) andOr(dot reflect.Value, or bool, argType reflect.Type, args []Arg, final reflect.Value) (reflect.Value, error) {
	var v reflect.Value
	for _, a := range args {
		w, err := s.evalArg(dot, argType, a)
		if err != nil {
			return reflect.Value{}, err
		}
		v = w.Interface().(reflect.Value)
		if truth(v) == or {
			return v, nil
		}
	}
	if final != missing {
		w, err := validateType(final, argType)
		if err != nil {
			return reflect.Value{}, err
		}
		v = w
		if v.Type() == valueType {
			v = v.Interface().(reflect.Value)
		}
	}
	return v, nil
}

// safeCall calls fn, a panic of fn becoming an error as text/template makes it, and a
// function's error result the call's error.
func safeCall(fn reflect.Value, args []reflect.Value) (v reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	out := fn.Call(args)
	if len(out) == 2 && !out[1].IsNil() {
		return out[0], out[1].Interface().(error)
	}
	return out[0], nil
}

// evalArg evaluates an argument for a parameter of type typ.
func (s *state) evalArg(dot reflect.Value, typ reflect.Type, a Arg) (reflect.Value, error) {
	var v reflect.Value
	var err error
	switch a := a.(type) {
	case Dot:
		return validateType(dot, typ)
	case Nil:
		if canBeNil(typ) {
			return reflect.Zero(typ), nil
		}
		return reflect.Value{}, fmt.Errorf("cannot assign nil to %s", typ)
	case Field:
		v, err = s.evalFields(dot, a, false)
	case Var:
		v, err = s.evalCmd(dot, Cmd{a}, missing)
	case Sub:
		v, err = s.evalPipe(dot, &a.Pipe)
	case Func:
		v, err = s.evalFunc(dot, string(a), nil, missing)
	default:
		return s.evalConstArg(dot, typ, a)
	}
	if err != nil {
		return reflect.Value{}, err
	}
	return validateType(v, typ)
}

// evalConstArg is a constant argument for a parameter of type typ.
func (s *state) evalConstArg(dot reflect.Value, typ reflect.Type, a Arg) (reflect.Value, error) {
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.Bool:
		if b, ok := a.(Bool); ok {
			v.SetBool(bool(b))
			return v, nil
		}
	case reflect.String:
		if str, ok := a.(String); ok {
			v.SetString(string(str))
			return v, nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := a.(Number); ok && n.IsInt {
			v.SetInt(n.Int)
			return v, nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n, ok := a.(Number); ok && n.IsUint {
			v.SetUint(n.Uint)
			return v, nil
		}
	case reflect.Float32, reflect.Float64:
		if n, ok := a.(Number); ok && n.IsFloat {
			v.SetFloat(n.Float)
			return v, nil
		}
	case reflect.Interface:
		if typ.NumMethod() == 0 {
			return s.evalCmd(dot, Cmd{a}, missing)
		}
	case reflect.Struct:
		if typ == valueType {
			c, err := s.evalCmd(dot, Cmd{a}, missing)
			return reflect.ValueOf(c), err
		}
	}
	return reflect.Value{}, fmt.Errorf("can't handle %v for arg of type %s", a, typ)
}

// validateType is v as a value of type typ: itself, the value inside an interface, the value
// a pointer points to or a pointer to an addressable value, whichever fits; a nil for an
// invalid v.
func validateType(v reflect.Value, typ reflect.Type) (reflect.Value, error) {
	if !v.IsValid() {
		if typ == nil {
			return reflect.ValueOf(nil), nil
		}
		if canBeNil(typ) {
			return reflect.Zero(typ), nil
		}
		return reflect.Value{}, fmt.Errorf("invalid value; expected %s", typ)
	}
	if typ == valueType && v.Type() != typ {
		return reflect.ValueOf(v), nil
	}
	if typ == nil || v.Type().AssignableTo(typ) {
		return v, nil
	}
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
		if v.Type().AssignableTo(typ) {
			return v, nil
		}
	}
	switch {
	case v.Kind() == reflect.Pointer && v.Type().Elem().AssignableTo(typ):
		if v.IsNil() {
			return reflect.Value{}, fmt.Errorf("dereference of nil pointer of type %s", typ)
		}
		return v.Elem(), nil
	case reflect.PointerTo(v.Type()).AssignableTo(typ) && v.CanAddr():
		return v.Addr(), nil
	}
	return reflect.Value{}, fmt.Errorf("wrong type for value; expected %s; got %s", typ, v.Type())
}

func canBeNil(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return true
	case reflect.Struct:
		return typ == valueType
	}
	return false
}
