// Package changemark tells the processes that share a data folder that something
// changed: the CLI revoked a token, and a running server must refuse it on its next
// request. Each process maps a small file into memory, so looking costs a memory read
// rather than a system call per request (a stat of the file cost 3% of the CPU of a
// publish); a change writes a new value into the file, which every mapping sees at once.
// Where the file cannot be mapped, Value reads the file's modification time instead.
package changemark

import (
	"encoding/binary"
	"os"
	"sync"
	"time"
)

// size is the mark: one 64-bit value.
const size = 8

// Mark is an open mark file.
type Mark struct {
	f   *os.File
	mem []byte // the file, mapped (nil where it could not be)
	mu  sync.Mutex
}

// Open opens (creating it if needed) the mark file at path.
func Open(path string) (*Mark, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < size {
		// An older version's mark is empty (it looked at its modification time only).
		if err := f.Truncate(size); err != nil {
			f.Close()
			return nil, err
		}
	}
	m := &Mark{f: f}
	m.mem = mapFile(f, size)
	return m, nil
}

// Value is the mark's value now: it differs from an earlier one once any process has
// called Bump since.
func (m *Mark) Value() uint64 {
	if m.mem != nil {
		return load(m.mem)
	}
	fi, err := m.f.Stat()
	if err != nil {
		return 0
	}
	return uint64(fi.ModTime().UnixNano())
}

// Bump writes a new value. Writing also moves the file's modification time, which
// older versions sharing the folder look at.
func (m *Mark) Bump() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b [size]byte
	next := uint64(time.Now().UnixNano())
	if m.mem != nil {
		next = max(next, load(m.mem)+1)
	}
	binary.LittleEndian.PutUint64(b[:], next)
	_, err := m.f.WriteAt(b[:], 0)
	return err
}

// Close unmaps and closes the file.
func (m *Mark) Close() error {
	if m.mem != nil {
		unmap(m.mem)
		m.mem = nil
	}
	return m.f.Close()
}
