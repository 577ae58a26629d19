package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestTailChannelLimitedToken: tail with a token limited to one channel, without
// --channel, ends at once with one line that names the flag to add, not the API's
// query parameter.
func TestTailChannelLimitedToken(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	m := startServer(t, data, nil)
	for _, args := range [][]string{{"account", "create", "acme"}, {"project", "create", "my-saas"}, {"channel", "create", "my-saas", "payments"}} {
		if code, _, errs := runCLI(t, data, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	code, tok, errs := runCLI(t, data, "", "token", "create", "--access", "full", "--project", "my-saas", "--channel", "payments")
	if code != 0 {
		t.Fatal(errs)
	}
	var out, stderr syncBuffer
	code = run(context.Background(), []string{"tail", "--url", m.URL(), "--token", strings.TrimSpace(tok), "-p", "my-saas"},
		strings.NewReader(""), &out, &stderr)
	if code != 1 || out.String() != "" || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), `limited to channel "payments"`) || !strings.Contains(stderr.String(), ": add --channel payments") ||
		strings.Contains(stderr.String(), "channel=") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and one line naming --channel payments", code, out.String(), stderr.String())
	}
}
