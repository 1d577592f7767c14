package dashboard

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
)

// Session cookies and their lifetimes.
const (
	sessionCookie = "plume_session"
	// loginCookie carries the sign-in form's CSRF token (double submit): a session does not
	// exist yet, and a forged sign-in would put a victim in the attacker's project.
	loginCookie     = "plume_login"
	sessionLifetime = 12 * time.Hour
	loginLifetime   = time.Hour
	cookiePath      = "/ui"
	// maxFormBytes bounds a form body: the largest forms carry a prompt or a judge template.
	maxFormBytes = 256 << 10
)

// session is a signed-in session as a handler sees it.
type session struct {
	auth.WebSession
	idHash string
	// Role is the role of the session's key as it is now (a key's role never changes, but
	// its item is read again every KeyCacheTTL).
	Role auth.Role
}

// principal is the session as the API's caller: the dashboard calls the API in-process on
// behalf of the session's key, with its project and role (auth.Authenticator.Delegate).
func (s session) principal() auth.Principal {
	return auth.Principal{ProjectID: s.ProjectID, KeyID: s.KeyID, User: s.User, Role: s.Role}
}

type sessionKey struct{}

// sessionOf returns the session of a request that passed signedIn.
func sessionOf(r *http.Request) session {
	s, _ := r.Context().Value(sessionKey{}).(session)
	return s
}

// newToken returns 32 random bytes in unpadded base64url: session ids and CSRF tokens.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// secure reports whether the browser reached us over HTTPS: directly, or through API Gateway
// or another proxy that says so in X-Forwarded-Proto. Cookies are Secure then.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration, site http.SameSite) {
	c := &http.Cookie{Name: name, Value: value, Path: cookiePath, HttpOnly: true, Secure: secure(r), SameSite: site}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
		c.Expires = time.Now().Add(maxAge)
	} else {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// sameOrigin refuses a state-changing request that a browser says comes from another site: an
// Origin header naming another host (or "null"), or Sec-Fetch-Site cross-site. A request
// without either (curl, old browsers) is left to the CSRF token.
func sameOrigin(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return errs.Forbidden("this form was sent from another site")
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return errs.Forbidden("this form was sent from another site")
	}
	return nil
}

// checkToken compares a form's CSRF token with the expected one in constant time.
func checkToken(got, want string) error {
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errs.Forbidden("this form has expired or was not sent from this site; reload the page and try again")
	}
	return nil
}

// usableKey returns the role of the key a session was started with, when that key still exists,
// is the session's, and is neither revoked nor expired at now; else an errs.CodeUnauthenticated
// error. The key is read through the API's Authenticator (Deps.Authn), which the API areas of
// this process share: its cache makes a page cost one read of the key a minute, and a key
// revoked in this process (Forget) ends its sessions here at once.
func (s *server) usableKey(ctx context.Context, ws auth.WebSession, now time.Time) (auth.Role, error) {
	key, err := s.d.Authn.Key(ctx, ws.KeyHash)
	if errs.Is(err, errs.CodeUnauthenticated) {
		return "", errs.Unauthenticated("the API key of this session no longer exists")
	}
	if err != nil {
		return "", err
	}
	if key.ID != ws.KeyID || key.ProjectID != ws.ProjectID {
		return "", errs.Unauthenticated("the API key of this session no longer exists")
	}
	role := cmp.Or(key.Role, auth.DefaultRole)
	if !auth.Members.Allows(role) {
		return "", errs.Unauthenticated("the API key of this session may no longer read the project")
	}
	return role, key.Usable(now)
}

// readForm reads a form body (at most maxFormBytes): the dashboard's POSTs are HTML forms, and
// any other body (JSON from a script) is refused before the CSRF check.
func readForm(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return errs.Errorf(errs.CodeUnsupportedMedia, "This address takes an HTML form.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errs.Invalid("The form could not be read.")
	}
	return nil
}

// signedIn serves next with the request's session, and refuses a request without one: the
// sign-in page with 401 (a person reads it; API Gateway's and the tests' clients see the
// status). Every POST it passes must come from this site and carry the session's CSRF token.
func (s *server) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if err := sameOrigin(r); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		sess, err := s.load(r)
		if errs.Is(err, errs.CodeUnauthenticated) {
			if sess.idHash != "" {
				setCookie(w, r, sessionCookie, "", 0, http.SameSiteLaxMode)
			}
			s.signInPage(w, r, http.StatusUnauthorized, "Sign in to continue.", nextOf(r))
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if r.Method == http.MethodPost {
			if err := readForm(w, r); err != nil {
				s.fail(w, r, err)
				return
			}
			if err := checkToken(r.PostForm.Get("csrf"), sess.CSRF); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)))
	})
}

