package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// startPprof serves net/http/pprof on addr (PLUME_PPROF_ADDR, a loopback address such as
// 127.0.0.1:6060), a listener of its own, never the API's: make load profiles plume-local
// through it. It returns the function that closes the listener.
func startPprof(addr string) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("PLUME_PPROF_ADDR %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("PLUME_PPROF_ADDR %q: want a loopback address (profiles expose the process's memory)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("PLUME_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
