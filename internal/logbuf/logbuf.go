// Package logbuf writes a server's log lines in batches: an access-log line per request
// written on its own cost a system call per request (and a wake of whatever reads the
// log: journald, a container runtime), a tenth of the CPU of the cheapest request.
//
// Lines wait at most Every (100 ms) and at most Size bytes (64 KiB); a line at level
// Warn or above is written at once with everything before it, and Close writes the
// rest. A process that is killed loses at most its last 100 ms of lines, never a
// warning or an error.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

const (
	// Every is the longest a line waits.
	Every = 100 * time.Millisecond
	// Size is the most the writer holds: a line that would pass it writes what is held
	// first (a longer line is written alone, at once).
	Size = 64 << 10
)

// Writer holds lines for out. It is safe for concurrent use.
type Writer struct {
	out    io.Writer
	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer // armed while lines wait
	armed  bool
	closed bool // then each line is written at once
}

// New returns a Writer that writes to out.
func New(out io.Writer) *Writer {
	w := &Writer{out: out, buf: make([]byte, 0, Size)}
	w.timer = time.AfterFunc(time.Hour, w.tick)
	w.timer.Stop()
	return w
}

// Write holds p (a whole line, as slog's handlers write them) for the next flush.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.out.Write(p)
		return len(p), nil
	}
	if len(w.buf)+len(p) > Size {
		w.flushLocked()
		if len(p) > Size {
			w.out.Write(p)
			return len(p), nil
		}
	}
	w.buf = append(w.buf, p...)
	if !w.armed {
		w.armed = true
		w.timer.Reset(Every)
	}
	return len(p), nil
}

// Flush writes what is held.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *Writer) flushLocked() {
	if w.armed {
		w.timer.Stop()
		w.armed = false
	}
	if len(w.buf) > 0 {
		// A failed write of the log has nowhere to be reported; the lines are dropped,
		// as an unbuffered handler's would be.
		w.out.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *Writer) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false // fired: nothing to stop
	w.flushLocked()
}

// Close writes what is held; later lines are written at once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	w.closed = true
	return nil
}

// Handler wraps a slog handler that writes to w: a record at level Warn or above is
// written at once, with every line before it.
func Handler(h slog.Handler, w *Writer) slog.Handler { return urgent{h, w} }

type urgent struct {
	slog.Handler
	w *Writer
}

func (u urgent) Handle(ctx context.Context, r slog.Record) error {
	err := u.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		u.w.Flush()
	}
	return err
}

func (u urgent) WithAttrs(attrs []slog.Attr) slog.Handler {
	return urgent{u.Handler.WithAttrs(attrs), u.w}
}

func (u urgent) WithGroup(name string) slog.Handler {
	return urgent{u.Handler.WithGroup(name), u.w}
}
