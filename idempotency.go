package tidings

import (
	"context"
	"errors"
	"time"
)

// Idempotency keys. A client that retries a write after a timeout cannot know whether
// the first attempt was stored; with a key it need not: the store keeps the write's
// answer under the key in the write's own transaction, and a retry with the key is
// answered with it instead of being applied again.
const (
	// MaxIdempotencyKeyLen is the longest key, in bytes (printable ASCII).
	MaxIdempotencyKeyLen = 255
	// IdempotencyKeep is how long a key's answer is kept, at least: it may be replayed
	// for this long after the write.
	IdempotencyKeep = 24 * time.Hour
	// HookKeyPrefix starts the keys of inbound hooks' deliveries
	// (hook:<hook id>:<delivery id>), which clients may not use.
	HookKeyPrefix = "hook:"
	// HookKeyKeep is IdempotencyKeep for hooks' keys: Stripe retries a delivery for up
	// to three days, and Stripe and GitHub let people resend one later.
	HookKeyKeep = 72 * time.Hour
)

// CheckIdempotencyKey validates a key as a client sends it: 1–255 printable ASCII
// characters (space to tilde).
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return Errorf(EValidation, "the Idempotency-Key header must be 1 to %d characters (got %d)", MaxIdempotencyKeyLen, len(key))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return Errorf(EValidation, "the Idempotency-Key header must be printable ASCII (character %d is not)", i+1)
		}
	}
	return nil
}

// Keyed is the idempotency key of one write and how its answer is made: the store calls
// Render with the write's result inside the write's transaction and keeps the answer
// with the key. A write whose key another request kept first changes nothing and fails
// with ErrKeyTaken.
type Keyed[T any] struct {
	Key         string
	Fingerprint string // of the request (method, path, body): a retry must match it
	Status      int    // the answer's HTTP status
	Render      func(result T) ([]byte, error)
}

// Answer renders the answer to keep for result.
func (k *Keyed[T]) Answer(result T, now time.Time) (*KeptAnswer, error) {
	body, err := k.Render(result)
	if err != nil {
		return nil, err
	}
	return &KeptAnswer{Key: k.Key, Fingerprint: k.Fingerprint, Status: k.Status, Body: body, CreatedAt: now}, nil
}

// KeptAnswer is the answer a store keeps under an idempotency key.
type KeptAnswer struct {
	Key         string
	Fingerprint string
	Status      int
	Body        []byte
	CreatedAt   time.Time
}

// ErrKeyTaken is the error of a write whose idempotency key was kept meanwhile by another
// request (on another instance): nothing was written, and the key's answer can be read.
var ErrKeyTaken = Errorf(EKeyInProgress, "a request with this Idempotency-Key is being processed; retry after the time in the Retry-After header")

// IdempotencyStore keeps the answers of keyed writes.
type IdempotencyStore interface {
	// FindAnswer returns the answer kept under the account's key. Errors: ENotFound.
	FindAnswer(ctx context.Context, accountID int64, key string) (*KeptAnswer, error)
	// ExpireAnswers deletes up to max answers, of any account, kept before before —
	// those of keys starting with HookKeyPrefix: kept before hookBefore — oldest first,
	// and returns how many it deleted: a background job calls it until it returns
	// less than max.
	ExpireAnswers(ctx context.Context, before, hookBefore time.Time, max int) (int, error)
}

// NewBatch is a batch of events published together, under one idempotency key.
type NewBatch struct {
	Events []*NewEvent
	Key    *Keyed[[]Published]
}

// Published is the outcome of one event of a batch: the stored event, or why it was
// refused (nothing was written for it).
type Published struct {
	Event *Event
	Err   error
}

// ErrNoneStored is what a batch of which no event was stored leaves its key: the batch
// changed nothing, so its answer is not kept and a retry runs again.
var ErrNoneStored = errors.New("no event of the batch was stored")

// NoneStored returns ErrNoneStored when no event of a batch was stored, nil otherwise.
func NoneStored(published []Published) error {
	for _, p := range published {
		if p.Event != nil {
			return nil
		}
	}
	return ErrNoneStored
}
