package tidings

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Session is a signed-in browser. Only the SHA-256 of its cookie value is stored.
type Session struct {
	Hash      []byte
	UserID    int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Invite is a one-time link that lets a person join an account, as a member or an owner.
type Invite struct {
	ID        string // names a pending invite in lists: derived from Hash, reveals nothing of the secret
	Hash      []byte
	AccountID int64
	Role      string // UserMember (the default) or UserOwner
	// Email is the address the invitation was mailed to ("" when the link was
	// copied by hand): pending invitations list it.
	Email string
	// ResetUser, when not 0, makes this a password reset link of that user of the
	// account instead of an invitation: used once, it sets the user's password.
	ResetUser   int64
	ResetEmail  string // the user's email, filled in when read
	AccountName string // filled in when read
	CreatedBy   int64
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// NewSecret returns a random URL-safe secret of 256 bits and its SHA-256, for session
// cookies and invite links.
func NewSecret() (secret string, hash []byte) {
	b := make([]byte, 32)
	rand.Read(b)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret)
}

// HashSecret is the SHA-256 under which a session or invite secret is stored.
func HashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// SessionStore keeps sessions and invites.
type SessionStore interface {
	// CreateSession stores s.
	CreateSession(ctx context.Context, s *Session) error
	// FindSession returns the unexpired session with that hash, its user and the
	// user's account. Errors: ENotFound (also when expired or when the user is gone).
	FindSession(ctx context.Context, hash []byte, now time.Time) (*Session, *User, *Account, error)
	// DeleteSession signs one session out.
	DeleteSession(ctx context.Context, hash []byte) error
	// SetFlash keeps a message for the session's next page, replacing one not yet
	// taken; the caller seals it (it may hold a secret shown once). Errors: ENotFound.
	SetFlash(ctx context.Context, hash, flash []byte) error
	// TakeFlash returns the session's flash and clears it: nil when there is none.
	TakeFlash(ctx context.Context, hash []byte) ([]byte, error)
	// CreateInvite stores inv.
	CreateInvite(ctx context.Context, inv *Invite) error
	// FindInvite returns the unused, unexpired invite with that hash.
	// Errors: ENotFound.
	FindInvite(ctx context.Context, hash []byte, now time.Time) (*Invite, error)
	// AcceptInvite uses the invite once and creates u in its account with its role,
	// in one transaction. Errors: ENotFound (used, expired, unknown, or a reset link),
	// EConflict (email taken).
	AcceptInvite(ctx context.Context, hash []byte, u *User, now time.Time) error
	// UseReset uses a password reset link once: it sets its user's password hash and
	// ends all their sessions, in one transaction, and returns the user.
	// Errors: ENotFound (used, expired, unknown, or an invitation).
	UseReset(ctx context.Context, hash []byte, passwordHash string, now time.Time) (*User, error)
	// ListInvites returns the account's unused, unexpired invitations and password
	// reset links (ResetUser set), newest first.
	ListInvites(ctx context.Context, accountID int64, now time.Time) ([]*Invite, error)
	// RevokeInvite deletes the account's pending invite with that ID. Errors: ENotFound.
	RevokeInvite(ctx context.Context, accountID int64, id string) error
}

// InviteID is the ID under which an invite with that hash is listed.
func InviteID(hash []byte) string { return hex.EncodeToString(hash[:8]) }

// MemberStore manages the people of an account.
type MemberStore interface {
	// FindUser returns the account's user. Errors: ENotFound.
	FindUser(ctx context.Context, accountID, userID int64) (*User, error)
	// ListUsers returns the account's users, oldest first.
	ListUsers(ctx context.Context, accountID int64) ([]*User, error)
	// DeleteUser removes the account's user and signs them out everywhere; the
	// invitations and reset links they made and nobody used yet stop working.
	// Errors: ENotFound.
	DeleteUser(ctx context.Context, accountID, userID int64) error
	// SetPassword replaces the user's password hash and ends their other sessions
	// (keep is the session that stays signed in; nil ends all). Errors: ENotFound.
	SetPassword(ctx context.Context, userID int64, hash string, keep []byte) error
	// CountUsers returns how many users exist in all accounts (0 on a fresh install).
	CountUsers(ctx context.Context) (int, error)
}
