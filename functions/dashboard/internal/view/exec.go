package view

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Funcs are the functions a page may call, by name, as html/template's FuncMap holds them:
// each a func with one result, or two with an error second.
type Funcs map[string]any

// Set is the templates of one page by name, as the generator wrote them.
type Set map[string]List

// maxDepth bounds nested template calls, as text/template does.
const maxDepth = 100000

// Execute writes the template named name of s with data as dot to w, calling funcs. A failed
// execution returns an error and leaves in w what was written before it.
func (s Set) Execute(w *bytes.Buffer, name string, data any, funcs Funcs) error {
	list, ok := s[name]
	if !ok {
		return fmt.Errorf("view: no template %q", name)
	}
	dot := reflect.ValueOf(data)
	st := &state{set: s, funcs: funcs, w: w, vars: []variable{{"$", dot}}}
	if err := st.walk(dot, list); err != nil {
		return fmt.Errorf("view: template %s: %w", name, err)
	}
	return nil
}

type variable struct {
	name  string
	value reflect.Value
}

// state is one execution: the page's templates, the writer, the variables in scope.
type state struct {
	set   Set
	funcs Funcs
	w     *bytes.Buffer
	vars  []variable
	depth int
}

// missing stands for "no value passed from the previous command" (the first command of a
// pipeline), which differs from a nil value passed.
var missing = reflect.ValueOf(missingValue{})

type missingValue struct{}

var valueType = reflect.TypeFor[reflect.Value]()

func (s *state) walk(dot reflect.Value, list List) error {
	for _, n := range list {
		var err error
		switch n := n.(type) {
		case Text:
			s.w.WriteString(string(n))
		case *Action:
			var v reflect.Value
			if v, err = s.evalPipe(dot, &n.Pipe); err == nil && len(n.Pipe.Decl) == 0 {
				err = s.print(v)
			}
		case *If:
			err = s.walkIfOrWith(dot, &n.Pipe, n.List, n.Else, false)
		case *With:
			err = s.walkIfOrWith(dot, &n.Pipe, n.List, n.Else, true)
		case *Range:
			err = s.walkRange(dot, n)
		case *Call:
			err = s.walkCall(dot, n)
		default:
			err = fmt.Errorf("unknown node %T", n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mark and pop scope the variables a control structure declares.
func (s *state) mark() int    { return len(s.vars) }
func (s *state) pop(mark int) { s.vars = s.vars[:mark] }

func (s *state) walkIfOrWith(dot reflect.Value, pipe *Pipe, list, elseList List, with bool) error {
	defer s.pop(s.mark())
	v, err := s.evalPipe(dot, pipe)
	if err != nil {
		return err
	}
	truth, ok := isTrue(indirectInterface(v))
	if !ok {
		return fmt.Errorf("if/with can't use %v", v)
	}
	switch {
	case truth && with:
		return s.walk(v, list)
	case truth:
		return s.walk(dot, list)
	case elseList != nil:
		return s.walk(dot, elseList)
	}
	return nil
}

// walkRange runs r's list once per element, with dot the element and r's variables the
// index (or key) and the element; a map's keys in sorted order.
func (s *state) walkRange(dot reflect.Value, r *Range) error {
	defer s.pop(s.mark())
	v, err := s.evalPipe(dot, &r.Pipe)
	if err != nil {
		return err
	}
	v, _ = indirect(v)
	mark := s.mark()
	one := func(index, elem reflect.Value) error {
		defer s.pop(mark)
		if err := s.setRangeVars(r.Pipe, index, elem); err != nil {
			return err
		}
		return s.walk(elem, r.List)
	}
	ran := false
	switch v.Kind() {
	case reflect.Array, reflect.Slice:
		for i := range v.Len() {
			if err := one(reflect.ValueOf(i), v.Index(i)); err != nil {
				return err
			}
			ran = true
		}
	case reflect.Map:
		keys, err := sortedKeys(v)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := one(k, v.MapIndex(k)); err != nil {
				return err
			}
			ran = true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if len(r.Pipe.Decl) > 1 {
			return fmt.Errorf("can't use %v to iterate over more than one variable", v)
		}
		for e := range v.Seq() {
			if err := one(e, e); err != nil {
				return err
			}
			ran = true
		}
	case reflect.Invalid: // a nil value ranges over nothing
	default:
		return fmt.Errorf("range can't iterate over %v", v)
	}
	if !ran && r.Else != nil {
		return s.walk(dot, r.Else)
	}
	return nil
}

// setRangeVars sets a range's variables for one element: with one variable it is the
// element; with two, the index (or key) and the element.
func (s *state) setRangeVars(pipe Pipe, index, elem reflect.Value) error {
	switch {
	case len(pipe.Decl) == 1 && pipe.IsAssign:
		return s.setVar(pipe.Decl[0], elem)
	case len(pipe.Decl) == 1:
		s.vars[len(s.vars)-1].value = elem
	case len(pipe.Decl) == 2 && pipe.IsAssign:
		if err := s.setVar(pipe.Decl[0], index); err != nil {
			return err
		}
		return s.setVar(pipe.Decl[1], elem)
	case len(pipe.Decl) == 2:
		s.vars[len(s.vars)-1].value = elem
		s.vars[len(s.vars)-2].value = index
	}
	return nil
}

// walkCall runs {{template}}: the called template sees only its dot, as $ too.
func (s *state) walkCall(dot reflect.Value, c *Call) error {
	list, ok := s.set[c.Name]
	if !ok {
		return fmt.Errorf("template %q not defined", c.Name)
	}
	if s.depth == maxDepth {
		return fmt.Errorf("exceeded maximum template depth (%v)", maxDepth)
	}
	var newDot reflect.Value
	if c.Pipe != nil {
		var err error
		if newDot, err = s.evalPipe(dot, c.Pipe); err != nil {
			return err
		}
	}
	called := &state{set: s.set, funcs: s.funcs, w: s.w, vars: []variable{{"$", newDot}}, depth: s.depth + 1}
	return called.walk(newDot, list)
}

func (s *state) setVar(name string, v reflect.Value) error {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return nil
		}
	}
	return fmt.Errorf("undefined variable: %s", name)
}

func (s *state) varValue(name string) (reflect.Value, error) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value, nil
		}
	}
	return reflect.Value{}, fmt.Errorf("undefined variable: %s", name)
}

