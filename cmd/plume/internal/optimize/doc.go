// Package optimize holds `plume optimize`: optimization runs from a terminal (spec §2.12,
// §3). A run improves a prompt against its intents (the judges linked to it) or a judge's
// template against its calibration feedback; these commands start runs, follow them, cancel
// them, and promote a run's candidate: a preview of what would change, a confirmation, then
// the deploy, which never happens without both (the optimization lifecycle never overwrites
// the current prompt on its own).
package optimize
