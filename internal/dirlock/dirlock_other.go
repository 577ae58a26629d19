//go:build !unix

package dirlock

import "errors"

// FileName is the lock file inside the folder.
const FileName = "serve.lock"

// ErrHeld says another process holds the lock.
var ErrHeld = errors.New("dirlock: held by another process")

// Lock is a no-op where flock is not available.
type Lock struct{}

// Acquire does not lock on this system.
func Acquire(dir string) (*Lock, error) { return &Lock{}, nil }

// Release does nothing.
func (l *Lock) Release() error { return nil }