// load reads the session of the request's cookie and checks its key. Without a usable session
// it returns an errs.CodeUnauthenticated error (with idHash set when a cookie was sent).
func (s *server) load(r *http.Request) (session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 64 {
		return session{}, errs.Unauthenticated("no session")
	}
	sess := session{idHash: auth.HashKey(c.Value)}
	now := s.d.Now()
	ws, err := s.d.Sessions.WebSession(r.Context(), sess.idHash, now)
	if errs.Is(err, errs.CodeNotFound) {
		return sess, errs.Unauthenticated("no session")
	}
	if err != nil {
		return sess, err
	}
	role, err := s.usableKey(r.Context(), ws, now)
	if err != nil {
		if errs.Is(err, errs.CodeUnauthenticated) {
			// The key is gone: so is the session, whatever its expiry.
			if derr := s.d.Sessions.DeleteWebSession(r.Context(), sess.idHash); derr != nil {
				return sess, derr
			}
		}
		return sess, err
	}
	sess.WebSession, sess.Role = ws, role
	return sess, nil
}

// nextOf is where to return after signing in: the page asked for, when it is a dashboard page
// read with GET.
func nextOf(r *http.Request) string {
	if r.Method != http.MethodGet {
		return ""
	}
	return safeNext(r.URL.RequestURI())
}

// safeNext keeps a return address only when it is a path of the dashboard: never another host
// ("//evil.example", "/\evil.example").
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui/") || strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(next, "//") {
		return "/ui/"
	}
	return next
}

// loginPage serves GET /ui/login.
func (s *server) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, err := s.load(r); err == nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.signInPage(w, r, http.StatusOK, "", safeNext(r.URL.Query().Get("next")))
}

// signInPage writes the sign-in form with status, a message and where to go next; it sets the
// form's CSRF cookie when the browser has none.
func (s *server) signInPage(w http.ResponseWriter, r *http.Request, status int, message, next string) {
	token := ""
	if c, err := r.Cookie(loginCookie); err == nil && len(c.Value) == 43 {
		token = c.Value
	} else {
		token = newToken()
		setCookie(w, r, loginCookie, token, loginLifetime, http.SameSiteStrictMode)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", auth.Challenge)
	}
	s.render(w, r, status, "login", page{Title: "Sign in", Data: loginData{CSRF: token, Message: message, Next: next}})
}

type loginData struct {
	CSRF, Message, Next string
}

// login serves POST /ui/login: the key is checked as the API checks it, and a new session (a
// new id, never one the browser brought) is stored and set as the cookie.
func (s *server) login(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := readForm(w, r); err != nil {
		s.fail(w, r, err)
		return
	}
	c, _ := r.Cookie(loginCookie)
	want := ""
	if c != nil {
		want = c.Value
	}
	if err := checkToken(r.PostForm.Get("csrf"), want); err != nil {
		s.fail(w, r, err)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	key := strings.TrimSpace(r.PostForm.Get("api_key"))
	if key == "" {
		s.signInPage(w, r, http.StatusUnauthorized, "Enter an API key.", next)
		return
	}
	p, err := s.d.Authn.Authenticate(r.Context(), "Bearer "+key)
	if errs.Is(err, errs.CodeUnauthenticated) {
		s.signInPage(w, r, http.StatusUnauthorized, "This API key cannot sign in: it is unknown, revoked or expired.", next)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The dashboard reads the project's traces: what the API allows member and admin keys.
	// An ingest key, made to be shipped inside applications, cannot sign in.
	if !auth.Members.Allows(p.Role) {
		s.signInPage(w, r, http.StatusForbidden, fmt.Sprintf("This API key's role is %s: the dashboard needs a key with the member or admin role.", p.Role), next)
		return
	}
	id, now := newToken(), s.d.Now()
	ws := auth.WebSession{
		ProjectID: p.ProjectID, KeyID: p.KeyID, KeyHash: auth.HashKey(key), User: p.User, CSRF: newToken(),
		CreatedAt: now, ExpiresAt: now.Add(sessionLifetime),
	}
	if err := s.d.Sessions.CreateWebSession(r.Context(), auth.HashKey(id), ws); err != nil {
		s.fail(w, r, err)
		return
	}
	setCookie(w, r, sessionCookie, id, sessionLifetime, http.SameSiteLaxMode)
	setCookie(w, r, loginCookie, "", 0, http.SameSiteStrictMode)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout serves POST /ui/logout (CSRF-checked by signedIn): the session is deleted, so that
// its cookie, kept or copied, no longer signs in.
func (s *server) logout(w http.ResponseWriter, r *http.Request) {
	if err := s.d.Sessions.DeleteWebSession(r.Context(), sessionOf(r).idHash); err != nil {
		s.fail(w, r, err)
		return
	}
	setCookie(w, r, sessionCookie, "", 0, http.SameSiteLaxMode)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}
