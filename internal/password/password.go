// Package password hashes passwords with argon2id, in the PHC string format.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	passwordvalidator "github.com/wagslane/go-password-validator"
	"golang.org/x/crypto/argon2"
)

// Params are argon2id's costs. Production uses Default; tests pass cheap ones to the
// server's configuration explicitly (there is no global switch).
type Params struct {
	Memory  uint32 // KiB
	Passes  uint32
	Threads uint8
}

// Default follows RFC 9106's second recommended option (64 MiB, 3 passes).
func Default() Params { return Params{Memory: 64 * 1024, Passes: 3, Threads: 2} }

// orDefault is p, or Default when p is the zero value.
func (p Params) orDefault() Params {
	if p == (Params{}) {
		return Default()
	}
	return p
}

const (
	keyLen = 32
	MinLen = 8 // characters, not bytes: "éééé" is 4
	// MinEntropy is the least strength (bits, as go-password-validator estimates it:
	// character classes and length, with repeats and keyboard or digit runs counted
	// once) a new password must have: "password" and "sunshine" (37.6) fall short,
	// "12345678" and eight spaces far short; "correct horse" has 64.
	MinEntropy = 40
)

// Check refuses a new password that is too short (in characters) or too easy to guess.
func Check(pw string) error {
	if utf8.RuneCountInString(pw) < MinLen {
		return fmt.Errorf("a password needs at least %d characters", MinLen)
	}
	if passwordvalidator.GetEntropy(pw) < MinEntropy {
		return errors.New("this password is too easy to guess: use a longer one, for example a few unrelated words")
	}
	return nil
}

var b64 = base64.RawStdEncoding

// Hash returns the argon2id hash of pw with a fresh salt and the Default costs, after Check.
func Hash(pw string) (string, error) { return Default().Hash(pw) }

// Hash returns the argon2id hash of pw with a fresh salt and these costs (Default for
// the zero value), after Check. Verify reads the costs back from the hash.
func (p Params) Hash(pw string) (string, error) {
	if err := Check(pw); err != nil {
		return "", err
	}
	p = p.orDefault()
	salt := make([]byte, 16)
	rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, p.Passes, p.Memory, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Passes, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether pw matches hash, comparing in constant time.
func Verify(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("password: unknown hash format")
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, fmt.Errorf("password: %w", err)
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err := errors.Join(err1, err2); err != nil {
		return false, fmt.Errorf("password: %w", err)
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// ErrBusy is returned when every hashing slot stayed taken for the whole wait.
var ErrBusy = errors.New("password: the server is busy checking other passwords")

// Gate runs at most a fixed number of hashes at once: each takes 64 MiB and tens of
// milliseconds of a core, so unbounded parallel sign-ups or sign-ins would exhaust the
// machine. The rest wait briefly, then get ErrBusy.
type Gate struct {
	slots  chan struct{}
	wait   time.Duration
	params Params
}

// NewGate allows n hashes at once, with costs p (Default for the zero value), and
// makes the others wait at most wait.
func NewGate(n int, wait time.Duration, p Params) *Gate {
	return &Gate{slots: make(chan struct{}, max(1, n)), wait: wait, params: p.orDefault()}
}

// Params are the costs the gate hashes with.
func (g *Gate) Params() Params { return g.params }

func (g *Gate) acquire(ctx context.Context) error {
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hash is Hash within the gate's limit.
func (g *Gate) Hash(ctx context.Context, pw string) (string, error) {
	if err := Check(pw); err != nil {
		return "", err // refused before any work
	}
	if err := g.acquire(ctx); err != nil {
		return "", err
	}
	defer func() { <-g.slots }()
	return g.params.Hash(pw)
}

// Verify is Verify within the gate's limit.
func (g *Gate) Verify(ctx context.Context, hash, pw string) (bool, error) {
	if err := g.acquire(ctx); err != nil {
		return false, err
	}
	defer func() { <-g.slots }()
	return Verify(hash, pw)
}
