package prompts

// What the package's external tests (package prompts_test) need of its unexported names.
type EnsureRequest = ensureRequest

const BodyLimit = bodyLimit
