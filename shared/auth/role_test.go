package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/errs"
)

func TestParseRole(t *testing.T) {
	tests := []struct {
		in   string
		want Role
		ok   bool
	}{
		{"", RoleAdmin, true},
		{"admin", RoleAdmin, true},
		{"member", RoleMember, true},
		{"ingest", RoleIngest, true},
		{"Admin", "", false},
		{"owner", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRole(tt.in)
			if !tt.ok {
				assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
				assert.ErrorContains(t, err, "admin, member or ingest")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNewKeyRole(t *testing.T) {
	now := time.Now()
	_, k, err := NewKey(KeySpec{ProjectID: project}, now)
	require.NoError(t, err)
	assert.Equal(t, RoleAdmin, k.Role, "a key issued without a role is an admin key, as before roles")
	_, k, err = NewKey(KeySpec{ProjectID: project, Role: RoleIngest}, now)
	require.NoError(t, err)
	assert.Equal(t, RoleIngest, k.Role)
	_, _, err = NewKey(KeySpec{ProjectID: project, Role: "root"}, now)
	assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
}

func TestAccessAllows(t *testing.T) {
	tests := []struct {
		access Access
		want   map[Role]bool
		names  string
	}{
		{Members, map[Role]bool{RoleAdmin: true, RoleMember: true, RoleIngest: false, "": false, "owner": false}, "admin or member"},
		{AllowIngest, map[Role]bool{RoleAdmin: true, RoleMember: true, RoleIngest: true, "": false, "owner": false}, "admin, member or ingest"},
		{AdminOnly, map[Role]bool{RoleAdmin: true, RoleMember: false, RoleIngest: false, "": false, "owner": false}, "admin"},
	}
	for _, tt := range tests {
		t.Run(tt.names, func(t *testing.T) {
			assert.Equal(t, tt.names, tt.access.String())
			for role, want := range tt.want {
				assert.Equal(t, want, tt.access.Allows(role), "role %q", role)
				err := tt.access.Check(Principal{ProjectID: project, Role: role})
				if want {
					assert.NoError(t, err)
					continue
				}
				assert.Equal(t, errs.CodeForbidden, errs.CodeOf(err), "role %q", role)
				assert.ErrorContains(t, err, "needs an API key with the "+tt.names+" role")
			}
		})
	}
}

// roleKeys is a KeyFinder of one key per role, plus one stored before roles (no role).
type roleKeys map[string]Key // by hash

func (k roleKeys) KeyByHash(_ context.Context, hash string) (Key, error) {
	key, ok := k[hash]
	if !ok {
		return Key{}, errs.NotFound("key not found")
	}
	return key, nil
}

func newRoleKeys() (roleKeys, map[string]string) {
	keys, secrets := roleKeys{}, map[string]string{} // secrets by role name, "legacy" for none
	for _, name := range []string{"admin", "member", "ingest", "legacy"} {
		secret := NewSecret()
		role := Role(name)
		if name == "legacy" {
			role = ""
		}
		keys[HashKey(secret)] = Key{ID: name, ProjectID: project, Display: secret[:12], Role: role}
		secrets[name] = secret
	}
	return keys, secrets
}

func TestAuthenticateRole(t *testing.T) {
	keys, secrets := newRoleKeys()
	a := NewAuthenticator(keys, 0)
	for name, want := range map[string]Role{"admin": RoleAdmin, "member": RoleMember, "ingest": RoleIngest, "legacy": RoleAdmin} {
		p, err := a.Authenticate(context.Background(), "Bearer "+secrets[name])
		require.NoError(t, err)
		assert.Equal(t, want, p.Role, name)
	}
}

// TestRouterRoles registers a route of each access, and one of each on a project-scoped path,
// and calls every one with a key of every role: a refused role is 403 forbidden naming the
// roles the route needs, before the handler and before the project check.
func TestRouterRoles(t *testing.T) {
	keys, secrets := newRoleKeys()
	rt := NewRouter(NewAuthenticator(keys, 0))
	reached := map[string]bool{}
	handler := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			reached[name] = true
			w.WriteHeader(http.StatusNoContent)
		}
	}
	rt.HandleFunc("GET /default", handler("default"))
	rt.HandleFunc("POST /ingest", handler("ingest"), AllowIngest)
	rt.HandleFunc("POST /keys", handler("keys"), AdminOnly)
	rt.Handle("GET /members", handler("members"), Members)
	rt.HandleFunc("GET /projects/{project_id}/things", handler("scoped"))
	rt.HandleOpen("GET /open", handler("open"))

	assert.Equal(t, []Route{
		{Pattern: "GET /default", Access: Members},
		{Pattern: "POST /ingest", Access: AllowIngest},
		{Pattern: "POST /keys", Access: AdminOnly},
		{Pattern: "GET /members", Access: Members},
		{Pattern: "GET /projects/{project_id}/things", Access: Members},
		{Pattern: "GET /open", Open: true},
	}, rt.Routes())

	allowed := map[string][]string{ // route -> the keys it lets through
		"GET /default":                         {"admin", "member", "legacy"},
		"POST /ingest":                         {"admin", "member", "ingest", "legacy"},
		"POST /keys":                           {"admin", "legacy"},
		"GET /members":                         {"admin", "member", "legacy"},
		"GET /projects/" + project + "/things": {"admin", "member", "legacy"},
		"GET /open":                            {"admin", "member", "ingest", "legacy"},
	}
	for route, ok := range allowed {
		for _, key := range []string{"admin", "member", "ingest", "legacy"} {
			t.Run(route+" "+key, func(t *testing.T) {
				clear(reached)
				method, path, _ := strings.Cut(route, " ")
				req := httptest.NewRequest(method, path, nil)
				req.Header.Set("Authorization", "Bearer "+secrets[key])
				rec := httptest.NewRecorder()
				rt.ServeHTTP(rec, req)
				if slices.Contains(ok, key) {
					assert.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
					assert.Len(t, reached, 1)
					return
				}
				assert.Equal(t, http.StatusForbidden, rec.Code)
				assert.Empty(t, reached, "the handler must not run")
				var body struct {
					Error struct{ Code, Message string }
				}
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
				assert.Equal(t, "forbidden", body.Error.Code)
				assert.Contains(t, body.Error.Message, "role")
				assert.Contains(t, body.Error.Message, "this key's role is "+key)
			})
		}
	}

	// A refused role is refused before the project check: the message is the role's.
	req := httptest.NewRequest("GET", "/projects/9f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10/things", nil)
	req.Header.Set("Authorization", "Bearer "+secrets["ingest"])
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, rec.Body.String(), "admin or member role")
}

func TestRouterAccessMisuse(t *testing.T) {
	rt := NewRouter(NewAuthenticator(roleKeys{}, 0))
	assert.Panics(t, func() { rt.HandleFunc("GET /two", http.NotFound, AllowIngest, AdminOnly) })
	assert.Panics(t, func() { rt.HandleFunc("GET /unknown", http.NotFound, Access(9)) })
}

// TestDelegate: a request made in-process on behalf of a principal needs no Authorization
// header, and the Router checks that principal's role and project as it checks a key's.
func TestDelegate(t *testing.T) {
	authn := NewAuthenticator(roleKeys{}, 0)
	rt := NewRouter(authn)
	ok := func(w http.ResponseWriter, r *http.Request) {
		p, _ := FromContext(r.Context())
		_, _ = w.Write([]byte(p.KeyID))
	}
	rt.HandleFunc("GET /projects/{project_id}/things", ok)
	rt.HandleFunc("GET /keys", ok, AdminOnly)
	other := "0b7e3f0c-54a1-4c55-9d7e-0f3c8d2b6a11"
	tests := []struct {
		name   string
		p      *Principal
		path   string
		status int
	}{
		{"member reads its project", &Principal{ProjectID: project, KeyID: "k1", Role: RoleMember}, "/projects/" + project + "/things", http.StatusOK},
		{"another project", &Principal{ProjectID: project, KeyID: "k1", Role: RoleMember}, "/projects/" + other + "/things", http.StatusForbidden},
		{"ingest refused", &Principal{ProjectID: project, KeyID: "k1", Role: RoleIngest}, "/projects/" + project + "/things", http.StatusForbidden},
		{"member on an admin route", &Principal{ProjectID: project, KeyID: "k1", Role: RoleMember}, "/keys", http.StatusForbidden},
		{"admin on an admin route", &Principal{ProjectID: project, KeyID: "k1", Role: RoleAdmin}, "/keys", http.StatusOK},
		{"no principal, no key", nil, "/projects/" + project + "/things", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.path, nil)
			if tt.p != nil {
				r = r.WithContext(authn.Delegate(r.Context(), *tt.p))
			}
			w := httptest.NewRecorder()
			rt.ServeHTTP(w, r)
			assert.Equal(t, tt.status, w.Code, w.Body.String())
			if tt.status == http.StatusOK {
				assert.Equal(t, "k1", w.Body.String())
			}
		})
	}

	t.Run("made by another Authenticator", func(t *testing.T) {
		admin := Principal{ProjectID: project, KeyID: "k1", Role: RoleAdmin}
		r := httptest.NewRequest(http.MethodGet, "/keys", nil)
		r = r.WithContext(NewAuthenticator(roleKeys{}, 0).Delegate(r.Context(), admin))
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, r)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "only the Router's own Authenticator delegates")
	})
}

