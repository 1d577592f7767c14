package otlp

// What the package's external tests (package otlp_test) need of its unexported names.
const MaxBodyBytes = maxBodyBytes
