package view

// Node is one node of a compiled template: Text, *Action, *If, *With, *Range or *Call.
type Node interface{ node() }

// List is a sequence of nodes, executed in order.
type List []Node

// Text is written as it is (html/template has already removed the template's HTML comments).
type Text string

// Action is {{pipeline}}: the pipeline's value is written, unless the pipeline declares or
// assigns variables.
type Action struct{ Pipe Pipe }

// If is {{if pipeline}} List {{else}} Else {{end}}; an {{else if}} is an If alone in Else.
type If struct {
	Pipe       Pipe
	List, Else List
}

// With is {{with pipeline}} List {{else}} Else {{end}}: List runs with dot set to the
// pipeline's value when that value is true.
type With struct {
	Pipe       Pipe
	List, Else List
}

// Range is {{range pipeline}} List {{else}} Else {{end}} over a slice, an array, a map (in
// sorted key order) or an integer.
type Range struct {
	Pipe       Pipe
	List, Else List
}

// Call is {{template "Name" pipeline}}; Pipe is nil when the call passes no data.
type Call struct {
	Name string
	Pipe *Pipe
}

// Pipe is a pipeline: commands each passing its value as the next one's last argument, and
// the variables it declares (or assigns, when IsAssign).
type Pipe struct {
	Decl     []string
	IsAssign bool
	Cmds     []Cmd
}

// Cmd is one command of a pipeline: a function and its arguments, or one operand.
type Cmd []Arg

// Arg is an operand: Dot, Nil, Field, Var, Func, String, Bool, Number or Sub.
type Arg interface{ arg() }

// Dot is the cursor, ".".
type Dot struct{}

// Nil is the untyped nil.
type Nil struct{}

// Field is a chain of fields of dot: .A.B is Field{"A", "B"}.
type Field []string

// Var is a variable and a chain of its fields: $x.A is Var{Name: "$x", Fields: []string{"A"}}.
type Var struct {
	Name   string
	Fields []string
}

// Func is a function by name: one of the funcs given to Execute, a builtin or an escaper.
type Func string

// String is a string constant.
type String string

// Bool is a boolean constant.
type Bool bool

// Number is a numeric constant as text/template/parse reads it: Text and each form it fits.
type Number struct {
	Text                   string
	IsInt, IsUint, IsFloat bool
	Int                    int64
	Uint                   uint64
	Float                  float64
}

// Sub is a parenthesised pipeline used as an operand.
type Sub struct{ Pipe Pipe }

func (Text) node()    {}
func (*Action) node() {}
func (*If) node()     {}
func (*With) node()   {}
func (*Range) node()  {}
func (*Call) node()   {}

func (Dot) arg()    {}
func (Nil) arg()    {}
func (Field) arg()  {}
func (Var) arg()    {}
func (Func) arg()   {}
func (String) arg() {}
func (Bool) arg()   {}
func (Number) arg() {}
func (Sub) arg()    {}
