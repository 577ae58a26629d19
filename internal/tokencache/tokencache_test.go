package tokencache

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestExpires(t *testing.T) {
	c := &clock{time.Unix(1e9, 0)}
	cache := New(c.now)
	got, gen := cache.Get("a")
	if got != nil {
		t.Fatal("empty cache returned a token")
	}
	cache.Put(&tidings.Token{ID: "a", Name: "ci"}, gen)
	c.t = c.t.Add(TTL - time.Millisecond)
	if got, _ := cache.Get("a"); got == nil || got.Name != "ci" {
		t.Fatalf("within TTL: %+v", got)
	}
	c.t = c.t.Add(time.Millisecond)
	if got, _ := cache.Get("a"); got != nil {
		t.Fatal("token kept past its TTL")
	}
	if cache.Len() != 0 {
		t.Fatalf("expired entry not dropped: %d", cache.Len())
	}
}

func TestGetReturnsACopy(t *testing.T) {
	cache := New(nil)
	_, gen := cache.Get("a")
	cache.Put(&tidings.Token{ID: "a", Name: "ci"}, gen)
	got, _ := cache.Get("a")
	got.Name = "changed"
	if again, _ := cache.Get("a"); again.Name != "ci" {
		t.Fatal("a caller's change reached the cache")
	}
}

// A read that began before a revocation (and so may hold the old row) must not be
// stored after the revocation cleared the cache.
func TestClearBeatsAnEarlierRead(t *testing.T) {
	cache := New(nil)
	_, gen := cache.Get("a")
	cache.Clear() // the revocation commits while the read is in flight
	cache.Put(&tidings.Token{ID: "a"}, gen)
	if got, _ := cache.Get("a"); got != nil {
		t.Fatal("a read from before the revocation was kept")
	}
	_, gen = cache.Get("a")
	cache.Put(&tidings.Token{ID: "a"}, gen)
	if got, _ := cache.Get("a"); got == nil {
		t.Fatal("a read after the revocation was not kept")
	}
	cache.Clear()
	if got, _ := cache.Get("a"); got != nil || cache.Len() != 0 {
		t.Fatal("Clear kept a token")
	}
}

// Many distinct valid tokens in one second never grow the cache beyond Max.
func TestBounded(t *testing.T) {
	cache := New(nil)
	for i := range 3 * Max {
		id := fmt.Sprint("t", i)
		_, gen := cache.Get(id)
		cache.Put(&tidings.Token{ID: id}, gen)
		if cache.Len() > Max {
			t.Fatalf("%d tokens kept, cap %d", cache.Len(), Max)
		}
	}
}
