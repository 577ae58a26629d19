package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// logsnagNode is the version of the LogSnag Node SDK the README's snippet is tested with.
const logsnagNode = "@logsnag/node@1.0.1"

// readmeSnippet returns the code block that follows marker in README.md.
func readmeSnippet(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("README.md has no %s", marker)
	}
	_, code, _ := strings.Cut(after, "```js\n")
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		t.Fatalf("no code block after %s in README.md", marker)
	}
	return code
}

// TestLogSnagSDK runs the published LogSnag Node SDK, pointed at Tidings by exactly the
// README's snippet: track, identify, group and an increment arrive, and a refused call
// surfaces Tidings' message in the SDK's error.
func TestLogSnagSDK(t *testing.T) {
	need := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("TIDINGS_REQUIRE_SERVICES") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		need("Node.js is needed for the LogSnag SDK test (TIDINGS_REQUIRE_SERVICES=1 requires it): apt-get install nodejs npm")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		need("npm is needed to install %s for the SDK test: apt-get install npm", logsnagNode)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", logsnagNode)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		need("npm install %s failed (no registry?): %v\n%s", logsnagNode, err, out)
	}

	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	for _, args := range [][]string{{"account", "create", "acme"}, {"project", "create", "my-saas"}, {"channel", "create", "my-saas", "payments"}} {
		if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, token, _ := runCLI(t, loc, "", "token", "create", "--access", "public")
	script := readmeSnippet(t, "<!-- sdk-node -->") + `
(async () => {
  await logsnag.track({ channel: "payments", event: "New Subscription", icon: "💰", user_id: "user-42", tags: { plan: "premium" } });
  await logsnag.identify({ user_id: "user-42", properties: { name: "Ada", plan: "premium", seats: 3 } });
  await logsnag.group({ user_id: "user-42", group_id: "acme-inc", properties: { industry: "retail" } });
  await logsnag.insight.increment({ title: "Signups", value: 2, icon: "👥" });
  try {
    await logsnag.identify({ user_id: "user-42", properties: { "Bad Key": 1 } });
    console.log("refused: no");
  } catch (e) {
    console.log("refused: " + e.message);
  }
})().catch((e) => { console.error(e); process.exit(1); });
`
	if err := os.WriteFile(filepath.Join(dir, "sdk.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, node, "sdk.js")
	run.Dir = dir
	run.Env = append(os.Environ(), "TIDINGS_URL="+m.URL(), "TIDINGS_TOKEN="+strings.TrimSpace(token))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the SDK script failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "refused: [LogSnag] Failed to publish: properties.Bad Key: property key must be") {
		t.Fatalf("the SDK's error for a refused call: %s", out)
	}

	s := testbackend.Open(t, loc)
	a, err := s.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.FindPerson(context.Background(), a.ID, "my-saas", "user-42")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Properties) != 3 || u.Properties[0].Value != "Ada" || len(u.Groups) != 1 || u.Groups[0] != "acme-inc" {
		t.Fatalf("user-42 after identify and group: %+v", u)
	}
	page, err := s.ListEvents(context.Background(), a.ID, tidings.EventQuery{Project: "my-saas", Limit: 10})
	if err != nil || len(page.Events) != 1 || page.Events[0].UserID != "user-42" {
		t.Fatalf("the tracked event: %+v %v", page, err)
	}
	ins, err := s.ListInsights(context.Background(), a.ID, "my-saas")
	if err != nil || len(ins) != 1 || ins[0].Value != "2" {
		t.Fatalf("the incremented insight: %+v %v", ins, err)
	}
}
