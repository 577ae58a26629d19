//go:build unix

// Package dirlock takes an exclusive lock on a data folder, so that two servers never
// share one embedded store: the second would accept events whose live updates never
// reach the first one's dashboards.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FileName is the lock file inside the folder; it holds the owner's process id.
const FileName = "serve.lock"

// Lock is a held lock; Release gives it up (the system also does when the process ends,
// even by SIGKILL, so a crash never leaves a stale lock).
type Lock struct{ f *os.File }

// ErrHeld says another process holds the lock.
var ErrHeld = errors.New("dirlock: held by another process")

// HeldError says which process holds the folder.
type HeldError struct{ PID, Dir string }

func (e *HeldError) Error() string {
	return fmt.Sprintf("another tidings serve (pid %s) is using the data folder %s: stop it first, or give this one its own --data", e.PID, e.Dir)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Acquire locks dir for this process without waiting.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(holder); perr != nil {
				holder = "unknown"
			}
			if abs, aerr := filepath.Abs(dir); aerr == nil {
				dir = abs
			}
			return nil, &HeldError{PID: holder, Dir: dir}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	f.Sync()
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}
