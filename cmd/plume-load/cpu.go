package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// architecture Go supports (sysconf(_SC_CLK_TCK) would need cgo).
const clockTicks = 100

// sampleCPU returns the user+system CPU time each process has used so far, -1 when it cannot
// be read (not Linux, or the process is gone).
func sampleCPU(ps []watchedProcess) []time.Duration {
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		out[i] = procCPU(p.pid)
	}
	return out
}

// procCPU reads utime and stime (fields 14 and 15) of /proc/<pid>/stat.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after it.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(u+st) * time.Second / clockTicks
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profileFetch is a CPU profile being taken by the server's net/http/pprof.
type profileFetch struct{ done chan error }

// startProfile asks base/debug/pprof/profile for a profile of d (rounded up to whole seconds)
// and writes it to out when it arrives.
func startProfile(ctx context.Context, hc *http.Client, base, out string, d time.Duration) *profileFetch {
	p := &profileFetch{done: make(chan error, 1)}
	secs := int(math.Ceil(d.Seconds()))
	go func() {
		p.done <- func() error {
			// The profile answers after secs seconds: the load's request timeout does not apply.
			ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet,
				fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimRight(base, "/"), secs), nil)
			if err != nil {
				return err
			}
			resp, err := (&http.Client{Transport: hc.Transport}).Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, resp.Body); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", out, err)
			}
			return f.Close()
		}()
	}()
	return p
}

func (p *profileFetch) wait() error { return <-p.done }
