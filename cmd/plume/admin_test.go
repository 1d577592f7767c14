package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
)

// authenticate checks a secret the way every API request does, without a cache.
func (h *harness) authenticate(secret string) (auth.Principal, error) {
	a := auth.NewAuthenticator(ddb.NewAuthStore(ddb.NewTable(h.client, h.table)), 0)
	return a.Authenticate(context.Background(), "Bearer "+secret)
}

// listedKey is a key as list-keys --output json prints it.
type listedKey struct {
	ID        string     `json:"id"`
	ProjectID string     `json:"project_id"`
	Display   string     `json:"display"`
	Label     string     `json:"label"`
	Role      string     `json:"role"`
	User      auth.User  `json:"user"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	Status    string     `json:"status"`
}

func (h *harness) listKeys(project string) []listedKey {
	h.t.Helper()
	var keys []listedKey
	out := h.ok("--output", "json", "admin", "list-keys", "--project-id", project)
	require.NoError(h.t, json.Unmarshal([]byte(out), &keys), out)
	return keys
}

// row returns the line of a text listing that contains s.
func row(t *testing.T, listing, s string) []string {
	t.Helper()
	for line := range strings.Lines(listing) {
		if strings.Contains(line, s) {
			return strings.Fields(line)
		}
	}
	t.Fatalf("no row with %q in\n%s", s, listing)
	return nil
}

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	r := h.run("admin", "create-project", "--name", "Acme support")
	require.Equal(t, exitOK, r.code, "%s", r)
	project := strings.TrimSpace(r.stdout)
	require.NoError(t, auth.ValidateProjectID(project), "create-project prints the id alone")
	assert.Contains(t, r.stderr, `Created project "Acme support".`)

	r = h.run("admin", "create-key", "--project-id", project, "--user-id", "u-ada", "--email", "ada@example.com",
		"--name", "Ada", "--label", "laptop", "--expires-in", "720h")
	require.Equal(t, exitOK, r.code, "%s", r)
	secret := strings.TrimSpace(r.stdout)
	assert.True(t, strings.HasPrefix(secret, auth.KeyPrefix), "stdout is the key alone: %q", r.stdout)
	assert.Equal(t, 1, strings.Count(r.stdout+r.stderr, secret), "the key is printed exactly once")
	assert.Contains(t, r.stderr, "cannot be shown again")

	p, err := h.authenticate(secret)
	require.NoError(t, err, "the printed key authenticates")
	assert.Equal(t, project, p.ProjectID)
	assert.Equal(t, auth.User{ID: "u-ada", Email: "ada@example.com", Name: "Ada"}, p.User)

	listing := h.ok("admin", "list-keys", "--project-id", project)
	assert.Equal(t, []string{"ID", "PREFIX", "USER", "LABEL", "CREATED", "EXPIRES", "ROLE", "STATUS"}, strings.Fields(strings.SplitN(listing, "\n", 2)[0]))
	cells := row(t, listing, p.KeyID)
	require.Len(t, cells, 8, listing)
	assert.Equal(t, []string{p.KeyID, secret[:12], "ada@example.com", "laptop"}, cells[:4])
	assert.Equal(t, []string{"admin", "active"}, cells[6:], "a key created without --role is an admin key")
	keys := h.listKeys(project)
	require.Len(t, keys, 1)
	assert.Equal(t, "active", keys[0].Status)
	require.NotNil(t, keys[0].ExpiresAt)
	assert.WithinDuration(t, time.Now().Add(720*time.Hour), *keys[0].ExpiresAt, time.Minute)

	r = h.run("admin", "revoke-key", "--project-id", project, "--key-id", p.KeyID)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "Revoked key "+p.KeyID)

	assert.Equal(t, "revoked", row(t, h.ok("admin", "list-keys", "--project-id", project), p.KeyID)[7])
	keys = h.listKeys(project)
	require.Len(t, keys, 1)
	assert.Equal(t, "revoked", keys[0].Status)
	assert.NotNil(t, keys[0].RevokedAt)

	_, err = h.authenticate(secret)
	require.Error(t, err, "a revoked key must not authenticate")
	assert.Equal(t, errs.CodeUnauthenticated, errs.CodeOf(err))
	assert.Contains(t, err.Error(), "revoked")

	r = h.run("admin", "revoke-key", "--project-id", project, "--key-id", p.KeyID)
	require.Equal(t, exitOK, r.code, "revoking again is fine: %s", r)
	assert.Contains(t, r.stderr, "was already revoked")
}

func TestListKeysStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "statuses"))
	created := time.Now()

	h.ok("admin", "create-key", "--project-id", project, "--label", "forever")
	h.ok("admin", "create-key", "--project-id", project, "--label", "long", "--expires-in", "720h")
	h.ok("admin", "create-key", "--project-id", project, "--label", "short", "--expires-at", created.Add(time.Hour).UTC().Format(time.RFC3339))
	short := h.listKeys(project)
	revoked := strings.TrimSpace(h.ok("admin", "create-key", "--project-id", project, "--label", "gone"))
	p, err := h.authenticate(revoked)
	require.NoError(t, err)
	h.ok("admin", "revoke-key", "--project-id", project, "--key-id", p.KeyID)
	require.Len(t, short, 3)

	tests := []struct {
		name string
		now  time.Time
		want map[string]string // label -> status
	}{
		{"now", created, map[string]string{"forever": "active", "long": "active", "short": "active", "gone": "revoked"}},
		{"in two hours", created.Add(2 * time.Hour), map[string]string{"forever": "active", "long": "active", "short": "expired", "gone": "revoked"}},
		{"in a year", created.Add(365 * 24 * time.Hour), map[string]string{"forever": "active", "long": "expired", "short": "expired", "gone": "revoked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			h.now = tt.now
			got := map[string]string{}
			for _, k := range h.listKeys(project) {
				got[k.Label] = k.Status
			}
			assert.Equal(t, tt.want, got, "json")

			listing := h.ok("admin", "list-keys", "--project-id", project)
			for label, status := range tt.want {
				cells := row(t, listing, " "+label+" ")
				assert.Equal(t, status, cells[len(cells)-1], "text, %s", label)
			}
		})
	}
	expiresShort := row(t, h.ok("admin", "list-keys", "--project-id", project), " short ")[5]
	assert.Equal(t, created.Add(time.Hour).UTC().Format(time.RFC3339), expiresShort)
	assert.Equal(t, "never", row(t, h.ok("admin", "list-keys", "--project-id", project), " forever ")[5])
}

func TestListOutputNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "secrets"))
	var secrets []string
	for range 3 {
		secrets = append(secrets, strings.TrimSpace(h.ok("admin", "create-key", "--project-id", project, "--quiet")))
	}
	secrets = append(secrets, strings.TrimSpace(h.ok("admin", "create-key", "--project-id", project, "--secret", "plm_devseedkey0000000000000000000000000000")))

	for _, args := range [][]string{
		{"admin", "list-keys", "--project-id", project},
		{"--output", "json", "admin", "list-keys", "--project-id", project},
	} {
		r := h.run(args...)
		require.Equal(t, exitOK, r.code, "%s", r)
		out := r.stdout + r.stderr
		for _, s := range secrets {
			assert.NotContains(t, out, s, "a key in %v", args)
			assert.NotContains(t, out, auth.HashKey(s), "a key hash in %v", args)
			assert.NotContains(t, out, s[:len(auth.KeyPrefix)+9], "more than the display prefix in %v", args)
			assert.Contains(t, out, s[:len(auth.KeyPrefix)+8], "the display prefix in %v", args)
		}
		assert.NotContains(t, strings.ToLower(out), "hash")
	}
}

func TestCreateKeyJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "json"))
	const seeded = "plm_devseedkey0000000000000000000000000000"

	tests := []struct {
		name   string
		args   []string
		secret string // the key to expect; empty: a random one
		label  string
	}{
		{"random", []string{"--label", "ci", "--email", "ci@example.com", "--expires-at", "2099-01-01T00:00:00Z"}, "", "ci"},
		{"seeded", []string{"--secret", seeded, "--label", "dev"}, seeded, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			r := h.run(append([]string{"--output", "json", "admin", "create-key", "--project-id", project}, tt.args...)...)
			require.Equal(t, exitOK, r.code, "%s", r)
			assert.Empty(t, r.stderr, "json mode prints the result alone")
			var out map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
			secret, _ := out["key"].(string)
			if tt.secret != "" {
				assert.Equal(t, tt.secret, secret)
			}
			assert.True(t, strings.HasPrefix(secret, auth.KeyPrefix), secret)
			assert.Equal(t, project, out["project_id"])
			assert.Equal(t, tt.label, out["label"])
			assert.Equal(t, secret[:12], out["display"])
			assert.NotContains(t, out, "hash")
			assert.NotContains(t, r.stdout, auth.HashKey(secret))

			p, err := h.authenticate(secret)
			require.NoError(t, err)
			assert.Equal(t, out["id"], p.KeyID)
		})
	}

	r := h.run("admin", "create-key", "--project-id", project, "--secret", seeded)
	assert.Equal(t, exitUsage, r.code, "the same key twice is a conflict: %s", r)
	assert.Contains(t, r.stderr, "already registered")
}

func TestCreateKeyRole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "roles"))

	tests := []struct {
		name string
		args []string
		want auth.Role
	}{
		{"default", nil, auth.RoleAdmin},
		{"admin", []string{"--role", "admin"}, auth.RoleAdmin},
		{"member", []string{"--role", "member"}, auth.RoleMember},
		{"ingest", []string{"--role=ingest"}, auth.RoleIngest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			label := "role-" + tt.name
			r := h.run(append([]string{"admin", "create-key", "--project-id", project, "--label", label}, tt.args...)...)
			require.Equal(t, exitOK, r.code, "%s", r)
			assert.Contains(t, r.stderr, "Created "+string(tt.want)+" key ")
			p, err := h.authenticate(strings.TrimSpace(r.stdout))
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Role, "the principal carries the stored role")

			cells := row(t, h.ok("admin", "list-keys", "--project-id", project), " "+label+" ")
			assert.Equal(t, string(tt.want), cells[len(cells)-2], "the ROLE column")
			for _, k := range h.listKeys(project) {
				if k.Label == label {
					assert.Equal(t, string(tt.want), k.Role, "json")
				}
			}

			var out map[string]any
			res := h.ok(append([]string{"--output", "json", "admin", "create-key", "--project-id", project}, tt.args...)...)
			require.NoError(t, json.Unmarshal([]byte(res), &out), res)
			assert.Equal(t, string(tt.want), out["role"])
		})
	}

	r := h.run("admin", "create-key", "--project-id", project, "--role", "owner")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, `--role "owner" is not admin, member or ingest`)
}

func TestProjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	assert.Equal(t, "[]\n", h.ok("--output", "json", "admin", "list-projects"), "no projects is an empty array")
	r := h.run("admin", "list-projects")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "No projects.")

	const chosen = "7d3c1f4e-2b9a-4c8d-9e0f-1a2b3c4d5e6f"
	var made auth.Project
	out := h.ok("--output", "json", "admin", "create-project", "--name", "Chosen", "--id", chosen)
	require.NoError(t, json.Unmarshal([]byte(out), &made), out)
	assert.Equal(t, chosen, made.ID)
	assert.Equal(t, "Chosen", made.Name)
	assert.WithinDuration(t, time.Now(), made.CreatedAt, time.Minute)
	random := strings.TrimSpace(h.ok("--quiet", "admin", "create-project", "--name", "Random"))

	listing := h.ok("admin", "list-projects")
	assert.Equal(t, []string{"ID", "NAME", "CREATED"}, strings.Fields(strings.SplitN(listing, "\n", 2)[0]))
	assert.Equal(t, "Chosen", row(t, listing, chosen)[1])
	assert.Equal(t, "Random", row(t, listing, random)[1])

	var projects []auth.Project
	out = h.ok("admin", "list-projects", "--output", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &projects), out)
	require.Len(t, projects, 2)
	assert.Equal(t, []string{chosen, random}, []string{projects[0].ID, projects[1].ID}, "oldest first")
}

func TestQuiet(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("--quiet", "admin", "create-project", "--name", "q")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Empty(t, r.stderr)
	project := strings.TrimSpace(r.stdout)

	r = h.run("admin", "create-key", "-q", "--project-id", project)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Empty(t, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, auth.KeyPrefix))

	r = h.run("--quiet", "admin", "create-key")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--project-id is required", "errors print even when quiet")
}

func TestTableFlagOverridesEnv(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["TABLE_NAME"] = "plume-no-such-table"
	r := h.run("admin", "list-projects")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, "ResourceNotFoundException")

	h.ok("admin", "list-projects", "--table", h.table)
	h.ok("admin", "--table", h.table, "list-projects")
}

func TestCreateTable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := h.table + "-new"
	t.Cleanup(func() {
		_, _ = h.client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name})
	})

	r := h.run("admin", "create-table", "--table", name)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stderr, "Table "+name+" is ready.")
	desc, err := h.client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err)
	assert.Equal(t, types.TableStatusActive, desc.Table.TableStatus)
	assert.Len(t, desc.Table.GlobalSecondaryIndexes, len(infra.TableDefinition(name).GlobalSecondaryIndexes))

	out := h.ok("--output", "json", "admin", "create-table", "--table", name)
	var body map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &body), out)
	assert.Equal(t, map[string]string{"table": name, "status": "ACTIVE"}, body, "a second run is a no-op")

	// The new table works for the other commands.
	h.env["TABLE_NAME"] = name
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "fresh"))
	h.ok("admin", "create-key", "--project-id", project)
}
