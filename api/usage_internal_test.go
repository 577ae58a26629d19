package api

import (
	"testing"
	"time"
)

// TestUsageGivenBack: times a flush could not write come back for the next one, and a
// newer time seen meanwhile wins over the one given back.
func TestUsageGivenBack(t *testing.T) {
	var u usage
	t0 := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	u.touch("a", t0)
	u.touch("b", t0)
	taken := u.take()
	u.touch("b", t0.Add(time.Minute)) // used again while the write failed
	u.giveBack(taken)
	got := u.take()
	if len(got) != 2 || !got["a"].Equal(t0) || !got["b"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("after giving back: %v", got)
	}
	if len(u.take()) != 0 {
		t.Fatal("taken twice")
	}
}
