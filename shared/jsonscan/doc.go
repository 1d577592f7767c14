// Package jsonscan reads JSON text in place: a validating Reader that accepts exactly what
// encoding/json accepts and hands out values as slices of the input, and the helpers that work
// on values it has validated (Members, Unescape, AppendCompact, CompactGaps, IsNumber).
//
// It exists for the hot path of span ingestion (trace.DecodeBatch), where decoding into
// structs with encoding/json costs more than everything else the decoder does. It knows
// nothing of spans. Its agreement with encoding/json (the same texts valid, the same string
// values, the same compact form) is checked by FuzzReader.
package jsonscan
