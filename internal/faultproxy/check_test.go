package faultproxy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCheckTarget(t *testing.T) {
	tests := []struct {
		target string
		ok     bool
	}{
		{target: "http://127.0.0.1:8000", ok: true},
		{target: "http://127.0.0.1:8000/", ok: true},
		{target: "http://127.1.2.3:8000", ok: true},
		{target: "http://localhost:8000", ok: true},
		{target: "http://[::1]:8000", ok: true},
		{target: "https://127.0.0.1:8000"},
		{target: "127.0.0.1:8000"},
		{target: "http://example.com"},
		{target: "http://10.0.0.1:8000"},
		{target: "http://0.0.0.0:8000"},
		{target: "http://127.0.0.1:8000/base"},
		{target: "http://127.0.0.1:8000?x=1"},
		{target: "http://user:secret@127.0.0.1:8000"},
		{target: "http://"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			_, err := checkTarget(tt.target)
			assert.Equal(t, tt.ok, err == nil, "error: %v", err)
		})
	}
}

func TestRuleCheck(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		ok   bool
	}{
		{name: "zero Nth is the first", rule: Rule{Fault: Throttle}, ok: true},
		{name: "forever", rule: Rule{Op: "PutItem", Nth: 3, Following: Forever, Fault: Drop}, ok: true},
		{name: "zero delay", rule: Rule{Fault: Delay(0)}, ok: true},
		{name: "no fault", rule: Rule{Op: "PutItem"}},
		{name: "negative Nth", rule: Rule{Nth: -1, Fault: Throttle}},
		{name: "Following below Forever", rule: Rule{Following: -2, Fault: Throttle}},
		{name: "negative delay", rule: Rule{Fault: Delay(-time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.check()
			assert.Equal(t, tt.ok, err == nil, "error: %v", err)
		})
	}
}

func TestFaultString(t *testing.T) {
	tests := []struct {
		fault Fault
		want  string
	}{
		{Throttle, "Throttle"},
		{ServerError, "ServerError"},
		{Delay(10 * time.Millisecond), "Delay(10ms)"},
		{Drop, "Drop"},
		{DropAfterForward, "DropAfterForward"},
		{Fault{}, "no fault"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.fault.String())
	}
}
