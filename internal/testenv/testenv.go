// Package testenv says what a test may assume of the machine it runs on: whether a
// service it needs (PostgreSQL, Chromium, Node.js, nginx, …) must be there.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// EnvRequire names the variable that turns "skipped: no such service" into a failure.
// CI sets it (.ci/run), so that nothing there is silently untested.
const EnvRequire = "TIDINGS_REQUIRE_SERVICES"

// Required reports whether services a test needs must be present (TIDINGS_REQUIRE_SERVICES=1).
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Need is called when a service a test needs is absent: it skips the test with the
// message (which should say how to install the service), or fails it where services
// are required.
func Need(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (required: %s=1)", msg, EnvRequire)
	}
	t.Skip("skipped: " + msg)
}
