package feedback

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
)

// LinkTypeCompletion is the one link type: feedback on a prompt's completions.
const LinkTypeCompletion = "prompt_completion"

// Feedback link lifetimes and rate.
const (
	DefaultLinkTTL = 7 * 24 * time.Hour
	MaxLinkTTL     = 90 * 24 * time.Hour
	// DefaultLinkRate is how many page views and submissions one link serves per minute.
	DefaultLinkRate = 60
	// linkTokenPrefix marks link tokens, so that a leaked one is recognisable.
	linkTokenPrefix = "plf_"
	linkTokenBytes  = 32
)

// Link is a shareable feedback link: whoever has its URL may review the recent completions of
// one prompt and leave feedback, without an account. Only the SHA-256 of its token is stored.
type Link struct {
	ID         string
	ProjectID  string
	PromptSlug string
	LinkType   string
	TokenHash  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RevokedAt  *time.Time
	CreatedBy  auth.User
}

// Reviewer is the identity feedback given through l is stored under: the link, and a reviewer
// id that tells apart the people using one link (a random id their browser keeps), so that each
// reviewer has one record per completion.
func (l Link) Reviewer(reviewerID string) auth.User {
	return auth.User{ID: "link:" + l.ID + ":" + reviewerID, Name: "Feedback link for " + l.PromptSlug}
}

// Usable reports why l cannot be used at now, or nil.
func (l Link) Usable(now time.Time) error {
	switch {
	case l.RevokedAt != nil:
		return errs.Errorf(errs.CodeForbidden, "this feedback link was revoked")
	case !now.Before(l.ExpiresAt):
		return errs.Errorf(errs.CodeForbidden, "this feedback link expired on %s", l.ExpiresAt.UTC().Format("2 January 2006 at 15:04 UTC"))
	}
	return nil
}

// LinkInput is what a new feedback link is made from (the body of POST /feedback-links).
type LinkInput struct {
	PromptSlug string
	LinkType   string
	// ExpiresInHours overrides DefaultLinkTTL, up to MaxLinkTTL.
	ExpiresInHours *float64
}

// LinkStore keeps feedback links.
type LinkStore interface {
	// CreateLink stores l; errs.CodeNotFound when its prompt does not exist.
	CreateLink(ctx context.Context, l Link) error
	// Links returns a project's links.
	Links(ctx context.Context, projectID string) ([]Link, error)
	// RevokeLink marks a link revoked (keeping the first revocation time) and returns it.
	RevokeLink(ctx context.Context, projectID, linkID string, at time.Time) (Link, error)
	// UseLink finds a link by token hash and counts one use in the minute of now:
	// errs.CodeNotFound for an unknown token, errs.CodeRateLimited past perMinute uses.
	UseLink(ctx context.Context, tokenHash string, now time.Time, perMinute int) (Link, error)
}

// Links creates, revokes and opens feedback links.
type Links struct {
	store  LinkStore
	rate   int
	now    func() time.Time
	misses missLimiter
}

// NewLinks returns the link service; perMinute <= 0 means DefaultLinkRate. It reads the time
// from now (time.Now when nil): the links' expiry and the minutes their uses are counted in.
func NewLinks(store LinkStore, perMinute int, now func() time.Time) *Links {
	if perMinute <= 0 {
		perMinute = DefaultLinkRate
	}
	if now == nil {
		now = time.Now
	}
	return &Links{store: store, rate: perMinute, now: now}
}

// Create makes a link for a prompt of projectID and returns it with its token, which is shown
// this once and never stored.
func (s *Links) Create(ctx context.Context, projectID string, by auth.User, in LinkInput) (Link, string, error) {
	if err := prompt.ValidateSlug(in.PromptSlug); err != nil {
		return Link{}, "", err
	}
	if in.LinkType != LinkTypeCompletion {
		return Link{}, "", errs.Invalid("link_type must be %q, not %q", LinkTypeCompletion, in.LinkType)
	}
	ttl := DefaultLinkTTL
	if h := in.ExpiresInHours; h != nil {
		if math.IsNaN(*h) || *h <= 0 || *h > MaxLinkTTL.Hours() {
			return Link{}, "", errs.Invalid("expires_in_hours must be above 0 and at most %g", MaxLinkTTL.Hours())
		}
		ttl = time.Duration(*h * float64(time.Hour))
	}
	token := newLinkToken()
	now := s.now().UTC()
	l := Link{
		ID: uuid.NewString(), ProjectID: projectID, PromptSlug: in.PromptSlug, LinkType: in.LinkType,
		TokenHash: HashLinkToken(token), CreatedAt: now, ExpiresAt: now.Add(ttl), CreatedBy: by,
	}
	if err := s.store.CreateLink(ctx, l); err != nil {
		return Link{}, "", err
	}
	return l, token, nil
}

// Revoke revokes a link of projectID.
func (s *Links) Revoke(ctx context.Context, projectID, linkID string) (Link, error) {
	return s.store.RevokeLink(ctx, projectID, linkID, s.now().UTC())
}

// List returns a project's links.
func (s *Links) List(ctx context.Context, projectID string) ([]Link, error) {
	return s.store.Links(ctx, projectID)
}

// Open resolves a token for one page view or submission by client (its source address),
// counting it against the link's rate: errs.CodeNotFound for a token that names no link,
// errs.CodeForbidden for an expired or revoked one, errs.CodeRateLimited past the rate, or
// without a read when client tried more than MaxUnknownTokens unknown tokens this minute.
func (s *Links) Open(ctx context.Context, token, client string) (Link, error) {
	now := s.now().UTC()
	if s.misses.blocked(client, now) {
		return Link{}, errs.Errorf(errs.CodeRateLimited, "too many unknown feedback links were tried from your address; try again in a minute")
	}
	if !strings.HasPrefix(token, linkTokenPrefix) || len(token) > 100 {
		s.misses.miss(client, now)
		return Link{}, errs.NotFound("no such feedback link")
	}
	l, err := s.store.UseLink(ctx, HashLinkToken(token), now, s.rate)
	if err != nil {
		if errs.Is(err, errs.CodeNotFound) {
			s.misses.miss(client, now)
		}
		return Link{}, err
	}
	return l, l.Usable(now)
}

// HashLinkToken returns the form a link token is stored and looked up in.
func HashLinkToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newLinkToken returns a fresh unguessable token: 256 random bits, URL-safe.
func newLinkToken() string {
	b := make([]byte, linkTokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return linkTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}
