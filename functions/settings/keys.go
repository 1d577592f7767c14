package settings

import (
	"cmp"
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// Keys stores a project's API keys (shared/ddb AuthStore).
type Keys interface {
	// CreateKey stores a new key; errs.CodeNotFound when its project does not exist.
	CreateKey(ctx context.Context, k auth.Key) error
	// Keys lists the keys of a project, revoked and expired ones included.
	Keys(ctx context.Context, projectID string) ([]auth.Key, error)
	// RevokeKeyKeeping marks k, unrevoked as Keys listed it, revoked at `at` in one
	// transaction that also checks that the project's key keepID is still not revoked (no
	// check when keepID is empty); errs.CodeConflict when k or keepID changed since the
	// listing or a concurrent write touched them: list again and decide again.
	RevokeKeyKeeping(ctx context.Context, k auth.Key, keepID string, at time.Time) (auth.Key, error)
}

// revokeAttempts bounds how often revokeKey lists the keys and tries again after a concurrent
// change to the key or to the admin key it keeps.
const revokeAttempts = 3

// Bounds of the free-text fields of a new key.
const (
	maxKeyNameLen  = 100
	maxUserNameLen = 100
	maxEmailLen    = 254
)

// toAPIKey is the API form of a key: never its secret nor its hash.
func toAPIKey(k auth.Key) api.APIKey {
	return api.APIKey{
		ID: k.ID, Name: k.Label, Role: string(k.Role), Display: k.Display,
		User:      api.User{ID: k.User.ID, Email: k.User.Email, Name: k.User.Name},
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
}

// listKeys serves GET /projects/{project_id}/api-keys (admin keys only): every key of the
// project, oldest first, as many as fit one answer from ?offset= (web.List).
func (s *server) listKeys(w http.ResponseWriter, r *http.Request) {
	list, err := s.keys.Keys(r.Context(), auth.ProjectID(r))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	slices.SortFunc(list, func(a, b auth.Key) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	keys := make([]api.APIKey, len(list))
	for i, k := range list {
		keys[i] = toAPIKey(k)
	}
	web.List(w, r, keys, func(keys []api.APIKey) any { return api.APIKeyList{Keys: keys} })
}

// createKey serves POST /projects/{project_id}/api-keys (admin keys only): issues a key of the
// caller's project and answers 200 with its secret, the only time the secret is ever sent.
func (s *server) createKey(w http.ResponseWriter, r *http.Request) {
	var req api.CreateAPIKeyRequest
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	if req.Role == "" {
		web.Error(w, r, errs.Invalid("role is required: admin, member or ingest"))
		return
	}
	for _, f := range []struct {
		name, value string
		max         int
	}{{"name", req.Name, maxKeyNameLen}, {"user_name", req.UserName, maxUserNameLen}, {"user_email", req.UserEmail, maxEmailLen}} {
		if err := checkText(f.name, f.value, f.max); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	secret, k, err := auth.NewKey(auth.KeySpec{
		ProjectID: auth.ProjectID(r), Role: auth.Role(req.Role), Label: req.Name,
		User: auth.User{Email: req.UserEmail, Name: req.UserName}, ExpiresAt: req.ExpiresAt,
	}, s.now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.keys.CreateKey(r.Context(), k); err != nil {
		web.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.OK(w, api.CreatedAPIKey{APIKey: toAPIKey(k), Secret: secret}) // 200, as every create of the API (spec)
}

// revokeKey serves DELETE /projects/{project_id}/api-keys/{key_id} (admin keys only): the key
// stops authenticating (in this process at once, in others within their key cache's lifetime)
// and stays listed with its revoked_at. Revoking a revoked key answers it unchanged. A key may
// revoke itself, but the project's last usable admin key may not be revoked (409): a project
// without one could no longer manage its keys.
//
// The guard is atomic: revoking a usable admin key is one transaction that also checks that
// another usable admin key of the project, picked from the listing, is still not revoked, so of
// two admins revoking the last two admin keys at once one gets the 409. Two requests: the
// listing (Query) and the transaction; a revoked key costs the Query only. A transaction lost
// to a concurrent change lists again and decides again, at most revokeAttempts times.
func (s *server) revokeKey(w http.ResponseWriter, r *http.Request) {
	ctx, pid, id := r.Context(), auth.ProjectID(r), r.PathValue("key_id")
	for attempt := 1; ; attempt++ {
		list, err := s.keys.Keys(ctx, pid)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		now := s.now()
		i := slices.IndexFunc(list, func(k auth.Key) bool { return k.ID == id })
		if i < 0 {
			web.Error(w, r, errs.NotFound("API key %s not found", id))
			return
		}
		k := list[i]
		if k.RevokedAt != nil {
			web.OK(w, toAPIKey(k))
			return
		}
		var keep string
		if isUsableAdmin(k, now) {
			if keep = keeper(list, id, now); keep == "" {
				web.Error(w, r, errs.Conflict("API key %s is the project's last usable admin key (another must stay usable for at "+
					"least an hour): issue another admin key before revoking it", k.Display))
				return
			}
		}
		k, err = s.keys.RevokeKeyKeeping(ctx, k, keep, now)
		if errs.Is(err, errs.CodeConflict) && attempt < revokeAttempts {
			// Another request changed these keys: wait a random moment, so that two requests
			// that collided do not collide again in step, then look again.
			if err := sleep(ctx, rand.N(20*time.Millisecond)); err != nil {
				web.Error(w, r, err)
				return
			}
			continue
		}
		if err != nil {
			web.Error(w, r, err)
			return
		}
		s.authn.Forget(k.Hash)
		web.OK(w, toAPIKey(k))
		return
	}
}

// keeperMargin is how long past the revocation the admin key kept must stay usable (the
// conflict's message says an hour): a key that expires minutes later would leave the project
// without an admin as surely.
const keeperMargin = time.Hour

// keeper picks the admin key other than id that stays usable longest (one without expiry
// first), or "" when none stays usable for keeperMargin from now.
func keeper(list []auth.Key, id string, now time.Time) string {
	var best *auth.Key
	for i, k := range list {
		if k.ID == id || !isUsableAdmin(k, now.Add(keeperMargin)) {
			continue
		}
		if best == nil || (best.ExpiresAt != nil && (k.ExpiresAt == nil || k.ExpiresAt.After(*best.ExpiresAt))) {
			best = &list[i]
		}
	}
	if best == nil {
		return ""
	}
	return best.ID
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isUsableAdmin reports whether k is an admin key that authenticates at now.
func isUsableAdmin(k auth.Key, now time.Time) bool {
	return k.Role == auth.RoleAdmin && k.Usable(now) == nil
}

// checkText refuses a field longer than max characters or holding control characters.
func checkText(field, v string, max int) error {
	if utf8.RuneCountInString(v) > max || !utf8.ValidString(v) {
		return errs.Invalid("%s must be at most %d characters", field, max)
	}
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return errs.Invalid("%s must not hold control characters", field)
		}
	}
	return nil
}
