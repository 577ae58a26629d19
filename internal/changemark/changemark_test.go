package changemark

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A bump by one opener is seen by another at once, through its mapping.
func TestBumpIsSeenByOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mark")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	seen := b.Value()
	for i := range 1000 { // back to back: never the same value twice
		if err := a.Bump(); err != nil {
			t.Fatal(err)
		}
		if v := b.Value(); v == seen {
			t.Fatalf("bump %d: the other opener still sees %d", i, v)
		} else {
			seen = v
		}
	}
}

// Another process's bump is seen too (the helper process below bumps once and exits).
func TestBumpByAnotherProcess(t *testing.T) {
	if os.Getenv("CHANGEMARK_BUMP") != "" {
		m, err := Open(os.Getenv("CHANGEMARK_BUMP"))
		if err != nil {
			os.Exit(2)
		}
		if err := m.Bump(); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "mark")
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before := m.Value()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBumpByAnotherProcess$")
	cmd.Env = append(os.Environ(), "CHANGEMARK_BUMP="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if m.Value() == before {
		t.Fatal("another process's bump is not seen")
	}
}

// An older version's empty mark file is grown to hold the value; its modification time
// still moves on a bump, for older versions that look at it.
func TestOpensAnOlderEmptyMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mark")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before := m.Value()
	if err := m.Bump(); err != nil {
		t.Fatal(err)
	}
	if m.Value() == before {
		t.Fatal("a bump is not seen")
	}
	fi, _ := os.Stat(path)
	if fi.Size() != size || !fi.ModTime().After(old) {
		t.Fatalf("size %d, modified %v", fi.Size(), fi.ModTime())
	}
}
