package hooks

import (
	"testing"

	"github.com/tidings-dev/tidings"
)

func TestEverySourceRegistered(t *testing.T) {
	for _, s := range []string{tidings.HookStripe, tidings.HookGitHub, tidings.HookAlertmanager, tidings.HookGrafana, tidings.HookJSON} {
		if For(s) == nil {
			t.Errorf("no source %q", s)
		}
	}
	if For("gitlab") != nil || For("") != nil {
		t.Error("an unknown source has a Source")
	}
}

func TestDeliveryID(t *testing.T) {
	for in, want := range map[string]string{"": "", "evt_1": "evt_1", "72d3162e-cc78-11e3-81ab-4c9367dc0958": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
		"a b": "sha256:", "é": "sha256:"} {
		got := deliveryID(in)
		if want == "sha256:" && (len(got) != 39 || got[:7] != want) || want != "sha256:" && got != want {
			t.Errorf("%q → %q", in, got)
		}
		if len("hook:hook_0123456789ab:"+got) > tidings.MaxIdempotencyKeyLen {
			t.Errorf("%q is too long for a key", got)
		}
	}
}
