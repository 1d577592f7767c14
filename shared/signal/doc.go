// Package signal is Plume's business signals and A/B tests (issue 29): the outcomes an
// application records on its spans, traces, sessions and completions (ze.set_signal, the
// TypeScript SDK's sendSignal), the weighted choices of ze.choose, and the report that says,
// per variant of a test, how its entities fared and whether the difference from the control is
// significant.
//
// An entity's signals and choices are one record (Entity), kept whether or not the span,
// trace or session it names has arrived: the SDKs send signals before or after their spans,
// and the record is joined to its entity by id when read. Every change of a record carries the
// deltas it makes to the aggregates of the tests its entity is in (a count per variant, and
// per variant and signal the count, sum and sum of squares of the values), written with the
// record in one transaction guarded by the record's version: a retried or concurrent request
// recomputes its deltas from what is stored, so nothing is counted twice, and a report reads
// O(variants x signals) aggregates, never the entities.
package signal
