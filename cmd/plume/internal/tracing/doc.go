// Package tracing holds `plume traces`, `plume spans` and `plume sessions`: the tracing API's
// read side (spec §4.3-4.5) from a terminal. The list commands take the server's filters as
// flags, each named after its query parameter; the get commands read one record through the
// list route filtered by id, there being no route of a single trace, span or session.
package tracing
