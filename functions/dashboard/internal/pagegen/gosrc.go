package pagegen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plumehq/plume/functions/dashboard/internal/view"
)

// goList is the Go expression of a compiled template's list.
func goList(l view.List) string {
	if l == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("view.List{\n")
	for _, n := range l {
		b.WriteString(goNode(n) + ",\n")
	}
	b.WriteString("}")
	return b.String()
}

func goNode(n view.Node) string {
	switch n := n.(type) {
	case view.Text:
		return "view.Text(" + strconv.Quote(string(n)) + ")"
	case *view.Action:
		return "&view.Action{Pipe: " + goPipe(n.Pipe) + "}"
	case *view.If:
		return goBranch("If", n.Pipe, n.List, n.Else)
	case *view.With:
		return goBranch("With", n.Pipe, n.List, n.Else)
	case *view.Range:
		return goBranch("Range", n.Pipe, n.List, n.Else)
	case *view.Call:
		if n.Pipe == nil {
			return fmt.Sprintf("&view.Call{Name: %q}", n.Name)
		}
		return fmt.Sprintf("&view.Call{Name: %q, Pipe: &%s}", n.Name, goPipe(*n.Pipe))
	}
	panic(fmt.Sprintf("pagegen: no Go form for %T", n)) // the compiler makes no other node
}

func goBranch(kind string, p view.Pipe, list, els view.List) string {
	s := fmt.Sprintf("&view.%s{Pipe: %s, List: %s", kind, goPipe(p), goList(list))
	if els != nil {
		s += ", Else: " + goList(els)
	}
	return s + "}"
}

func goPipe(p view.Pipe) string {
	var b strings.Builder
	b.WriteString("view.Pipe{")
	if len(p.Decl) > 0 {
		fmt.Fprintf(&b, "Decl: []string{%s}, ", quoteAll(p.Decl))
	}
	if p.IsAssign {
		b.WriteString("IsAssign: true, ")
	}
	b.WriteString("Cmds: []view.Cmd{")
	for i, c := range p.Cmds {
		if i > 0 {
			b.WriteString(", ")
		}
		args := make([]string, len(c))
		for j, a := range c {
			args[j] = goArg(a)
		}
		b.WriteString("{" + strings.Join(args, ", ") + "}")
	}
	b.WriteString("}}")
	return b.String()
}

func goArg(a view.Arg) string {
	switch a := a.(type) {
	case view.Dot:
		return "view.Dot{}"
	case view.Nil:
		return "view.Nil{}"
	case view.Field:
		return "view.Field{" + quoteAll(a) + "}"
	case view.Var:
		if len(a.Fields) == 0 {
			return fmt.Sprintf("view.Var{Name: %q}", a.Name)
		}
		return fmt.Sprintf("view.Var{Name: %q, Fields: []string{%s}}", a.Name, quoteAll(a.Fields))
	case view.Func:
		return fmt.Sprintf("view.Func(%q)", string(a))
	case view.String:
		return fmt.Sprintf("view.String(%q)", string(a))
	case view.Bool:
		return fmt.Sprintf("view.Bool(%t)", bool(a))
	case view.Number:
		var b strings.Builder
		fmt.Fprintf(&b, "view.Number{Text: %q", a.Text)
		if a.IsInt {
			fmt.Fprintf(&b, ", IsInt: true, Int: %d", a.Int)
		}
		if a.IsUint {
			fmt.Fprintf(&b, ", IsUint: true, Uint: %d", a.Uint)
		}
		if a.IsFloat {
			fmt.Fprintf(&b, ", IsFloat: true, Float: %s", strconv.FormatFloat(a.Float, 'g', -1, 64))
		}
		return b.String() + "}"
	case view.Sub:
		return "view.Sub{Pipe: " + goPipe(a.Pipe) + "}"
	}
	panic(fmt.Sprintf("pagegen: no Go form for %T", a))
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