// evalPipe runs a pipeline and declares or assigns its variables.
func (s *state) evalPipe(dot reflect.Value, pipe *Pipe) (reflect.Value, error) {
	v := missing
	for _, cmd := range pipe.Cmds {
		var err error
		if v, err = s.evalCmd(dot, cmd, v); err != nil {
			return reflect.Value{}, err
		}
		// A value of type any is read as the value inside it.
		if v.Kind() == reflect.Interface && v.Type().NumMethod() == 0 {
			v = reflect.ValueOf(v.Interface())
		}
	}
	for _, name := range pipe.Decl {
		if pipe.IsAssign {
			if err := s.setVar(name, v); err != nil {
				return reflect.Value{}, err
			}
		} else {
			s.vars = append(s.vars, variable{name, v})
		}
	}
	return v, nil
}

var errNotAFunction = errors.New("can't give argument to non-function")

func (s *state) evalCmd(dot reflect.Value, cmd Cmd, final reflect.Value) (reflect.Value, error) {
	hasArgs := len(cmd) > 1 || final != missing
	switch first := cmd[0].(type) {
	case Field:
		return s.evalFields(dot, first, hasArgs)
	case Var:
		v, err := s.varValue(first.Name)
		if err != nil || len(first.Fields) == 0 {
			if err == nil && hasArgs {
				err = errNotAFunction
			}
			return v, err
		}
		return s.evalFields(v, first.Fields, hasArgs)
	case Func:
		return s.evalFunc(dot, string(first), cmd[1:], final)
	}
	if hasArgs {
		return reflect.Value{}, errNotAFunction
	}
	switch first := cmd[0].(type) {
	case Sub:
		return s.evalPipe(dot, &first.Pipe)
	case Dot:
		return dot, nil
	case Nil:
		return reflect.Value{}, errors.New("nil is not a command")
	case Bool:
		return reflect.ValueOf(bool(first)), nil
	case String:
		return reflect.ValueOf(string(first)), nil
	case Number:
		return idealConstant(first)
	}
	return reflect.Value{}, fmt.Errorf("can't evaluate command %T", cmd[0])
}

