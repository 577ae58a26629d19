package tidings

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"strings"
	"time"
)

// Access levels of an API token.
const (
	// AccessPublic may only publish (log, insight); meant to be embedded in a website or app.
	AccessPublic = "public"
	// AccessFull may also read events and insights.
	AccessFull = "full"
)

// Roles a token may hold.
const (
	RoleLog     = "log"
	RoleInsight = "insight"
)

// TokenPrefix starts every API token so that secret scanners recognise a leaked one.
const TokenPrefix = "tds_"

// Token is an API token as stored: never the secret itself, only its hash.
type Token struct {
	ID         string // public identifier, also part of the secret
	AccountID  int64
	Name       string
	Access     string
	Project    string // limit; "" for every project
	Channel    string // limit of the log role; "" for every channel (needs Project)
	Roles      []string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used
	RevokedAt  time.Time // zero: active
	Hash       []byte    // SHA-256 of the secret part
}

// Revoked reports whether the token has been revoked.
func (t *Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// HasRole reports whether the token holds role.
func (t *Token) HasRole(role string) bool {
	for _, r := range t.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// AllowPublish returns a forbidden error unless the token may publish with role into
// project (and, for the log role, channel), saying which limit refused it.
func (t *Token) AllowPublish(role, project, channel string) error {
	if !t.HasRole(role) {
		return Errorf(EForbidden, "this token does not have the %q role", role)
	}
	if t.Project != "" && project != t.Project {
		return Errorf(EForbidden, "this token is limited to project %q", t.Project)
	}
	if role == RoleLog && t.Channel != "" && channel != t.Channel {
		return Errorf(EForbidden, "this token is limited to channel %q of project %q", t.Channel, t.Project)
	}
	return nil
}

// AllowRead returns a forbidden error unless the token may read the project (and
// channel, "" meaning all of them).
func (t *Token) AllowRead(project, channel string) error {
	if t.Access != AccessFull {
		return Errorf(EForbidden, "a public token may only publish; reading needs a token with full access")
	}
	if t.Project != "" && project != t.Project {
		return Errorf(EForbidden, "this token is limited to project %q", t.Project)
	}
	if t.Channel != "" && channel != t.Channel {
		return Errorf(EForbidden, "this token is limited to channel %q of project %q: add channel=%s", t.Channel, t.Project, t.Channel)
	}
	return nil
}

// AllowDelete returns a forbidden error unless the token may delete what role writes
// (events: log, insights: insight) in the project and channel: it needs full access,
// the role, and to be within its limits.
func (t *Token) AllowDelete(role, project, channel string) error {
	if t.Access != AccessFull {
		return Errorf(EForbidden, "a public token may only publish; deleting needs a token with full access")
	}
	return t.AllowPublish(role, project, channel)
}

// Check validates a token's attributes before it is created.
func (t *Token) Check() error {
	var p Problems
	if t.Access != AccessPublic && t.Access != AccessFull {
		p.Add("access", "enum", `must be "public" or "full"`)
	}
	if t.Project != "" {
		CheckName(&p, "project", t.Project)
	}
	if t.Channel != "" {
		if t.Project == "" {
			p.Add("channel", "requires_project", "a channel limit needs a project limit")
		}
		CheckName(&p, "channel", t.Channel)
	}
	if len(t.Roles) == 0 {
		p.Add("roles", "required", `at least one role ("log", "insight") is required`)
	}
	seen := map[string]bool{}
	for _, r := range t.Roles {
		if r != RoleLog && r != RoleInsight || seen[r] {
			p.Add("roles", "enum", `roles are "log" and "insight", each at most once (got %q)`, r)
		}
		seen[r] = true
	}
	if len(t.Name) > 128 {
		p.Add("name", "too_long", "must be at most 128 characters")
	}
	return p.Err()
}

var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewTokenSecret returns a fresh token ID and the secret that embeds it, of the form
// "tds_<id>_<secret>": the ID finds the row, the SHA-256 of the secret part is compared
// in constant time. The secret has 256 bits of entropy.
func NewTokenSecret() (id, secret string, hash []byte) {
	idb := make([]byte, 10)
	rand.Read(idb)
	sb := make([]byte, 32)
	rand.Read(sb)
	id = tokenEncoding.EncodeToString(idb)
	s := tokenEncoding.EncodeToString(sb)
	sum := sha256.Sum256([]byte(s))
	return id, TokenPrefix + id + "_" + s, sum[:]
}

// ParseTokenSecret splits a presented token into its ID and the SHA-256 of its secret.
// ok is false when it does not have the shape of a Tidings token.
func ParseTokenSecret(token string) (id string, hash []byte, ok bool) {
	rest, found := strings.CutPrefix(token, TokenPrefix)
	if !found {
		return "", nil, false
	}
	id, s, found := strings.Cut(rest, "_")
	if !found || len(id) != 16 || len(s) != 52 {
		return "", nil, false
	}
	sum := sha256.Sum256([]byte(s))
	return id, sum[:], true
}

// HashMatches compares a presented hash with the stored one in constant time.
func (t *Token) HashMatches(hash []byte) bool {
	return subtle.ConstantTimeCompare(t.Hash, hash) == 1
}

// TokenStore keeps API tokens. Methods other than FindToken are scoped to one account.
type TokenStore interface {
	// CreateToken stores t (with its hash). Errors: EValidation, EProjectNotFound,
	// EChannelNotFound for limits that do not exist.
	CreateToken(ctx context.Context, t *Token) error
	// FindToken returns the token with the given ID, revoked or not, with its hash.
	// Errors: ENotFound.
	FindToken(ctx context.Context, id string) (*Token, error)
	// ActiveTokens returns those of ids that name a token not revoked, read from the
	// database itself, never from FindToken's memory: live streams check their tokens
	// with it, so that a revocation ends them whatever another instance's cache holds.
	ActiveTokens(ctx context.Context, ids []string) ([]string, error)
	// ListTokens returns the account's tokens, oldest first.
	ListTokens(ctx context.Context, accountID int64) ([]*Token, error)
	// RevokeToken marks the token revoked; it takes effect for the next request.
	// Errors: ENotFound (also for another account's token).
	RevokeToken(ctx context.Context, accountID int64, id string, at time.Time) error
	// TouchTokens records when tokens were last used, in one write for many requests.
	TouchTokens(ctx context.Context, lastUsed map[string]time.Time) error
}

// AllowEvent returns a forbidden error unless the token may publish e (checked, so
// its priority is a word): AllowPublish's limits, and a public token — one that any
// visitor of a website can read — may not publish an urgent event, which gets through
// quiet hours and flood control and is pushed again until someone acknowledges it.
func (t *Token) AllowEvent(e *NewEvent) error {
	if err := t.AllowPublish(RoleLog, e.Project, e.Channel); err != nil {
		return err
	}
	if t.Access != AccessFull && e.Priority == PriorityUrgent.String() {
		return Errorf(EForbidden, `a public token may not publish "urgent" events (they get through quiet hours and repeat until acknowledged): use "high", or a token with full access`)
	}
	return nil
}
