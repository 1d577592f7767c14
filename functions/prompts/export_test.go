package prompts

// What the package's external tests (package prompts_test) need of its unexported names.
const BodyLimit = bodyLimit
