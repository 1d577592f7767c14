package settings

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/auth"
)

// issue issues a key of role in project pid straight into the store.
func (f *fixture) issue(t *testing.T, pid string, role auth.Role) (string, auth.Key) {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: pid, User: auth.User{ID: "u-" + string(role)}, Role: role}, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.keys.CreateKey(context.Background(), k))
	return secret, k
}

// issueExpired issues a key of role in project pid that expired an hour ago.
func (f *fixture) issueExpired(t *testing.T, pid string, role auth.Role) auth.Key {
	t.Helper()
	then := time.Now().Add(-2 * time.Hour)
	expires := then.Add(time.Hour)
	_, k, err := auth.NewKey(auth.KeySpec{ProjectID: pid, User: auth.User{ID: "u-expired"}, Role: role, ExpiresAt: &expires}, then)
	require.NoError(t, err)
	require.NoError(t, f.keys.CreateKey(context.Background(), k))
	return k
}

func keysOf(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	raw, ok := body["keys"].([]any)
	require.True(t, ok, "%v", body)
	out := make([]map[string]any, len(raw))
	for i, k := range raw {
		out[i] = k.(map[string]any)
	}
	return out
}

// TestAPIKeys: an admin key issues a key (the secret in the create answer only), the key works,
// the list shows it without secret or hash, revoking it is idempotent and the key is refused
// at once in this process.
func TestAPIKeys(t *testing.T) {
	f := newFixture(t)
	base := "/projects/" + f.a.pid + "/api-keys"
	expires := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)

	status, created := f.do(t, "POST", base, f.a.key, map[string]any{
		"role": "member", "name": "CI <script>", "user_email": "ci@example.com", "expires_at": expires,
		"secret": "plm_chosen0123456789abcdefghij", // not a field: a caller cannot choose a secret
	})
	require.Equal(t, http.StatusOK, status, "%v", created)
	secret, _ := created["secret"].(string)
	require.True(t, strings.HasPrefix(secret, auth.KeyPrefix), "%v", created)
	assert.NotEqual(t, "plm_chosen0123456789abcdefghij", secret)
	id := created["id"].(string)
	assert.Equal(t, "member", created["role"])
	assert.Equal(t, "CI <script>", created["name"])
	assert.Equal(t, secret[:len(created["display"].(string))], created["display"])
	assert.Equal(t, "ci@example.com", created["user"].(map[string]any)["email"])
	assert.Equal(t, expires.Format(time.RFC3339), created["expires_at"])

	status, body := f.do(t, "GET", "/projects/"+f.a.pid+"/model-prices", secret, nil)
	assert.Equal(t, http.StatusOK, status, "the new member key works: %v", body)
	status, _ = f.do(t, "GET", base, secret, nil)
	assert.Equal(t, http.StatusForbidden, status, "a member key does not manage keys")

	status, body = f.do(t, "GET", base, f.a.key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	list := keysOf(t, body)
	require.Len(t, list, 2)
	assert.Equal(t, id, list[1]["id"], "oldest first")
	for _, k := range list {
		assert.NotContains(t, k, "secret")
		assert.NotContains(t, k, "hash")
	}
	status, body = f.do(t, "GET", base, f.a.key, nil)
	assert.NotContains(t, strings.Join(keyStrings(body), " "), secret[len(auth.KeyPrefix)+8:], "the secret is never listed")
	assert.NotContains(t, strings.Join(keyStrings(body), " "), auth.HashKey(secret))

	status, revoked := f.do(t, "DELETE", base+"/"+id, f.a.key, nil)
	require.Equal(t, http.StatusOK, status, "%v", revoked)
	assert.NotEmpty(t, revoked["revoked_at"])
	assert.NotContains(t, revoked, "secret")
	status, again := f.do(t, "DELETE", base+"/"+id, f.a.key, nil)
	require.Equal(t, http.StatusOK, status, "revoking is idempotent: %v", again)
	assert.Equal(t, revoked["revoked_at"], again["revoked_at"])

	status, _ = f.do(t, "GET", "/projects/"+f.a.pid+"/model-prices", secret, nil)
	assert.Equal(t, http.StatusUnauthorized, status, "a revoked key is refused at once")
	status, body = f.do(t, "GET", base, f.a.key, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, keysOf(t, body), 2, "a revoked key stays listed")
}

