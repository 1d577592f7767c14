// Package view executes the dashboard's pages without text/template.
//
// The pages are html/template files. At build time (functions/dashboard/internal/pagegen)
// html/template parses and escapes them, and the escaped parse trees are written out as Go
// values of this package's node types: a Set per page. At run time Set.Execute walks those
// trees with the semantics text/template gives them, reading fields with reflect's field
// access only. text/template finds methods by name (reflect.Value.MethodByName), which makes
// the linker keep every exported method of every type a binary may convert to an interface
// (about 8 MB of the dashboard's bootstrap); this package never looks a method up, so a
// template reads fields and calls functions, never methods.
//
// The escapers html/template inserts into the pages (HTML text, attribute values, RCDATA,
// URLs) are this package's own functions, each held equal to html/template's by a test.
package view