// gatedKeys answers KeyByHash once release is closed (saying on started that a read began, the
// first time), counting the reads.
type gatedKeys struct {
	key      Key
	started  chan struct{}
	release  chan struct{}
	reads    *int
	announce *sync.Once
}

func (g gatedKeys) KeyByHash(context.Context, string) (Key, error) {
	g.announce.Do(func() { close(g.started) })
	<-g.release
	*g.reads++
	return g.key, nil
}

// TestForgetDuringLookup: a key read while Forget runs is not cached (it may be the key just
// revoked), and Key reads through the same cache as Authenticate.
func TestForgetDuringLookup(t *testing.T) {
	reads := 0
	g := gatedKeys{key: Key{ID: "k", ProjectID: project, Role: RoleAdmin}, started: make(chan struct{}),
		release: make(chan struct{}), reads: &reads, announce: &sync.Once{}}
	a := NewAuthenticator(g, time.Minute)
	done := make(chan error)
	go func() {
		_, err := a.Key(context.Background(), "h")
		done <- err
	}()
	<-g.started
	a.Forget("h") // revoked while the read is in flight
	close(g.release)
	require.NoError(t, <-done)
	for range 2 {
		_, err := a.Key(context.Background(), "h")
		require.NoError(t, err)
	}
	assert.Equal(t, 2, reads, "the read in flight at Forget was not cached; the next one was")
}
