package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
)

// clientKey is a row of `keys list --output json`.
type clientKey struct {
	api.APIKey
	Status string `json:"status"`
}

// TestKeysCommands: keys created (the secret printed once, on stdout alone), listed with their
// status and revoked with --yes, through the API with the tenant's admin key; the keys created
// authenticate, a revoked one no longer does.
func TestKeysCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.goldenBoth("keys-list", "keys", "list")

	// Text: the secret alone on stdout, once; the details and the warning on stderr.
	r := h.run("keys", "create", "--role", "ingest", "--name", "checkout-service")
	require.Equal(t, exitOK, r.code, "%s", r)
	secret := strings.TrimSuffix(r.stdout, "\n")
	require.True(t, strings.HasPrefix(secret, "plm_"), "stdout is the secret alone: %q", r.stdout)
	assert.NotContains(t, secret, "\n")
	assert.NotContains(t, r.stderr, secret, "the secret is printed once, on stdout")
	assert.Contains(t, r.stderr, "only time the key's secret is shown")
	assert.Contains(t, r.stderr, "Created ingest key")
	ingest := h.api.Do(t, "POST", "/spans", secret, []any{apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "support-bot", "", "q", "a", fixtureStart)})
	assert.Equal(t, 200, ingest.Status, "the ingest key sends spans: %s", ingest.Body)

	// JSON: the whole answer, the secret included; the warning still on stderr.
	r = h.run("--output", "json", "keys", "create", "--role", "member", "--name", "laptop", "--email", "ana@example.com",
		"--user-name", "Ana", "--expires-in", "720h")
	require.Equal(t, exitOK, r.code, "%s", r)
	var member api.CreatedAPIKey
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &member), "stdout is not JSON: %s", r.stdout)
	assert.Equal(t, "member", member.Role)
	assert.Equal(t, "laptop", member.Name)
	assert.Equal(t, api.User{ID: member.User.ID, Email: "ana@example.com", Name: "Ana"}, member.User)
	require.NotNil(t, member.ExpiresAt)
	assert.WithinDuration(t, time.Now().Add(720*time.Hour), *member.ExpiresAt, time.Minute)
	require.True(t, strings.HasPrefix(member.Secret, "plm_"))
	assert.Equal(t, 1, strings.Count(r.stdout, member.Secret))
	assert.NotContains(t, r.stderr, member.Secret)
	assert.Contains(t, r.stderr, "only time the key's secret is shown")

	// The list: every key with its status, never a secret.
	var rows []clientKey
	h.okJSON(&rows, "keys", "list")
	require.Len(t, rows, 3)
	for _, row := range rows {
		assert.Equal(t, "active", row.Status)
	}
	assert.Equal(t, []string{"admin", "ingest", "member"}, []string{rows[0].Role, rows[1].Role, rows[2].Role}, "oldest first")
	for _, out := range []string{h.ok("keys", "list"), h.ok("--output", "json", "keys", "list")} {
		assert.NotContains(t, out, secret)
		assert.NotContains(t, out, member.Secret)
		assert.NotContains(t, out, h.api.A.Key)
		assert.NotContains(t, out, `"secret"`)
	}
	assert.Equal(t, []string{member.ID}, h.listedIDs("keys", "list", "--where", "role=member", "--where", "name~lap"))

	// Revoked with --yes: the key stops authenticating at once and stays listed as revoked.
	golden(t, "keys-revoke.text", h.ok("keys", "revoke", member.ID, "--yes"))
	var revoked clientKey
	h.okJSON(&revoked, "keys", "revoke", member.ID, "--yes")
	assert.Equal(t, "revoked", revoked.Status)
	require.NotNil(t, revoked.RevokedAt)
	assert.Equal(t, []string{member.ID}, h.listedIDs("keys", "list", "--where", "status=revoked"))
	r = h.run("--output", "json", "--api-key", member.Secret, "prompts", "list")
	assert.Equal(t, exitAuth, r.code, "%s", r)
}

// TestKeysRefusals: a member and an ingest key get the API's 403 (exit 3); revoke without
// --yes on a non-terminal, bad flags, an unknown key and the last admin key exit 2, and
// nothing is revoked.
func TestKeysRefusals(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	var member, ingest api.CreatedAPIKey
	h.okJSON(&member, "keys", "create", "--role", "member")
	h.okJSON(&ingest, "keys", "create", "--role", "ingest")
	tests := []struct {
		name   string
		args   []string
		exit   int
		code   errs.Code
		stderr string
	}{
		{"member lists", []string{"--api-key", member.Secret, "keys", "list"}, exitAuth, errs.CodeForbidden, ""},
		{"member creates", []string{"--api-key", member.Secret, "keys", "create", "--role", "admin"}, exitAuth, errs.CodeForbidden, ""},
		{"member revokes", []string{"--api-key", member.Secret, "keys", "revoke", ingest.ID, "--yes"}, exitAuth, errs.CodeForbidden, ""},
		{"ingest lists", []string{"--api-key", ingest.Secret, "keys", "list"}, exitAuth, errs.CodeForbidden, ""},
		{"revoke on a non-terminal", []string{"keys", "revoke", ingest.ID}, exitUsage, errs.CodeInvalid, "standard input is not a terminal; pass --yes"},
		{"revoke without an id", []string{"keys", "revoke", "--yes"}, exitUsage, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"revoke an unknown key", []string{"keys", "revoke", uuid.NewString(), "--yes"}, exitUsage, errs.CodeNotFound, "not found"},
		{"revoke the last admin key", []string{"keys", "revoke", h.adminKeyID(), "--yes"}, exitUsage, errs.CodeConflict, "last usable admin key"},
		{"create without a role", []string{"keys", "create", "--name", "x"}, exitUsage, errs.CodeInvalid, "--role"},
		{"create with an unknown role", []string{"keys", "create", "--role", "owner"}, exitUsage, errs.CodeInvalid, "role"},
		{"create that never works", []string{"keys", "create", "--role", "ingest", "--expires-in", "0s"}, exitUsage, errs.CodeInvalid, "--expires-in"},
		{"bad where", []string{"keys", "list", "--where", "status"}, exitUsage, errs.CodeInvalid, "--where"},
		{"another project's keys", []string{"keys", "list", "--project-id", h.api.B.ProjectID}, exitAuth, errs.CodeForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			r := h.run(tt.args...)
			assert.Equal(t, tt.exit, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, tt.stderr)
			r = h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Equal(t, tt.exit, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			var body jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), "stderr is not JSON: %s", r.stderr)
			assert.Equal(t, string(tt.code), body.Error.Code)
			assert.Contains(t, body.Error.Message, tt.stderr)
		})
	}

	// Nothing was created or revoked by the refused commands.
	var rows []clientKey
	h.okJSON(&rows, "keys", "list")
	require.Len(t, rows, 3)
	for _, row := range rows {
		assert.Equal(t, "active", row.Status, "%s", row.ID)
	}
}

// adminKeyID is the id of the tenant's own admin key, the first listed.
func (h *clientHarness) adminKeyID() string {
	h.t.Helper()
	var rows []clientKey
	h.okJSON(&rows, "keys", "list", "--where", "role=admin")
	require.Len(h.t, rows, 1)
	return rows[0].ID
}
