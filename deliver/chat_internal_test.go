package deliver

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestChatPriorities: every priority maps to Pushover's and Gotify's; urgent is
// Pushover's 1, not its emergency 2 (Tidings escalates urgent events itself).
func TestChatPriorities(t *testing.T) {
	for _, c := range []struct {
		p                tidings.Priority
		pushover, gotify int
	}{
		{0, 0, 5}, // the test message has none
		{tidings.PriorityMin, -2, 0},
		{tidings.PriorityLow, -1, 2},
		{tidings.PriorityDefault, 0, 5},
		{tidings.PriorityHigh, 1, 7},
		{tidings.PriorityUrgent, 1, 9},
	} {
		if got := pushoverPriority(c.p); got != c.pushover {
			t.Errorf("pushover priority of %v: %d, want %d", c.p, got, c.pushover)
		}
		if got := gotifyPriority(c.p); got != c.gotify {
			t.Errorf("gotify priority of %v: %d, want %d", c.p, got, c.gotify)
		}
	}
}

// TestClip: cuts count characters (runes) or UTF-16 units, never split a character,
// and end with "…".
func TestClip(t *testing.T) {
	for _, c := range []struct {
		s      string
		max    int
		clip   string
		clip16 string
	}{
		{"abc", 3, "abc", "abc"},
		{"abcd", 3, "ab…", "ab…"},
		{"😀😀😀", 3, "😀😀😀", "😀…"},
		{"😀😀😀", 4, "😀😀😀", "😀…"},
		{"a😀", 2, "a😀", "a…"},
		{"ab cd", 4, "ab…", "ab…"},
		{"x", 0, "", ""},
	} {
		if got := clip(c.s, c.max); got != c.clip {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.max, got, c.clip)
		}
		if got := clip16(c.s, c.max); got != c.clip16 {
			t.Errorf("clip16(%q, %d) = %q, want %q", c.s, c.max, got, c.clip16)
		}
		if len16(clip16(c.s, c.max)) > c.max {
			t.Errorf("clip16(%q, %d) is too long", c.s, c.max)
		}
	}
}

// TestChatRequestsNeverInvalid: hostile text in every field still makes valid
// requests, and a URL that does not parse is an error that does not name it.
func TestChatRequestsNeverInvalid(t *testing.T) {
	ev := &tidings.Event{ID: "e1", Project: "p", Channel: "c", Event: `"<a href=x>" & </b>`, Description: strings.Repeat(`<&">`, 3000),
		Parser: tidings.ParserText, URL: `https://example.com/?q="<>|)`}
	for _, f := range []string{tidings.FormatTelegram, tidings.FormatTeams, tidings.FormatGoogleChat, tidings.FormatMattermost,
		tidings.FormatPushover, tidings.FormatGotify, tidings.FormatSlack, tidings.FormatDiscord, tidings.FormatNtfy} {
		w := &tidings.Webhook{Format: f, URL: "https://chat.example.com/bot1:" + strings.Repeat("s", 30) + "/sendMessage?token=SECRET"}
		if _, err := webhookRequest(w, ev, "m", "https://t.example.com", ev.Timestamp); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		w.URL = "https://chat.example.com/%zz?token=SECRET"
		if _, err := webhookRequest(w, ev, "m", "", ev.Timestamp); err == nil || strings.Contains(PublicError(err), "SECRET") {
			t.Errorf("%s: a bad URL gives %v", f, err)
		}
	}
}
