package tidings

import (
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

func TestNormalizeIcon(t *testing.T) {
	for in, want := range map[string]string{
		"💰": "💰", "👩‍👩‍👧": "👩‍👩‍👧", "🇩🇪": "🇩🇪", "👍🏽": "👍🏽", "1️⃣": "1️⃣", "#️⃣": "#️⃣", "❤️": "❤️", "☀": "☀",
		"🏳️‍🌈": "🏳️‍🌈", "🏴󠁧󠁢󠁳󠁣󠁴󠁿": "🏴󠁧󠁢󠁳󠁣󠁴󠁿", ":moneybag:": "💰", ":rocket:": "🚀", "": "",
	} {
		got, ok := NormalizeIcon(in)
		if !ok || got != want {
			t.Errorf("NormalizeIcon(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"a", "ab", "1", "#", "💰💰", "💰 ", " 💰", "🇩", ":nope:", "::", ":moneybag", "é", "\u200d", "\ufe0f", "\xff"} {
		if got, ok := NormalizeIcon(bad); ok {
			t.Errorf("NormalizeIcon(%q) accepted as %q", bad, got)
		}
	}
}

// FuzzNormalizeIcon: whatever is accepted is valid UTF-8 and exactly one grapheme cluster.
func FuzzNormalizeIcon(f *testing.F) {
	for _, s := range []string{"💰", "👩‍👩‍👧", "🇩🇪", "👍🏽", "1️⃣", ":moneybag:", "ab", "🇩🇪🇩", "\u20e3", "a\u20e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := NormalizeIcon(s)
		if !ok || got == "" {
			return
		}
		if !utf8.ValidString(got) || uniseg.GraphemeClusterCount(got) != 1 {
			t.Fatalf("NormalizeIcon(%q) = %q: not one grapheme", s, got)
		}
	})
}
