package main

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/cmd/plume/internal/speccmd"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
)

// TestPromptsCommands: every prompts command, text and json, against the whole API.
func TestPromptsCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.goldenBoth("prompts-ensure", "prompts", "ensure", "support-bot", "--content", "You help with {{product}}.\nBe kind.")
	file := filepath.Join(t.TempDir(), "v2.txt")
	require.NoError(t, os.WriteFile(file, []byte("You help with {{product}}.\nBe brief.\nAnswer in English.\n"), 0o600))
	h.ok("prompts", "ensure", "support-bot", "--file", file, "--model", "openai/gpt-4o-mini")
	r := h.runIn("You explain invoices.", "prompts", "ensure", "billing", "--file", "-")
	require.Equal(t, exitOK, r.code, "%s", r)

	h.goldenBoth("prompts-list", "prompts", "list", "--order", "slug")
	h.goldenBoth("prompts-get", "prompts", "get", "support-bot", "--version", "1")
	h.goldenBoth("prompts-versions", "prompts", "versions", "support-bot")
	h.goldenBoth("prompts-pin", "prompts", "pin", "support-bot", "production", "--version", "1")
	h.goldenBoth("prompts-tags", "prompts", "tags", "support-bot", "--order", "tag")
	h.goldenBoth("prompts-diff", "prompts", "diff", "support-bot", "production", "latest")
	h.goldenBoth("prompts-bind-model", "prompts", "bind-model", "support-bot", "--version", "1", "--model", "anthropic/claude-sonnet-4-5")

	var got api.PromptVersion
	h.okJSON(&got, "prompts", "get", "support-bot", "--tag", "production")
	assert.Equal(t, 1, got.Version)
	require.NotNil(t, got.ModelID)
	assert.Equal(t, "anthropic/claude-sonnet-4-5", *got.ModelID)
	h.ok("prompts", "bind-model", "support-bot", "--version", "1", "--unbind")
	h.okJSON(&got, "prompts", "get", "support-bot", "--tag", "production")
	assert.Nil(t, got.ModelID)

	// Client-side --where, --select, --order and paging of a list the server answers whole.
	var rows []map[string]any
	h.okJSON(&rows, "prompts", "versions", "support-bot", "--where", "content~brief", "--select", "version,model_id")
	assert.Equal(t, []map[string]any{{"version": 2.0, "model_id": "openai/gpt-4o-mini"}}, rows)
	rows = nil
	h.okJSON(&rows, "prompts", "list", "--where", "slug in [billing, nothing]", "--select", "slug")
	assert.Equal(t, []map[string]any{{"slug": "billing"}}, rows)
	rows = nil
	h.okJSON(&rows, "prompts", "versions", "support-bot", "--order", "version:desc", "--limit", "1", "--select", "version")
	assert.Equal(t, []map[string]any{{"version": 2.0}}, rows)
	rows = nil
	h.okJSON(&rows, "prompts", "versions", "support-bot", "--where", "version==3")
	assert.Empty(t, rows)

	// diff --exit-code: 1 when the versions differ, 0 when they do not.
	assert.Equal(t, exitDiffers, h.run("prompts", "diff", "support-bot", "1", "2", "--exit-code").code)
	assert.Equal(t, exitOK, h.run("prompts", "diff", "support-bot", "2", "2", "--exit-code").code)

	// Feedback on a completion of the prompt.
	span := uuid.NewString()
	h.api.MustDo(t, "POST", "/spans", h.api.A.Key, []any{apitest.LLMSpan(span, uuid.NewString(), "", "support-bot", "", "question", "answer", time.Now().Add(-time.Hour))})
	out := h.ok("prompts", "feedback", "create", "support-bot", span, "--thumbs-down", "--reason", "too long", "--expected-output", "Shorter.")
	assert.Contains(t, out, "too long")
	var fb api.Feedback
	h.okJSON(&fb, "prompts", "feedback", "create", "support-bot", span, "--thumbs-up", "--metadata", `{"source":"cli"}`)
	assert.True(t, fb.ThumbsUp, "feedback again replaces the first")
	assert.JSONEq(t, `{"source":"cli"}`, string(fb.Metadata))
}

