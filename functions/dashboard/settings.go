package dashboard

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
)

// The settings page: the project, its API keys (admins), its model prices and its feedback
// links. Every read and change goes through the REST API in-process (s.api), which checks the
// session key's role: the page only hides what a member may not do.

// settingsRoutes registers the settings page: /ui/settings (keys, model prices, feedback links, project).
func (s *server) settingsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/settings", s.settings)
	mux.HandleFunc("POST /ui/settings/keys", s.issueKey)
	mux.HandleFunc("GET /ui/settings/keys/issued", s.issuedKey)
	mux.HandleFunc("GET /ui/settings/keys/{key_id}/revoke", s.confirmRevokeKey)
	mux.HandleFunc("POST /ui/settings/keys/{key_id}/revoke", s.revokeKey)
	mux.HandleFunc("POST /ui/settings/prices", s.setPrice)
	mux.HandleFunc("GET /ui/settings/prices/delete", s.confirmDeletePrice)
	mux.HandleFunc("POST /ui/settings/prices/delete", s.deletePrice)
	mux.HandleFunc("GET /ui/settings/links/{link_id}/revoke", s.confirmRevokeLink)
	mux.HandleFunc("POST /ui/settings/links/{link_id}/revoke", s.revokeSettingsLink)
}

// issuedCookie carries a new key's id and secret from the POST that issued it to the one page
// that shows it (Post/Redirect/Get), which deletes it: reloading that page shows the secret no
// more, and no secret is ever in a URL or in the server's storage. It lives for minutes, only
// on that page's path, and only shows for a key its session's project lists.
const (
	issuedCookie   = "plume_issued_key"
	issuedPath     = "/ui/settings/keys/issued"
	issuedLifetime = 5 * time.Minute
)

// keyRoles are the roles the issue form offers, the least trusted first.
var keyRoles = []string{string(auth.RoleIngest), string(auth.RoleMember), string(auth.RoleAdmin)}

// keyExpiries are the lifetimes the issue form offers, in days ("" is never).
var keyExpiries = []string{"", "7", "30", "90", "365"}

// issueForm is the issue-a-key form, as sent (kept when it is shown again with an error).
type issueForm struct {
	Role, Name, Email, Expiry string
	Error                     string
}

// priceForm is the set-a-price form, as sent.
type priceForm struct {
	Model, Provider, Input, Output, CachedInput, CacheWrite string
	Error                                                   string
}

// keyRow is a key as the page lists it.
type keyRow struct {
	api.APIKey
	Status string // active, expired or revoked
	Mine   bool   // the session's own key
}

type settingsData struct {
	ProjectID string
	Me        keyInfo
	Admin     bool
	Keys      []keyRow
	Roles     []string
	Expiries  []string
	Issue     issueForm
	Prices    api.ModelPriceList
	Price     priceForm
	Links     []api.Link
}

// keyInfo is the session's key.
type keyInfo struct {
	ID, Role string
	User     auth.User
}

// settings serves GET /ui/settings.
func (s *server) settings(w http.ResponseWriter, r *http.Request) {
	s.settingsPage(w, r, http.StatusOK, issueForm{Role: string(auth.RoleMember)}, priceForm{})
}

