package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/errs"
)

// KeyPrefix starts every key Plume issues, so that a leaked key is recognisable (for example
// by secret scanners).
const KeyPrefix = "plm_"

// keySecretLen is the number of base62 characters after KeyPrefix: about 238 bits.
const keySecretLen = 40

// displayLen is how much of a key is shown in listings: the prefix and 8 characters.
const displayLen = len(KeyPrefix) + 8

// User is the person or service acting with a key.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
}

// Project is a tenant: every item Plume stores belongs to exactly one project.
type Project struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Key is an issued API key as stored: never the secret, only its hash.
type Key struct {
	ID        string     `json:"id"`
	ProjectID string     `json:"project_id"`
	Hash      string     `json:"-"`
	Display   string     `json:"display"` // the first characters of the secret, e.g. "plm_3fA9x0Qb"
	Label     string     `json:"label,omitempty"`
	User      User       `json:"user"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// Role is what the key may do. Keys stored before roles existed have none stored and act
	// as DefaultRole (admin); the stores read them so.
	Role Role `json:"role"`
}

// Usable reports whether k authenticates at time now, with the reason when it does not.
func (k Key) Usable(now time.Time) error {
	switch {
	case k.RevokedAt != nil:
		return errs.Unauthenticated("API key %s was revoked", k.Display)
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return errs.Unauthenticated("API key %s expired at %s", k.Display, k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// HashKey returns the lowercase hex SHA-256 of a key secret: the only form in which keys are
// stored or looked up.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSecret returns a fresh random key secret: KeyPrefix followed by 40 base62 characters.
func NewSecret() string {
	var b strings.Builder
	b.WriteString(KeyPrefix)
	max := big.NewInt(int64(len(base62)))
	for range keySecretLen {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // The OS entropy source is gone; nothing is safe.
		}
		b.WriteByte(base62[n.Int64()])
	}
	return b.String()
}

// KeySpec describes a key to issue.
type KeySpec struct {
	ProjectID string
	User      User
	Label     string
	// Role is what the key may do; empty is DefaultRole.
	Role      Role
	ExpiresAt *time.Time
	// Secret, when set, is used instead of a random one (the dev key of plume-local).
	Secret string
}

var emailPattern = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)

// NewKey validates spec and returns the secret to hand to the user once and the Key to store.
// A user without an id gets a fresh one.
func NewKey(spec KeySpec, now time.Time) (secret string, key Key, err error) {
	if err := ValidateProjectID(spec.ProjectID); err != nil {
		return "", Key{}, err
	}
	if spec.User.Email != "" && !emailPattern.MatchString(spec.User.Email) {
		return "", Key{}, errs.Invalid("email %q is not an email address", spec.User.Email)
	}
	role, err := ParseRole(string(spec.Role))
	if err != nil {
		return "", Key{}, err
	}
	if spec.ExpiresAt != nil && !spec.ExpiresAt.After(now) {
		return "", Key{}, errs.Invalid("expiry %s is in the past", spec.ExpiresAt.Format(time.RFC3339))
	}
	secret = spec.Secret
	if secret == "" {
		secret = NewSecret()
	}
	if len(secret) < 16 {
		return "", Key{}, errs.Invalid("a key must be at least 16 characters")
	}
	user := spec.User
	if user.ID == "" {
		user.ID = uuid.NewString()
	}
	display := secret
	if len(display) > displayLen {
		display = display[:displayLen]
	}
	return secret, Key{
		ID:        uuid.NewString(),
		ProjectID: spec.ProjectID,
		Hash:      HashKey(secret),
		Display:   display,
		Label:     spec.Label,
		Role:      role,
		User:      user,
		CreatedAt: now.UTC(),
		ExpiresAt: spec.ExpiresAt,
	}, nil
}

// ValidateProjectID checks that id is a UUID, the only form project ids take.
func ValidateProjectID(id string) error {
	if !isUUID(id) {
		return errs.Invalid("project id %q is not a UUID", id)
	}
	return nil
}

// Principal is the authenticated caller of a request.
type Principal struct {
	ProjectID string
	KeyID     string
	User      User
	// Role is the key's role, which the Router checks against the route's Access.
	Role Role
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller of the request. Handlers behind Middleware always have one.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

type delegatedKey struct{}

// delegation is a caller that a server of this process authenticated itself, made by an
// Authenticator (Delegate) and taken only by that Authenticator's Middleware.
type delegation struct {
	by *Authenticator
	p  Principal
}

// Delegate returns ctx carrying p as the caller of the requests it is used for in this process:
// a server that authenticated the person itself (the dashboard's session, whose key it checked
// with a) calls the API's handlers in-process on their behalf. a's Middleware takes p without
// an Authorization header; the Router's role and project checks apply to p as to any key.
// Only Go code in this process can set a context value, so a request from the network cannot
// carry one; and only code given the process's Authenticator (by the composition root) can
// make one its Middleware takes: a delegation made by another Authenticator is ignored.
func (a *Authenticator) Delegate(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, delegatedKey{}, delegation{by: a, p: p})
}

// RequireProject returns the caller's project id, or a forbidden error when projectID (taken
// from a /projects/{project_id}/... path) names another project. Router runs it before every
// project-scoped route; handlers do not call it.
func RequireProject(ctx context.Context, projectID string) (string, error) {
	p, ok := FromContext(ctx)
	if !ok {
		return "", errs.Unauthenticated("missing API key")
	}
	if projectID != p.ProjectID {
		return "", errs.Forbidden("this API key belongs to another project")
	}
	return p.ProjectID, nil
}
