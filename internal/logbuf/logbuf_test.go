package logbuf

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that counts its writes, safe across goroutines.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// Lines are held and written together, later; a warning goes out at once with the
// lines before it; Close writes the rest, and later lines are written as they come.
func TestBatchesLines(t *testing.T) {
	var out syncBuffer
	w := New(&out)
	log := slog.New(Handler(slog.NewTextHandler(w, nil), w))
	for i := range 100 {
		log.Info("request", "n", i)
	}
	waitFor(t, "the held lines", func() bool { return strings.Count(out.String(), "msg=request") == 100 })
	if out.count() >= 10 {
		t.Fatalf("100 lines took %d writes", out.count())
	}

	log.Info("before")
	log.With("component", "push").Warn("trouble")
	if s := out.String(); !strings.Contains(s, "msg=before") || !strings.Contains(s, "msg=trouble component=push") {
		t.Fatalf("a warning was held, or the line before it:\n%s", s)
	}
	log.Info("last")
	w.Close()
	if !strings.Contains(out.String(), "msg=last") {
		t.Fatal("Close did not write the held line")
	}
	log.Info("after close")
	if !strings.Contains(out.String(), "msg=\"after close\"") {
		t.Fatal("a line after Close was held")
	}
}

// The writer never holds more than Size bytes: past it, what is held is written first,
// and a line longer than Size goes out alone.
func TestBoundedHold(t *testing.T) {
	var out syncBuffer
	w := New(&out)
	line := []byte(strings.Repeat("x", 1000) + "\n")
	for range 3 * Size / len(line) {
		w.Write(line)
		w.mu.Lock()
		held := len(w.buf)
		w.mu.Unlock()
		if held > Size {
			t.Fatalf("holds %d bytes", held)
		}
	}
	if out.count() < 2 {
		t.Fatalf("%d writes for 3 × Size bytes", out.count())
	}
	huge := bytes.Repeat([]byte("y"), 2*Size)
	w.Write(huge)
	if !strings.Contains(out.String(), string(huge)) {
		t.Fatal("a line longer than the bound was held")
	}
	w.Close()
	if got, want := len(out.String()), (3*Size/len(line))*len(line)+len(huge); got != want {
		t.Fatalf("wrote %d bytes, want %d", got, want)
	}
}
