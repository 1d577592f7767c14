// Package bound is the one rule for the numbers Plume stores: every decoder and validator of
// client input (spans, OTLP, traces, judges, evaluations, prices, feedback) checks its numbers
// against a Range here before anything is written, so that no number that passes validation
// can fail at the database.
//
// DynamoDB stores numbers of magnitude 1e-130 to 9.99e125 with at most 38 significant digits,
// and an ADD whose exact decimal result needs more digits fails ("DynamoDB only supports
// precision up to 38 digits"). The ranges here are far inside the first limit, so that sums of
// millions of values stay inside it too. The second limit is why costs, the only numbers
// DynamoDB adds up (a trace's and a session's cost are ADDs of span costs), are rounded to a
// grid (Round): a cost then has no decimal digit below 1e-13, so neither has any sum of costs,
// and a sum below 1e25 needs at most 38 digits.
//
// The ranges (docs/api.md, "Numbers"):
//
//	Cost        0 .. 1e9 USD, rounded to 1e-12 USD       span, trace and OTLP cost
//	DurationMS  0 .. 1e12 ms (about 31.7 years)          span, trace and evaluation durations
//	Score       -1e9 .. 1e9                              judge ranges and thresholds, scores
//	Confidence  0 .. 1                                   confidence_score
//	Fraction    0 .. 1                                   sample_rate
//	Temperature 0 .. 2                                   a judge's temperature
//	Price       0 .. 1e6 USD per 1M tokens               model prices
//	Tokens      0 .. 2^40 (integers)                     token counts (trace.MaxTokens)
//
// A trace of a million spans at the largest cost sums to 1e15 and a duration plus a start time
// stays inside time.Duration (1e12 ms is 1e18 ns, below 2^63).
//
// Tiny magnitudes. A nonzero value below Floor (1e-12) in magnitude is not storable as sent
// (1e-200 is below DynamoDB's 1e-130), and two kinds of number treat it differently:
//
//   - Measured values (Range.Measured: cost, durations, confidence_score) are computed by
//     programs, and float noise (0.1+0.2-0.3 is 5.6e-17) is common: they are rounded to 0, and
//     so are negative values of magnitude below Floor. Nothing meaningful is lost: 1e-12 USD
//     or ms is below anything a person reads.
//   - Chosen values (scores, thresholds, sample_rate, temperature, prices) are set by a person
//     or compared with each other: a silent change could move a score across a threshold, so
//     a nonzero value below Floor is rejected, with a message that names the field.
//
// NaN and ±Inf are rejected (JSON has neither, but 1e999 parses as +Inf), and -0 becomes 0.
package bound
