package tidings

import (
	"strings"
	"testing"
)

// TestNewHookSecret: a secret the owner chooses is at least MinHookSecret characters;
// Stripe's has the shape of Stripe's signing secrets; a secret left out is no problem
// (the caller makes one, or, for Stripe, requires it).
func TestNewHookSecret(t *testing.T) {
	t.Parallel()
	stripe := "whsec_" + strings.Repeat("aB3", 6)
	for _, c := range []struct {
		source, secret string
		want           string // the problem's type; "" none
	}{
		{HookGitHub, "", ""},
		{HookGitHub, "0123456789abcdef", ""},
		{HookGitHub, "short", "too_short"},
		{HookGitHub, "0123456789abcde", "too_short"},
		{HookAlertmanager, "éééééééééééééééé", ""}, // characters, not bytes
		{HookAlertmanager, "my-own-bearer", "too_short"},
		{HookGrafana, "grafana-token", "too_short"},
		{HookJSON, "x", "too_short"},
		{HookStripe, stripe, ""},
		{HookStripe, "whsec_" + strings.Repeat("0", 64), ""}, // the Stripe CLI's
		{HookStripe, "whsec_abc123", "format"},
		{HookStripe, "sk_live_0123456789abcdefghij", "format"},
		{HookStripe, "whsec_0123456789abcde!", "format"},
		{HookGitHub, strings.Repeat("s", 257), "format"},
		{HookGitHub, "0123456789 abcdef", "format"},
	} {
		h := NewHook{Project: "my-saas", Channel: "payments", Source: c.source, Secret: c.secret}
		if c.source == HookJSON {
			h.Template = &HookTemplate{Event: "{{.x}}"}
		}
		var p Problems
		h.Check(&p)
		got := ""
		for _, f := range p {
			if f.Path == "secret" {
				got = f.Type
			}
		}
		if got != c.want || len(p) > 0 && c.want == "" {
			t.Errorf("%s %q: problems %v, want a secret problem %q", c.source, c.secret, p, c.want)
		}
	}
	var p Problems
	(&NewHook{Project: "my-saas", Channel: "payments", Source: HookGitHub, Secret: "short"}).Check(&p)
	if err := p.Err(); ErrorMessage(err) != "secret: must be at least 16 characters (leave it out to have a long random one made)" {
		t.Errorf("the message: %q", ErrorMessage(err))
	}
}
