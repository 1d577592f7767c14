// Package cputime reads the CPU time of the running process: what the benchmarks report beside
// the clock, as a shared machine disturbs it far less.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time (user and system) the process has used so far: all its
// threads, the garbage collector's included. A benchmark run on one core (-cpu 1) has it to
// itself.
func Process() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		panic(err) // getrusage fails only for a bad who or address
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
