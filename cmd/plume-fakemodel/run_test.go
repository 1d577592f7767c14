package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startFake runs plume-fakemodel with args and returns its URL, the lines it prints after
// that, and a function that stops it.
func startFake(t *testing.T, args ...string) (string, <-chan string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, func(string) string { return "" }, w, io.Discard)
		_ = w.Close()
	}()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("plume-fakemodel did not stop within 10 s")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	lines := bufio.NewScanner(stdout)
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	for lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			rest := make(chan string, 100)
			go func() {
				defer close(rest)
				for lines.Scan() {
					rest <- lines.Text()
				}
			}()
			return m[1], rest, stop
		}
	}
	t.Fatal("plume-fakemodel printed no URL")
	return "", nil, nil
}

func TestRun(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(rules, []byte(`[{"match":{"contains":"ping"},"reply":{"text":"pong"}},
		{"match":{"contains":"slow"},"reply":{"latency":"1h"}}]`), 0o600))
	url, out, stop := startFake(t, "-addr", "127.0.0.1:0", "-rules", rules, "-key", "sk-dev")

	var banner []string
	for range 3 {
		banner = append(banner, <-out)
	}
	assert.Contains(t, strings.Join(banner, "\n"), "simulated")

	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"model":"fake-gpt","messages":[{"role":"user","content":"ping"}]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-dev")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var body struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	require.Len(t, body.Choices, 1)
	assert.Equal(t, "pong", body.Choices[0].Message.Content)

	// A call held by a rule's latency does not hold up the stop.
	slow := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages",
			strings.NewReader(`{"model":"fake-claude","max_tokens":5,"messages":[{"role":"user","content":"slow"}]}`))
		req.Header.Set("x-api-key", "sk-dev")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		slow <- err
	}()
	require.Eventually(t, func() bool { return callCount(t, url) == 2 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())
	<-slow
	assert.Equal(t, "plume-fakemodel stopped after 2 model calls", <-out)
}

// callCount reads the server's call log endpoint.
func callCount(t *testing.T, url string) int {
	resp, err := http.Get(url + "/fakemodel/calls")
	require.NoError(t, err)
	defer resp.Body.Close()
	var log struct{ Count int }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&log))
	return log.Count
}

func TestRunRejects(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[{"reply":{"status":200}}]`), 0o600))
	tests := []struct {
		name string
		args []string
		want error
		msg  string
	}{
		{name: "unknown flag", args: []string{"-port", "1"}, want: errUsage},
		{name: "stray argument", args: []string{"serve"}, want: errUsage},
		{name: "missing rules", args: []string{"-rules", filepath.Join(t.TempDir(), "none.json")}, msg: "rules"},
		{name: "invalid rules", args: []string{"-rules", bad}, msg: "reply.status"},
		{name: "bad address", args: []string{"-addr", "127.0.0.1:-1"}, msg: "listen on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, func(string) string { return "" }, io.Discard, io.Discard)
			require.Error(t, err)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			}
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}
