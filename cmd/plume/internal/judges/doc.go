// Package judges holds `plume judges`: the project's judges from a terminal. A judge is a
// model prompt that evaluates sampled llm spans (spec §2.9, §2.10); these commands define
// judges and link them to prompts, read their evaluations and criteria, measure how far they
// agree with people, and record the calibration feedback (COMPAT.md "Feedback and judges") that
// `plume optimize judge` learns from.
package judges