// idealConstant is a number standing alone: an int when it is an integer, a float64 when it
// is written as one.
func idealConstant(n Number) (reflect.Value, error) {
	isHexInt := len(n.Text) > 2 && n.Text[0] == '0' && (n.Text[1] == 'x' || n.Text[1] == 'X')
	isRune := len(n.Text) > 0 && n.Text[0] == '\''
	switch {
	case n.IsFloat && !isHexInt && !isRune && strings.ContainsAny(n.Text, ".eEpP"):
		return reflect.ValueOf(n.Float), nil
	case n.IsInt:
		i := int(n.Int)
		if int64(i) != n.Int {
			return reflect.Value{}, fmt.Errorf("%s overflows int", n.Text)
		}
		return reflect.ValueOf(i), nil
	case n.IsUint:
		return reflect.Value{}, fmt.Errorf("%s overflows int", n.Text)
	}
	return reflect.Value{}, fmt.Errorf("can't use number %s", n.Text)
}

// evalFields reads a chain of fields from receiver.
func (s *state) evalFields(receiver reflect.Value, names []string, hasArgs bool) (reflect.Value, error) {
	v := receiver
	for i, name := range names {
		var err error
		if v, err = field(v, name, hasArgs && i == len(names)-1); err != nil {
			return reflect.Value{}, err
		}
	}
	return v, nil
}

// field reads the field name of a struct (through pointers and interfaces) or the entry name
// of a map with string keys (an invalid value when there is none). There are no methods: a
// template calls a function instead.
func field(receiver reflect.Value, name string, hasArgs bool) (reflect.Value, error) {
	if !receiver.IsValid() {
		return reflect.Value{}, nil
	}
	typ := receiver.Type()
	receiver, isNil := indirect(receiver)
	if receiver.Kind() == reflect.Interface && isNil {
		return reflect.Value{}, fmt.Errorf("nil pointer evaluating %s.%s", typ, name)
	}
	switch receiver.Kind() {
	case reflect.Struct:
		f, ok := receiver.Type().FieldByName(name)
		if !ok {
			break
		}
		if !f.IsExported() {
			return reflect.Value{}, fmt.Errorf("%s is an unexported field of struct type %s", name, typ)
		}
		v, err := receiver.FieldByIndexErr(f.Index)
		if err != nil {
			return reflect.Value{}, err
		}
		if hasArgs {
			return reflect.Value{}, fmt.Errorf("%s has arguments but cannot be invoked as function", name)
		}
		return v, nil
	case reflect.Map:
		key := reflect.ValueOf(name)
		if !key.Type().AssignableTo(receiver.Type().Key()) {
			break
		}
		if hasArgs {
			return reflect.Value{}, fmt.Errorf("%s is not a method but has arguments", name)
		}
		return receiver.MapIndex(key), nil
	case reflect.Pointer:
		if isNil {
			return reflect.Value{}, fmt.Errorf("nil pointer evaluating %s.%s", typ, name)
		}
	}
	return reflect.Value{}, fmt.Errorf("can't evaluate field %s in type %s (view reads fields, not methods)", name, typ)
}

// indirect follows pointers and interfaces to the value inside, stopping at a nil one.
func indirect(v reflect.Value) (reflect.Value, bool) {
	for ; v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface; v = v.Elem() {
		if v.IsNil() {
			return v, true
		}
	}
	return v, false
}

// indirectInterface is the value inside an interface value, v itself otherwise.
func indirectInterface(v reflect.Value) reflect.Value {
	switch {
	case v.Kind() != reflect.Interface:
		return v
	case v.IsNil():
		return reflect.Value{}
	}
	return v.Elem()
}

// isTrue is text/template's truth: not the zero value of its type, not empty, a struct
// always; ok is false for a value that has no truth.
func isTrue(v reflect.Value) (truth, ok bool) {
	if !v.IsValid() {
		return false, true
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0, true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0, true
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !v.IsNil(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0, true
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0, true
	case reflect.Struct:
		return true, true
	}
	return false, false
}

// print writes an action's value as text/template prints it (the pages' actions end in an
// escaper, so it is a string).
func (s *state) print(v reflect.Value) error {
	if v.Kind() == reflect.String {
		s.w.WriteString(v.String())
		return nil
	}
	if v.Kind() == reflect.Pointer {
		v, _ = indirect(v)
	}
	if !v.IsValid() {
		s.w.WriteString("<no value>")
		return nil
	}
	if !v.Type().Implements(errorType) && !v.Type().Implements(stringerType) {
		pt := reflect.PointerTo(v.Type())
		switch {
		case v.CanAddr() && (pt.Implements(errorType) || pt.Implements(stringerType)):
			v = v.Addr()
		case v.Kind() == reflect.Chan || v.Kind() == reflect.Func:
			return fmt.Errorf("can't print value of type %s", v.Type())
		}
	}
	fmt.Fprint(s.w, v.Interface())
	return nil
}