// keyStrings flattens an answer's string values.
func keyStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case map[string]any:
		var out []string
		for _, x := range v {
			out = append(out, keyStrings(x)...)
		}
		return out
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, keyStrings(x)...)
		}
		return out
	}
	return nil
}

// TestAPIKeysLastAdmin: the project's last usable admin key cannot be revoked, by itself or
// otherwise; once another admin key exists, a key may revoke itself.
func TestAPIKeysLastAdmin(t *testing.T) {
	f := newFixture(t)
	base := "/projects/" + f.a.pid + "/api-keys/"
	var first string
	status, body := f.do(t, "GET", "/projects/"+f.a.pid+"/api-keys", f.a.key, nil)
	require.Equal(t, http.StatusOK, status)
	first = keysOf(t, body)[0]["id"].(string)

	status, body = f.do(t, "DELETE", base+first, f.a.key, nil)
	assert.Equal(t, http.StatusConflict, status, "%v", body)
	assert.Contains(t, body["error"].(map[string]any)["message"], "last usable admin key")

	// A revoked or expired admin key does not count, nor one that expires within the hour.
	_, old := f.issue(t, f.a.pid, auth.RoleAdmin)
	_, err := f.keys.RevokeKey(context.Background(), f.a.pid, old.ID, time.Now())
	require.NoError(t, err)
	expired := f.issueExpired(t, f.a.pid, auth.RoleAdmin)
	soon := time.Now().Add(10 * time.Minute)
	_, expiring, err := auth.NewKey(auth.KeySpec{ProjectID: f.a.pid, User: auth.User{ID: "u-soon"}, Role: auth.RoleAdmin, ExpiresAt: &soon}, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.keys.CreateKey(context.Background(), expiring))
	status, body = f.do(t, "DELETE", base+first, f.a.key, nil)
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, body["error"].(map[string]any)["message"], "another must stay usable for at least an hour")

	// Keys other than the last usable admin key are revoked as ever: a member key, an expired
	// admin key, a revoked one again.
	_, member := f.issue(t, f.a.pid, auth.RoleMember)
	for _, id := range []string{member.ID, expired.ID, old.ID, expiring.ID} {
		status, body = f.do(t, "DELETE", base+id, f.a.key, nil)
		assert.Equal(t, http.StatusOK, status, "%s: %v", id, body)
		assert.NotEmpty(t, body["revoked_at"], id)
	}

	second, k2 := f.issue(t, f.a.pid, auth.RoleAdmin)
	status, body = f.do(t, "DELETE", base+first, f.a.key, nil)
	require.Equal(t, http.StatusOK, status, "a key may revoke itself while another admin key remains: %v", body)
	status, _ = f.do(t, "GET", "/projects/"+f.a.pid+"/api-keys", f.a.key, nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	status, _ = f.do(t, "DELETE", base+k2.ID, second, nil)
	assert.Equal(t, http.StatusConflict, status, "now the last one")
}

// TestAPIKeysRefused: roles, tenancy and bad input, with nothing stored.
func TestAPIKeysRefused(t *testing.T) {
	f := newFixture(t)
	member, _ := f.issue(t, f.a.pid, auth.RoleMember)
	ingest, _ := f.issue(t, f.a.pid, auth.RoleIngest)
	_, bKey := f.issue(t, f.b.pid, auth.RoleMember)
	a, b := "/projects/"+f.a.pid+"/api-keys", "/projects/"+f.b.pid+"/api-keys"
	tests := []struct {
		name, method, path, key string
		body                    any
		status                  int
	}{
		{"member lists", "GET", a, member, nil, 403},
		{"member creates", "POST", a, member, map[string]any{"role": "admin"}, 403},
		{"member revokes", "DELETE", a + "/" + bKey.ID, member, nil, 403},
		{"ingest lists", "GET", a, ingest, nil, 403},
		{"ingest creates", "POST", a, ingest, map[string]any{"role": "ingest"}, 403},
		{"other project: list", "GET", b, f.a.key, nil, 403},
		{"other project: create", "POST", b, f.a.key, map[string]any{"role": "admin"}, 403},
		{"other project: revoke", "DELETE", b + "/" + bKey.ID, f.a.key, nil, 403},
		{"other project's key through own path", "DELETE", a + "/" + bKey.ID, f.a.key, nil, 404},
		{"unknown key", "DELETE", a + "/00000000-0000-4000-8000-000000000000", f.a.key, nil, 404},
		{"malformed key id", "DELETE", a + "/nope", f.a.key, nil, 404},
		{"bad role", "POST", a, f.a.key, map[string]any{"role": "owner"}, 400},
		{"no role", "POST", a, f.a.key, map[string]any{"name": "x"}, 400},
		{"bad email", "POST", a, f.a.key, map[string]any{"role": "member", "user_email": "nope"}, 400},
		{"long name", "POST", a, f.a.key, map[string]any{"role": "member", "name": strings.Repeat("n", 101)}, 400},
		{"control character", "POST", a, f.a.key, map[string]any{"role": "member", "name": "a\x01b"}, 400},
		{"past expiry", "POST", a, f.a.key, map[string]any{"role": "member", "expires_at": time.Now().Add(-time.Hour)}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.method, tt.path, tt.key, tt.body)
			assert.Equal(t, tt.status, status, "%v", body)
			assert.Contains(t, body, "error")
			assert.NotContains(t, body, "secret")
		})
	}
	for pid, want := range map[string]int{f.a.pid: 3, f.b.pid: 2} {
		list, err := f.keys.Keys(context.Background(), pid)
		require.NoError(t, err)
		assert.Len(t, list, want, "no key issued in %s", pid)
		for _, k := range list {
			assert.Nil(t, k.RevokedAt, "no key revoked")
		}
	}
}

