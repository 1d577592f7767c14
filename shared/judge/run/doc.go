// Package run evaluates llm spans with a judge: which spans a judge takes (Matches, Sampled),
// the model request that asks for its verdict (Prompt), how the model's answer becomes an
// evaluation (Verdict), and all of it for a batch of spans (Evaluate).
//
// It is pure logic around one model Caller: no store, no AWS, no trigger. The evaluator
// function reads a landed span batch and the project's judges, calls Evaluate for each judge,
// and writes what it returns through judge.BuildEvaluations and the judge store (DESIGN.md,
// "Judges").
//
// # Which spans a judge takes
//
// A span is evaluated by a judge when all of these hold (Matches):
//
//   - the span's kind is llm and the judge is not paused;
//   - the judge has no target prompt, or the span is linked to it: the linkage slug is
//     Link.PromptSlug, else Link.Task, as trace.Summarize derives a span's prompt slug;
//   - the judge has no tag filter, or the span's own tags (not its trace's or session's) pass
//     it: for each filter key the span has that tag with one of the listed values, for every
//     key (match "all") or for at least one (match "any");
//   - the span is sampled (Sampled): the first 8 bytes of SHA-256(judge id, 0x00, span id),
//     read big-endian as a uint64 and divided by 2^64, fall below the judge's sample rate.
//     Rate 1 takes every span and 0 none. The choice depends on nothing but the two ids, so a
//     retried event or a span sent again picks the same spans, and different judges sample
//     independently.
//
// # The prompt
//
// The judge's template becomes the user message with {{input}} and {{output}} (spaces inside
// the braces allowed; also the single-brace {input} and {output}) replaced by the span's
// input_data and output_data, each cut to MaxDataBytes with a note saying so, and {{name}} by
// the prompt variable name the span was rendered with (Variables). When the template names
// neither input nor output, the two are appended after it, delimited; when it names one, the
// other is appended; the variables it does not name are appended in a <variables> block. The system message states the judge's task, the answer's fields and up
// to MaxCorrections human corrections of earlier verdicts, newest first. The answer is
// structured output (llm.Schema, strict: every property required, no others):
//
//	binary: {"reason": string, "confidence": 0..1, "meets_criteria": boolean}
//	scored: {"reason": string, "confidence": 0..1, "score": ScoreMin..ScoreMax}
//
// plus, for a judge with criteria, "criteria_scores": {"<key>": {"score", "reason"}, ...} with
// every criterion key; a criterion's score lies in the judge's range (0..1 for a binary judge,
// as judge.BuildEvaluations checks).
package run
