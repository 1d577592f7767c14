package tracing

import "testing"

// SetAnswerBytes makes the list routes cut their answers at n bytes for the rest of t.
func SetAnswerBytes(t testing.TB, n int) {
	old := answerBytes
	answerBytes = n
	t.Cleanup(func() { answerBytes = old })
}
