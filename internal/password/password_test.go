package password

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHashVerify keeps the production cost: a hash says m=65536 (64 MiB), t=3, p=2.
func TestHashVerify(t *testing.T) {
	h, err := Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h, "$m=65536,t=3,p=2$") {
		t.Fatalf("the production hash is not argon2id at 64 MiB, 3 passes: %s", h)
	}
	cheap, err := Params{Memory: 64, Passes: 1, Threads: 1}.Hash("correct horse")
	if ok, _ := Verify(cheap, "correct horse"); err != nil || !ok || !strings.Contains(cheap, "$m=64,t=1,p=1$") {
		t.Fatalf("a hash with cheap costs (tests): %s %v", cheap, err)
	}
	if ok, err := Verify(h, "correct horse"); !ok || err != nil {
		t.Fatalf("right password refused: %v", err)
	}
	if ok, _ := Verify(h, "correct horsE"); ok {
		t.Fatal("wrong password accepted")
	}
	h2, _ := Hash("correct horse")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	if _, err := Hash("short"); err == nil {
		t.Fatal("short password accepted")
	}
	if _, err := Verify("plain", "x"); err == nil {
		t.Fatal("garbage hash accepted")
	}
}

// TestGateBounds: a gate of 2 with a short wait: with both slots busy, a third hash or
// check is told the server is busy instead of taking 64 MiB more.
func TestGateBounds(t *testing.T) {
	ctx := context.Background()
	g := NewGate(2, 5*time.Millisecond, Params{Memory: 64, Passes: 1, Threads: 1})
	hash, err := g.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	// Both slots busy: a third hash or check waits its 5 ms and is refused.
	g.slots <- struct{}{}
	g.slots <- struct{}{}
	if _, err := g.Hash(ctx, "correct horse"); !errors.Is(err, ErrBusy) {
		t.Fatalf("hash with every slot busy: %v, want ErrBusy", err)
	}
	if _, err := g.Verify(ctx, hash, "correct horse"); !errors.Is(err, ErrBusy) {
		t.Fatalf("check with every slot busy: %v, want ErrBusy", err)
	}
	// One free again: the next one goes through, and gives its slot back.
	<-g.slots
	for range 3 {
		if ok, err := g.Verify(ctx, hash, "correct horse"); !ok || err != nil {
			t.Fatalf("check with a free slot: %v %v", ok, err)
		}
	}
	<-g.slots
	if _, err := g.Hash(context.Background(), "short"); err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("a short password must be refused before the gate: %v", err)
	}
}

// TestCheck: length counts characters, not bytes, and weak passwords are refused (the
// audit: "éééé", "12345678", eight spaces and "password" were all accepted).
func TestCheck(t *testing.T) {
	for pw, want := range map[string]string{
		"éééé":            "at least 8 characters",
		"short":           "at least 8 characters",
		"12345678":        "too easy to guess",
		"        ":        "too easy to guess",
		"password":        "too easy to guess",
		"sunshine":        "too easy to guess",
		"qwertyuiop":      "too easy to guess",
		"éàüöçñøå":        "",
		"correct horse":   "",
		"a long password": "",
		"whatever1":       "",
		"Tr0ub4dor&3":     "",
	} {
		err := Check(pw)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("Check(%q) = %v, want %q", pw, err, want)
		}
	}
	if _, err := Hash("12345678"); err == nil {
		t.Error("Hash took a weak password")
	}
}