// TestClientUsageErrors: command lines that cannot run exit 2 before or after the API answers,
// with the same message as JSON on stderr in json mode.
func TestClientUsageErrors(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.ok("prompts", "ensure", "support-bot", "--content", "Hello")
	h.ok("prompts", "pin", "support-bot", "production", "--version", "1", "--expected", "0")
	h.ok("prompts", "ensure", "support-bot", "--content", "Hello again")
	tests := []usageError{
		{"missing argument", []string{"prompts", "get"}, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"version and tag", []string{"prompts", "get", "support-bot", "--version", "1", "--tag", "production"}, errs.CodeInvalid, "cannot be used together"},
		{"unknown prompt", []string{"prompts", "get", "no-such-prompt"}, errs.CodeNotFound, "not found"},
		{"unknown version", []string{"prompts", "get", "support-bot", "--version", "9"}, errs.CodeNotFound, "not found"},
		{"bad slug", []string{"prompts", "ensure", "Support Bot", "--content", "x"}, errs.CodeInvalid, "slug"},
		{"no content", []string{"prompts", "ensure", "support-bot"}, errs.CodeInvalid, "pass --content or --file"},
		{"pin without version", []string{"prompts", "pin", "support-bot", "production"}, errs.CodeInvalid, "required flag --version not set"},
		{"pin unknown version", []string{"prompts", "pin", "support-bot", "production", "--version", "7"}, errs.CodeNotFound, "not found"},
		{"pin a tag that moved", []string{"prompts", "pin", "support-bot", "production", "--version", "2", "--expected", "0"}, errs.CodeConflict, "is at version 1"},
		{"pin negative expected", []string{"prompts", "pin", "support-bot", "production", "--version", "1", "--expected", "-1"}, errs.CodeInvalid, "--expected"},
		{"model and unbind", []string{"prompts", "bind-model", "support-bot", "--version", "1"}, errs.CodeInvalid, "either --model or --unbind"},
		{"both thumbs", []string{"prompts", "feedback", "create", "support-bot", uuid.NewString(), "--thumbs-up", "--thumbs-down"}, errs.CodeInvalid, "either --thumbs-up or --thumbs-down"},
		{"bad where", []string{"prompts", "list", "--where", "slug"}, errs.CodeInvalid, "--where"},
		{"bad order", []string{"prompts", "list", "--order", "slug:up"}, errs.CodeInvalid, "--order"},
		{"bad format", []string{"spec", "cli", "--format", "yaml"}, errs.CodeInvalid, "--format"},
	}
	h.refuses(tests)
}

// TestClientExitCodes: the exit code table of the client commands.
func TestClientExitCodes(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + listener.Addr().String() // a port nothing answers on once closed
	require.NoError(t, listener.Close())

	tests := []struct {
		name string
		env  map[string]string
		args []string
		exit int
		code errs.Code
	}{
		{"success", nil, []string{"prompts", "list"}, exitOK, ""},
		{"bad flag", nil, []string{"prompts", "list", "--bogus"}, exitUsage, errs.CodeInvalid},
		{"no base URL", map[string]string{"PLUME_BASE_URL": ""}, []string{"prompts", "list"}, exitUsage, errs.CodeInvalid},
		{"no project", map[string]string{"PLUME_PROJECT_ID": ""}, []string{"prompts", "list"}, exitUsage, errs.CodeInvalid},
		{"bad key", map[string]string{"PLUME_API_KEY": "plm_not-a-key-at-all"}, []string{"prompts", "list"}, exitAuth, errs.CodeUnauthenticated},
		{"no key", map[string]string{"PLUME_API_KEY": ""}, []string{"prompts", "list"}, exitAuth, errs.CodeUnauthenticated},
		{"another project", map[string]string{"PLUME_PROJECT_ID": h.api.B.ProjectID}, []string{"prompts", "list"}, exitAuth, errs.CodeForbidden},
		{"server down", map[string]string{"PLUME_BASE_URL": down}, []string{"prompts", "list", "--timeout", "5s"}, exitRemote, errs.CodeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			h.env = maps(h.env, tt.env)
			r := h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Equal(t, tt.exit, r.code, "%s", r)
			if tt.exit == exitOK {
				return
			}
			var body jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), "stderr is not JSON: %s", r.stderr)
			assert.Equal(t, string(tt.code), body.Error.Code, "%s", r)
		})
	}
}

