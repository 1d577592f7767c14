package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
)

// terminal runs `keys <args>` against the API as tenant A with stdin a terminal holding
// answer, and returns stdout, stderr and the error.
type terminal struct{ env map[string]string }

func (tt terminal) run(answer string, args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	f := cmdutil.New(func(k string) string { return tt.env[k] }, &stdout, &stderr)
	f.IO.In = strings.NewReader(answer)
	cmd := newCmdKeys(f, func() bool { return true })
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

// TestRevokeAsksOnATerminal: on a terminal, revoke shows the key and asks; only y or yes
// revokes, and an unknown key is not found before anything is asked.
func TestRevokeAsksOnATerminal(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	tt := terminal{env: map[string]string{
		"PLUME_BASE_URL": srv.URL, "PLUME_API_KEY": a.A.Key, "PLUME_PROJECT_ID": a.A.ProjectID, "XDG_CONFIG_HOME": t.TempDir(),
	}}
	var created api.CreatedAPIKey
	out, _, err := tt.run("", "create", "--role", "member", "--name", "laptop", "--email", "ana@example.com")
	require.NoError(t, err)
	secret := strings.TrimSpace(out)
	require.True(t, strings.HasPrefix(secret, "plm_"), "%q", out)
	status := func() string {
		var list api.APIKeyList
		require.NoError(t, json.Unmarshal(a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/api-keys", a.A.Key, nil).Body, &list))
		for _, k := range list.Keys {
			if k.Name == "laptop" {
				created.APIKey = k
			}
		}
		require.NotEmpty(t, created.ID)
		return view(created.APIKey, time.Now()).Status
	}
	require.Equal(t, statusActive, status())

	for _, answer := range []string{"", "n\n", "no\n", "maybe\n"} {
		out, stderr, err := tt.run(answer, "revoke", created.ID)
		require.Error(t, err, "answer %q", answer)
		assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
		assert.Contains(t, err.Error(), "not revoked")
		assert.Empty(t, out)
		assert.Contains(t, stderr, "This revokes the member key "+created.ID+" ("+created.Display+", \"laptop\", of ana@example.com, active)")
		assert.Contains(t, stderr, "Revoke? [y/N] ")
		assert.Equal(t, statusActive, status(), "answer %q revokes nothing", answer)
	}

	_, stderr, err := tt.run("n\n", "revoke", "0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f")
	require.Error(t, err)
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
	assert.NotContains(t, stderr, "Revoke?", "an unknown key is not asked about")

	out, stderr, err = tt.run("Yes\n", "revoke", created.ID)
	require.NoError(t, err)
	assert.Contains(t, stderr, "Revoke? [y/N] ")
	assert.Regexp(t, `Status:\s+revoked`, out)
	assert.Equal(t, statusRevoked, status())
	assert.NotEqual(t, 200, a.Do(t, "GET", "/projects/"+a.A.ProjectID+"/api-keys", secret, nil).Status, "the revoked key is refused")
}
