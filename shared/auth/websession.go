package auth

import "time"

// WebSession is a signed-in session of the dashboard (functions/dashboard). It is stored under
// the SHA-256 of its id; the id itself lives only in the browser's cookie.
type WebSession struct {
	ProjectID string
	KeyID     string
	// KeyHash is the SHA-256 of the API key the session was started with (HashKey): the
	// form the key's lookup item is stored under, so that every request can check that the
	// key still authenticates (Key.Usable) without keeping the secret.
	KeyHash   string
	User      User
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}
