package hooks

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

func TestTagKey(t *testing.T) {
	for in, want := range map[string]string{"alertname": "alertname", "Zone_Name": "zone-name", "__name__": "name", "a..b": "a-b",
		"": "", "___": "", "été": "t", strings.Repeat("x ", 100): strings.TrimSuffix(strings.Repeat("x-", 32), "-"),
		strings.Repeat("ab_", 40): strings.Repeat("ab-", 21) + "a"} {
		got := tagKey(in)
		if got != want || got != "" && !tidings.ValidName(got) {
			t.Errorf("%.20q → %q, want %q", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	if got := cut("héllo wörld", 7); got != "héllo…" {
		t.Errorf("%q", got)
	}
	if got := line("a\r\n\tb\u202ec\x00", 100); got != "a bc" {
		t.Errorf("%q", got)
	}
	if got := text("a\r\nb\x07\u202ec"); got != "a\nbc" {
		t.Errorf("%q", got)
	}
}