// TestAPIKeysRevokeConcurrently: two admins revoke the project's last two usable admin keys at
// the same moment, each their own key while the other's remains: exactly one succeeds, the
// other gets 409, and the project keeps one usable admin key. An expired admin key does not
// count. Twenty rounds, each with two fresh keys.
func TestAPIKeysRevokeConcurrently(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	base := "/projects/" + f.a.pid + "/api-keys/"
	f.issueExpired(t, f.a.pid, auth.RoleAdmin)
	usableAdmins := func() []string {
		list, err := f.keys.Keys(ctx, f.a.pid)
		require.NoError(t, err)
		var ids []string
		for _, k := range list {
			if k.Role == auth.RoleAdmin && k.Usable(time.Now()) == nil {
				ids = append(ids, k.ID)
			}
		}
		return ids
	}
	for round := range 20 {
		var secrets [2]string
		var keys [2]auth.Key
		for i := range keys {
			secrets[i], keys[i] = f.issue(t, f.a.pid, auth.RoleAdmin)
		}
		for _, id := range usableAdmins() { // the last round's survivor, unguarded
			if id != keys[0].ID && id != keys[1].ID {
				_, err := f.keys.RevokeKey(ctx, f.a.pid, id, time.Now())
				require.NoError(t, err)
			}
		}
		require.Len(t, usableAdmins(), 2)

		var statuses [2]int
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i], _ = f.do(t, "DELETE", base+keys[i].ID, secrets[i], nil)
			}()
		}
		close(start)
		wg.Wait()

		assert.ElementsMatch(t, []int{http.StatusOK, http.StatusConflict}, statuses[:], "round %d", round)
		left := usableAdmins()
		require.Len(t, left, 1, "round %d: the project keeps exactly one usable admin key", round)
		assert.Contains(t, []string{keys[0].ID, keys[1].ID}, left[0])
	}
}

// TestAPIKeysRevokeRequests: revoking a key is two DynamoDB requests, the listing and one
// transaction, whether it is an admin key (guarded) or not; revoking a revoked key is the
// listing only.
func TestAPIKeysRevokeRequests(t *testing.T) {
	f := newFixture(t)
	base := "/projects/" + f.a.pid + "/api-keys/"
	_, admin := f.issue(t, f.a.pid, auth.RoleAdmin)
	_, member := f.issue(t, f.a.pid, auth.RoleMember)
	status, _ := f.do(t, "GET", base[:len(base)-1], f.a.key, nil) // the caller's key is cached now
	require.Equal(t, http.StatusOK, status)
	tests := []struct {
		name, id string
		want     map[string]int
	}{
		{"member key", member.ID, map[string]int{"Query": 1, "TransactWriteItems": 1}},
		{"admin key, another remains", admin.ID, map[string]int{"Query": 1, "TransactWriteItems": 1}},
		{"revoked key", admin.ID, map[string]int{"Query": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.ddb.Reset()
			status, body := f.do(t, "DELETE", base+tt.id, f.a.key, nil)
			require.Equal(t, http.StatusOK, status, "%v", body)
			assert.Equal(t, tt.want, f.ddb.Counts())
		})
	}
}