// settingsPage renders the settings page with the forms as given.
func (s *server) settingsPage(w http.ResponseWriter, r *http.Request, status int, issue issueForm, price priceForm) {
	sess := sessionOf(r)
	c, ctx := s.api(r)
	d := settingsData{
		ProjectID: sess.ProjectID, Me: keyInfo{ID: sess.KeyID, Role: string(sess.Role), User: sess.User},
		Admin: sess.Role == auth.RoleAdmin, Roles: keyRoles, Expiries: keyExpiries, Issue: issue, Price: price,
	}
	if d.Admin {
		keys, err := c.Keys(ctx)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		now := s.d.Now()
		for _, k := range slices.Backward(keys) { // newest first
			d.Keys = append(d.Keys, keyRow{APIKey: k, Status: keyStatus(k, now), Mine: k.ID == sess.KeyID})
		}
	}
	prices, err := c.ModelPrices(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Prices = prices
	links, err := c.FeedbackLinks(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Links = links.Links
	s.render(w, r, status, "settings", page{Title: "Settings", Nav: "settings", Data: d})
}

// keyStatus is "revoked", "expired" or "active".
func keyStatus(k api.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	}
	return "active"
}

// issueKey serves POST /ui/settings/keys: issues a key and redirects to the one page that shows
// its secret. A refused form is shown again with the API's message and the input kept.
func (s *server) issueKey(w http.ResponseWriter, r *http.Request) {
	form := issueForm{
		Role: r.PostForm.Get("role"), Name: strings.TrimSpace(r.PostForm.Get("name")),
		Email: strings.TrimSpace(r.PostForm.Get("user_email")), Expiry: r.PostForm.Get("expires_in_days"),
	}
	req := api.CreateAPIKeyRequest{Role: form.Role, Name: form.Name, UserEmail: form.Email}
	if form.Expiry != "" {
		if !slices.Contains(keyExpiries, form.Expiry) {
			form.Error = "Choose an expiry from the list."
			s.settingsPage(w, r, http.StatusBadRequest, form, priceForm{})
			return
		}
		days, _ := strconv.Atoi(form.Expiry)
		at := s.d.Now().Add(time.Duration(days) * 24 * time.Hour).UTC()
		req.ExpiresAt = &at
	}
	c, ctx := s.api(r)
	created, err := c.CreateKey(ctx, req)
	if status, msg, ok := formError(err); ok {
		form.Error = msg
		s.settingsPage(w, r, status, form, priceForm{})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: issuedCookie, Value: created.ID + ":" + created.Secret, Path: issuedPath, MaxAge: int(issuedLifetime / time.Second),
		HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, issuedPath, http.StatusSeeOther)
}

type issuedData struct {
	Key    *api.APIKey // nil when there is no secret to show
	Secret string
}

// issuedKey serves GET /ui/settings/keys/issued: the secret of the key just issued, once. The
// cookie that carried it is deleted with this answer.
func (s *server) issuedKey(w http.ResponseWriter, r *http.Request) {
	var d issuedData
	if ck, err := r.Cookie(issuedCookie); err == nil {
		http.SetCookie(w, &http.Cookie{Name: issuedCookie, Path: issuedPath, MaxAge: -1, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode})
		id, secret, _ := strings.Cut(ck.Value, ":")
		if sessionOf(r).Role == auth.RoleAdmin {
			c, ctx := s.api(r)
			keys, err := c.Keys(ctx)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			// Only a key of the session's project, whose secret starts as the key's listed start.
			if i := slices.IndexFunc(keys, func(k api.APIKey) bool { return k.ID == id }); i >= 0 && keys[i].Display != "" && strings.HasPrefix(secret, keys[i].Display) {
				d.Key, d.Secret = &keys[i], secret
			}
		}
	}
	s.render(w, r, http.StatusOK, "settings-issued", page{Title: "New API key", Nav: "settings", Data: d})
}

// confirmData is a confirm step (template confirm): what a change does, and the form that
// makes it.
type confirmData struct {
	Heading  string
	What     []string // lines describing the change
	Warning  string
	Action   string // the form's URL
	Fields   map[string]string
	Button   string
	Cancel   string // the page the change starts from, which the step returns to
	Back     string // the name of that page
	TestID   string
	Disabled bool // nothing to do (already revoked)
}

// revokeLinkStep is the confirm step of revoking feedback link l, posted to action; the
// change starts from the page cancel, named back.
func revokeLinkStep(l api.Link, action, cancel, back string) confirmData {
	d := confirmData{
		Heading: "Revoke a feedback link of " + l.PromptSlug,
		What: []string{
			"Prompt: " + l.PromptSlug, "Created: " + l.CreatedAt.UTC().Format("2006-01-02 15:04 UTC") + createdBy(l.CreatedBy),
			"Expires: " + l.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"),
			"Reviewers who open the link are refused from now on; the feedback already given stays. This cannot be undone: create a new link to share again.",
		},
		Action: action, Button: "Revoke the link", Cancel: cancel, Back: back, TestID: "revoke-confirm",
	}
	if l.Status != api.LinkActive {
		d.Warning, d.Disabled = "This link is "+l.Status+" already: it no longer opens, and revoking it changes nothing.", true
	}
	return d
}

// createdBy is " by <email>" when the link's creator has one.
func createdBy(u api.User) string {
	if u.Email == "" {
		return ""
	}
	return " by " + u.Email
}

// findKey returns the key of the session's project with id, or a not-found error.
func (s *server) findKey(r *http.Request, id string) (api.APIKey, error) {
	if err := validID("API key", id); err != nil {
		return api.APIKey{}, err
	}
	c, ctx := s.api(r)
	keys, err := c.Keys(ctx)
	if err != nil {
		return api.APIKey{}, err
	}
	i := slices.IndexFunc(keys, func(k api.APIKey) bool { return k.ID == id })
	if i < 0 {
		return api.APIKey{}, errs.NotFound("There is no such API key.")
	}
	return keys[i], nil
}

// confirmRevokeKey serves GET /ui/settings/keys/{key_id}/revoke: what revoking the key does.
func (s *server) confirmRevokeKey(w http.ResponseWriter, r *http.Request) {
	k, err := s.findKey(r, r.PathValue("key_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := confirmData{
		Heading: "Revoke API key " + k.Display + "…",
		What: []string{
			"Name: " + cmp.Or(k.Name, "none"), "Role: " + k.Role, "User: " + cmp.Or(k.User.Email, k.User.Name, k.User.ID),
			"Issued: " + k.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
			"Every application and person using this key is refused from now on (other servers within a minute). This cannot be undone.",
		},
		Action: "/ui/settings/keys/" + url.PathEscape(k.ID) + "/revoke", Button: "Revoke key", Cancel: "/ui/settings#keys", Back: "Settings", TestID: "revoke-key",
	}
	if k.ID == sessionOf(r).KeyID {
		d.Warning = "You are signed in with this key: revoking it signs you out."
	}
	if k.RevokedAt != nil {
		d.Warning, d.Disabled = "This key is already revoked.", true
	}
	s.render(w, r, http.StatusOK, "confirm", page{Title: "Revoke API key", Nav: "settings", Data: d})
}

// revokeKey serves POST /ui/settings/keys/{key_id}/revoke. The API refuses the project's last
// admin key (409, shown on the error page).
func (s *server) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("key_id")
	if err := validID("API key", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	if _, err := c.RevokeKey(ctx, id); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/settings#keys", http.StatusSeeOther)
}

// setPrice serves POST /ui/settings/prices: sets the project's price of a model.
func (s *server) setPrice(w http.ResponseWriter, r *http.Request) {
	f := priceForm{
		Model: strings.TrimSpace(r.PostForm.Get("model")), Provider: strings.TrimSpace(r.PostForm.Get("provider")),
		Input: strings.TrimSpace(r.PostForm.Get("input")), Output: strings.TrimSpace(r.PostForm.Get("output")),
		CachedInput: strings.TrimSpace(r.PostForm.Get("cached_input")), CacheWrite: strings.TrimSpace(r.PostForm.Get("cache_write")),
	}
	refuse := func(msg string) {
		f.Error = msg
		s.settingsPage(w, r, http.StatusBadRequest, issueForm{Role: string(auth.RoleMember)}, f)
	}
	if f.Model == "" {
		refuse("Enter the model id, as spans name it.")
		return
	}
	req := api.PutModelPriceRequest{Provider: f.Provider}
	for _, n := range []struct {
		label, v string
		to       **float64
	}{{"Input", f.Input, &req.Input}, {"Output", f.Output, &req.Output}} {
		v, ok := parseNumber(n.v)
		if !ok {
			refuse(n.label + " price must be a number (USD per 1M tokens).")
			return
		}
		*n.to = &v
	}
	for _, n := range []struct {
		label, v string
		to       *float64
	}{{"Cached input", f.CachedInput, &req.CachedInput}, {"Cache write", f.CacheWrite, &req.CacheWrite}} {
		if n.v == "" {
			continue
		}
		v, ok := parseNumber(n.v)
		if !ok {
			refuse(n.label + " price must be a number (USD per 1M tokens).")
			return
		}
		*n.to = v
	}
	c, ctx := s.api(r)
	_, err := c.SetModelPrice(ctx, f.Model, req)
	if status, msg, ok := formError(err); ok {
		f.Error = msg
		s.settingsPage(w, r, status, issueForm{Role: string(auth.RoleMember)}, f)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/settings#prices", http.StatusSeeOther)
}

// confirmDeletePrice serves GET /ui/settings/prices/delete?model=...: what deleting the price
// does. Model ids hold slashes, so the model is a parameter rather than a path segment.
func (s *server) confirmDeletePrice(w http.ResponseWriter, r *http.Request) {
	model := r.URL.Query().Get("model")
	c, ctx := s.api(r)
	prices, err := c.ModelPrices(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(prices.Overrides, func(p api.ModelPrice) bool { return p.Model == model })
	if model == "" || i < 0 {
		s.fail(w, r, errs.NotFound("The project has no price of its own for this model."))
		return
	}
	p := prices.Overrides[i]
	d := confirmData{
		Heading: "Delete the price of " + p.Model,
		What: []string{
			"Input: $" + strconv.FormatFloat(p.Input, 'g', -1, 64) + " per 1M tokens; output: $" + strconv.FormatFloat(p.Output, 'g', -1, 64) + " per 1M tokens.",
			"Spans ingested from now on are priced with the shipped price table (or not at all when it does not know the model). Spans already stored keep their cost.",
		},
		Action: "/ui/settings/prices/delete", Fields: map[string]string{"model": p.Model}, Button: "Delete price", Cancel: "/ui/settings#prices", Back: "Settings", TestID: "delete-price",
	}
	s.render(w, r, http.StatusOK, "confirm", page{Title: "Delete model price", Nav: "settings", Data: d})
}

// deletePrice serves POST /ui/settings/prices/delete.
func (s *server) deletePrice(w http.ResponseWriter, r *http.Request) {
	model := r.PostForm.Get("model")
	if model == "" {
		s.fail(w, r, errs.Invalid("Choose the model whose price to delete."))
		return
	}
	c, ctx := s.api(r)
	if _, err := c.DeleteModelPrice(ctx, model); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/settings#prices", http.StatusSeeOther)
}

// confirmRevokeLink serves GET /ui/settings/links/{link_id}/revoke: what revoking the feedback
// link does.
func (s *server) confirmRevokeLink(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("link_id")
	if err := validID("feedback link", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	links, err := c.FeedbackLinks(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(links.Links, func(l api.Link) bool { return l.ID == id })
	if i < 0 {
		s.fail(w, r, errs.NotFound("There is no such feedback link."))
		return
	}
	l := links.Links[i]
	d := revokeLinkStep(l, "/ui/settings/links/"+url.PathEscape(l.ID)+"/revoke", "/ui/settings#links", "Settings")
	s.render(w, r, http.StatusOK, "confirm", page{Title: "Revoke feedback link", Nav: "settings", Data: d})
}

// revokeSettingsLink serves POST /ui/settings/links/{link_id}/revoke.
func (s *server) revokeSettingsLink(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("link_id")
	if err := validID("feedback link", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	if _, err := c.RevokeFeedbackLink(ctx, id); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/settings#links", http.StatusSeeOther)
}
