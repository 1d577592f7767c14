// Package optimize improves a prompt (or a judge's template) from the feedback on its
// completions: an optimization run takes the prompt's examples (Example: completions with
// people's feedback and the verdicts of the run's intents, the judges that score it), splits
// them deterministically (Split), lets a strategy propose candidates (quick_refine: one
// reflection over the feedback; dspy_bootstrap: demonstrations chosen by a seeded search;
// dspy_gepa: the reflective Pareto search of package gepa), scores every candidate the same
// way (Evaluator: the task model on the example's input, then the intents' judges, weighted, and
// the expected output where people gave one), and compares the best with the baseline on the
// holdout, which no strategy sees.
//
// Nothing here stores, calls a model or reads a clock: the runner (functions/optimizer) gives
// the strategies an Evaluator and a Reflector and checkpoints their state between steps, so that
// a run survives the end of a Lambda invocation and replays a step without paying twice.
package optimize
