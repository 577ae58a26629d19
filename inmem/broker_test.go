package inmem

import (
	"testing"

	"github.com/tidings-dev/tidings"
)

func TestBrokerDeliversToOwnAccountOnly(t *testing.T) {
	b := NewBroker(4)
	a := b.Subscribe(1)
	defer a.Close()
	other := b.Subscribe(2)
	defer other.Close()

	b.Publish(tidings.Notice{AccountID: 1, Event: &tidings.Event{ID: "e1"}})
	if n := <-a.C(); n.Event.ID != "e1" {
		t.Fatalf("got %+v", n)
	}
	select {
	case n := <-other.C():
		t.Fatalf("account 2 received account 1's notice %+v", n)
	default:
	}
}

func TestBrokerDropsSlowSubscriberWithoutBlocking(t *testing.T) {
	b := NewBroker(2)
	slow := b.Subscribe(1)
	for i := 0; i < 5; i++ { // must not block although nobody reads
		b.Publish(tidings.Notice{AccountID: 1, Event: &tidings.Event{}})
	}
	got := 0
	for range slow.C() { // closed after the overflow
		got++
	}
	if got != 2 {
		t.Fatalf("slow subscriber got %d buffered notices, want 2", got)
	}
	slow.Close() // closing twice is harmless
}