// maps is base overridden by over (an empty value removes the variable).
func maps(base, over map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// TestAuthCommands: credentials saved to the configuration file (0600) and used by the client
// commands, flags and the environment winning over it, shown redacted, cleared.
func TestAuthCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	saved := map[string]string{"XDG_CONFIG_HOME": h.env["XDG_CONFIG_HOME"]}
	h.env = saved
	assert.Equal(t, exitUsage, h.run("prompts", "list").code, "nothing configured")
	assert.Equal(t, exitUsage, h.run("auth", "set").code, "nothing to set")

	r := h.runIn(h.api.A.Key+"\n", "auth", "set", "--api-base-url", h.url+"/", "--project-id", h.api.A.ProjectID, "--api-key-stdin")
	require.Equal(t, exitOK, r.code, "%s", r)
	path := filepath.Join(h.env["XDG_CONFIG_HOME"], "plume", "config.json")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	h.ok("prompts", "ensure", "configured", "--content", "From the configuration file")

	show := h.ok("auth", "show")
	assert.NotContains(t, show, h.api.A.Key, "redacted by default")
	assert.Contains(t, show, "(from config)")
	golden(t, "auth-show.text", strings.ReplaceAll(show, h.env["XDG_CONFIG_HOME"], "<config-home>"))
	assert.Contains(t, h.ok("auth", "show", "--redact=false"), h.api.A.Key)

	// The environment wins over the file, and a flag over both.
	h.env = maps(saved, map[string]string{"PLUME_API_KEY": "plm_from-the-environment"})
	var creds struct {
		APIKey struct{ Value, Source string } `json:"api_key"`
	}
	h.okJSON(&creds, "auth", "show")
	assert.Equal(t, "PLUME_API_KEY", creds.APIKey.Source)
	assert.Equal(t, exitAuth, h.run("prompts", "list").code)
	h.okJSON(&creds, "--api-key", h.api.A.Key, "auth", "show")
	assert.Equal(t, "flag", creds.APIKey.Source)
	h.ok("prompts", "list", "--api-key", h.api.A.Key)
	h.env = maps(saved, map[string]string{"ZEROEVAL_API_KEY": "plm_zeroeval"})
	h.okJSON(&creds, "auth", "show")
	assert.Equal(t, "ZEROEVAL_API_KEY", creds.APIKey.Source, "the zeroeval SDKs' names are read too")

	h.env = saved
	assert.Contains(t, h.ok("auth", "clear"), "Removed")
	assert.NoFileExists(t, path)
	assert.Contains(t, h.ok("auth", "clear"), "No configuration file")

	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	r = h.run("prompts", "list")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, "plume auth clear")
}

// TestSpecCLI: `spec cli` lists every command of the tree and every flag of each, and the
// Markdown form names every command.
func TestSpecCLI(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	var spec speccmd.CLI
	h.okJSON(&spec, "spec", "cli", "--format", "json")
	listed := map[string]speccmd.Command{}
	for _, c := range spec.Commands {
		listed[c.Path] = c
	}
	root := NewCmdRoot(h.factory())
	var runnable int
	for _, c := range walk(root) {
		if c.HasSubCommands() || c.Hidden || c.Name() == "help" {
			continue
		}
		runnable++
		got, ok := listed[c.CommandPath()]
		if !assert.True(t, ok, "%s is not in spec cli", c.CommandPath()) {
			continue
		}
		var flags []string
		for _, fl := range got.Flags {
			flags = append(flags, fl.Name)
		}
		c.NonInheritedFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Name != "help" {
				assert.Contains(t, flags, fl.Name, "%s --%s", c.CommandPath(), fl.Name)
			}
		})
	}
	assert.Len(t, spec.Commands, runnable)
	for _, want := range []string{"plume prompts get", "plume auth set", "plume admin create-key", "plume spec cli"} {
		assert.Contains(t, listed, want)
	}
	var global []string
	for _, fl := range spec.GlobalFlags {
		global = append(global, fl.Name)
	}
	assert.Subset(t, global, []string{"output", "project-id", "api-base-url", "api-key", "quiet", "timeout"})
	md := h.ok("spec", "cli", "--format", "markdown")
	for path := range listed {
		assert.Contains(t, md, "## "+path)
	}
	assert.True(t, strings.HasPrefix(md, "# plume command line"))
}

// factory is a Factory of the harness's environment that discards output.
func (h *clientHarness) factory() *cmdutil.Factory {
	return cmdutil.New(func(k string) string { return h.env[k] }, io.Discard, io.Discard)
}

// walk lists c and every command under it.
func walk(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, walk(sub)...)
	}
	return out
}
