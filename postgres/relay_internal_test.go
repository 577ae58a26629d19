package postgres

import "testing"

// The schema "public" keeps the channel of the versions before per-schema channels (a
// rolling upgrade's old and new instances hear each other); other schemas get channels
// of their own, distinct, and valid as an unquoted LISTEN name.
func TestNotifyChannel(t *testing.T) {
	if got := notifyChannel("public"); got != channelName {
		t.Fatalf("public: %q, want %q", got, channelName)
	}
	a, b := notifyChannel("staging"), notifyChannel("Staging")
	if a == b || a == channelName {
		t.Fatalf("staging %q, Staging %q", a, b)
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') || len(a) > 63 {
			t.Fatalf("%q is not a plain identifier", a)
		}
	}
}
