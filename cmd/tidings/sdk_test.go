package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/testenv"
)

// logsnagNode is the version of the LogSnag Node SDK the README's snippet is tested with.
const logsnagNode = "@logsnag/node@1.0.1"

// docSnippet returns the code block (of language lang) that follows marker in the
// document doc (a path from the repository's root).
func docSnippet(t *testing.T, doc, marker, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s has no %s", doc, marker)
	}
	_, code, _ := strings.Cut(after, "```"+lang+"\n")
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		t.Fatalf("no code block after %s in %s", marker, doc)
	}
	return code
}

// TestLogSnagSDK runs the published LogSnag Node SDK, pointed at Tidings by exactly the
// README's snippet: track, identify, group and an increment arrive, and a refused call
// surfaces Tidings' message in the SDK's error.
// logsnagSDKs are the published LogSnag SDKs the tests run, each with how a script
// loads it: @logsnag/next's server half through ESM (its CommonJS entry points at a
// file the package does not ship).
var logsnagSDKs = []struct{ pkg, project, load string }{
	{logsnagNode, "sdk-node", `const { LogSnag } = require("@logsnag/node");`},
	{"logsnag@1.0.0", "sdk-logsnag", `const { LogSnag } = require("logsnag");`},
	{"@logsnag/next@1.0.3", "sdk-next", `import { LogSnag } from "@logsnag/next/server";`},
}

// TestLogSnagSDK runs the README's snippet with each published SDK (logsnagSDKs), and
// every method each has: track with every option, identify, group, insight.track (with
// the project's "missing change means update" on) and insight.increment, and a call the
// server refuses, whose message the SDK must print. A track with the intent fields
// (priority, url, actions, key: the SDKs copy every option into the body) is stored and
// echoed. Then it reads what was stored.
func TestLogSnagSDK(t *testing.T) {
	t.Parallel()
	testbackend.Once(t) // the SDKs' requests, not the store: what they store is checked on both by the API's tests
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Need(t, "Node.js is needed for the LogSnag SDK test: apt-get install nodejs npm")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Need(t, "npm is needed to install the LogSnag SDKs for the SDK test: apt-get install npm")
	}
	dir := t.TempDir()
	// Generous: npm and node start slowly on a loaded two-core machine (the whole suite
	// runs beside this test), and a deadline here is a hang guard, not a timing target.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"install", "--no-audit", "--no-fund", "--silent"}
	for _, sdk := range logsnagSDKs {
		args = append(args, sdk.pkg)
	}
	install := exec.CommandContext(ctx, npm, args...)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		testenv.Need(t, "npm install of the LogSnag SDKs failed (no registry?): %v\n%s", err, out)
	}

	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	if code, _, errs := runCLI(t, loc, "", "account", "create", "acme"); code != 0 {
		t.Fatal(errs)
	}
	for _, sdk := range logsnagSDKs {
		for _, args := range [][]string{{"project", "create", sdk.project, "--insight-change-default", "update"}, {"channel", "create", sdk.project, "payments"}} {
			if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
				t.Fatalf("%v: %s", args, errs)
			}
		}
	}
	_, token, _ := runCLI(t, loc, "", "token", "create", "--access", "full")
	snippet := docSnippet(t, "README.md", "<!-- sdk-node -->", "js")
	const when = 1_790_000_000 // unix seconds: 2026-09-21
	for _, sdk := range logsnagSDKs {
		t.Run(sdk.project, func(t *testing.T) {
			script := strings.Replace(strings.Replace(snippet, `const { LogSnag } = require("@logsnag/node");`, sdk.load, 1),
				`project: "my-saas"`, `project: "`+sdk.project+`"`, 1)
			if !strings.Contains(script, sdk.load) || !strings.Contains(script, sdk.project) {
				t.Fatalf("the README's snippet no longer loads the SDK as the test expects:\n%s", snippet)
			}
			script += fmt.Sprintf(`
// The SDKs answer true, not the server's answer: keep the answer to the intent track.
const sdkFetch = globalThis.fetch;
globalThis.fetch = async (url, opts) => {
  const res = await sdkFetch(url, opts);
  if (opts && typeof opts.body === "string" && opts.body.includes("deploy-1432")) {
    console.log("echo: " + (await res.clone().text()).trim());
  }
  return res;
};
const main = async () => {
  await logsnag.track({ channel: "payments", event: "Deploy 1432 waits", notify: true, priority: "urgent",
    url: "https://ci.example.com/d/1432", key: "deploy-1432",
    actions: [{ label: "Open PR", url: "https://github.com/acme/app/pull/1432" }, { label: "Approve", id: "approve" }] });
  await logsnag.track({ channel: "payments", event: "New Subscription", description: "**Pro** plan", icon: "💰", user_id: "user-42",
    tags: { plan: "premium", seats: 3, trial: false }, notify: true, parser: "markdown", timestamp: %d });
  await logsnag.identify({ user_id: "user-42", properties: { name: "Ada", plan: "premium", seats: 3 } });
  await logsnag.group({ user_id: "user-42", group_id: "acme-inc", properties: { industry: "retail" } });
  await logsnag.insight.track({ title: "Status", value: "green", icon: "🟢" });
  await logsnag.insight.increment({ title: "Signups", value: 2, icon: "👥" });
  await logsnag.insight.increment({ title: "Signups", value: 3 });
  for (const call of [
    () => logsnag.identify({ user_id: "user-42", properties: { "Bad Key": 1 } }),
    () => logsnag.track({ channel: "deploys", event: "Deployed" }),
    () => logsnag.track({ channel: "payments", event: "Loud", priority: "loud", actions: [{ label: "", id: "x" }] }),
  ]) {
    try {
      await call();
      console.log("refused: no");
    } catch (e) {
      console.log("refused: " + e.message);
    }
  }
};
main().catch((e) => { console.error(e); process.exit(1); });
`, when)
			file := filepath.Join(dir, sdk.project+".js")
			if strings.HasPrefix(sdk.load, "import") {
				// ESM: the snippet's require of nothing else still works through createRequire.
				file = filepath.Join(dir, sdk.project+".mjs")
			}
			if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			run := exec.CommandContext(ctx, node, file)
			run.Dir = dir
			run.Env = append(os.Environ(), "TIDINGS_URL="+m.URL(), "TIDINGS_TOKEN="+strings.TrimSpace(token))
			out, err := run.CombinedOutput()
			if err != nil {
				t.Fatalf("the SDK script failed: %v\n%s", err, out)
			}
			for _, want := range []string{"refused: [LogSnag] Failed to publish: properties.Bad Key: property key must be",
				`refused: [LogSnag] Failed to publish: channel "deploys" does not exist in project "` + sdk.project + `"`,
				`refused: [LogSnag] Failed to publish: priority: must be "min", "low", "default", "high" or "urgent" (or 1 to 5), actions.0.label: is required`,
				`,"priority":"urgent","url":"https://ci.example.com/d/1432","actions":[{"label":"Open PR","url":"https://github.com/acme/app/pull/1432"},{"label":"Approve","id":"approve"}],"key":"deploy-1432"}`} {
				if !strings.Contains(string(out), want) {
					t.Fatalf("the SDK's error for a refused call lacks %q:\n%s", want, out)
				}
			}

			s := testbackend.Open(t, loc)
			a, err := s.FindAccount(context.Background(), "acme")
			if err != nil {
				t.Fatal(err)
			}
			u, err := s.FindPerson(context.Background(), a.ID, sdk.project, "user-42")
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Properties) != 3 || u.Properties[0].Value != "Ada" || len(u.Groups) != 1 || u.Groups[0] != "acme-inc" {
				t.Fatalf("user-42 after identify and group: %+v", u)
			}
			page, err := s.ListEvents(context.Background(), a.ID, tidings.EventQuery{Project: sdk.project, Limit: 10})
			if err != nil || len(page.Events) != 2 {
				t.Fatalf("the tracked events: %+v %v", page, err)
			}
			intent, ev := page.Events[0], page.Events[1] // newest first: the one with a timestamp is older
			if intent.Event != "Deploy 1432 waits" || intent.Priority != tidings.PriorityUrgent || intent.URL != "https://ci.example.com/d/1432" ||
				intent.ThreadKey != "deploy-1432" || len(intent.Actions) != 2 || intent.Actions[1] != (tidings.Action{Label: "Approve", ID: "approve"}) {
				t.Fatalf("the event tracked with priority, url, actions and key: %+v", intent)
			}
			if ev.Event != "New Subscription" || ev.Description != "**Pro** plan" || ev.Parser != "markdown" || ev.Icon != "💰" || !ev.Notify ||
				ev.UserID != "user-42" || ev.Timestamp.Unix() != when || ev.Channel != "payments" ||
				string(ev.Tags.JSON()) != `{"plan":"premium","seats":3,"trial":false}` {
				t.Fatalf("the tracked event, with every option: %+v (tags %s)", ev, ev.Tags.JSON())
			}
			ins, err := s.ListInsights(context.Background(), a.ID, sdk.project)
			if err != nil {
				t.Fatal(err)
			}
			values := map[string]string{}
			for _, in := range ins {
				values[in.Title+" "+in.Icon] = in.Value
			}
			if len(ins) != 2 || values["Status 🟢"] != "green" || values["Signups 👥"] != "5" {
				t.Fatalf("the insights after insight.track and two increments: %v", values)
			}
		})
	}
}

// TestPythonSnippet runs docs/api.md's Python snippet: with the published logsnag package
// when pip can install it, else with a stand-in that sends the same requests
// (testdata/python-standin: PyPI is out of reach on some machines, these included), and
// says which it ran against. track, identify and an increment arrive; a refused call
// raises with Tidings' message.
func TestPythonSnippet(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		testenv.Need(t, "python3 is needed for the Python snippet test: apt-get install python3 python3-requests")
	}
	if out, err := exec.Command(python, "-c", "import requests").CombinedOutput(); err != nil {
		testenv.Need(t, "the Python snippet test needs requests (apt-get install python3-requests): %s", out)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pythonPath, sdk := dir, "the published logsnag package"
	pipCtx, pipCancel := context.WithTimeout(ctx, 30*time.Second)
	install := exec.CommandContext(pipCtx, python, "-m", "pip", "install", "--quiet", "--no-deps", "--retries", "0", "--timeout", "5",
		"--target", dir, "logsnag")
	out, err := install.CombinedOutput()
	pipCancel()
	if err != nil {
		standin, _ := filepath.Abs(filepath.Join("testdata", "python-standin"))
		pythonPath, sdk = standin, "the stand-in"
		t.Logf("RAN AGAINST THE STAND-IN, not the published logsnag package (pip install logsnag failed: no PyPI here?): "+
			"testdata/python-standin sends what the package sends\n%s", lastLine(out))
	}

	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	for _, args := range [][]string{{"account", "create", "acme"}, {"project", "create", "my-saas"}, {"channel", "create", "my-saas", "payments"}} {
		if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, token, _ := runCLI(t, loc, "", "token", "create", "--access", "public")
	script := docSnippet(t, "docs/api.md", "<!-- sdk-python -->", "python") + `
logsnag.track(channel="payments", event="Python Subscription", icon="🐍", user_id="user-7", tags={"plan": "free"})
logsnag.identify(user_id="user-7", properties={"name": "Grace", "seats": 2})
logsnag.insight.increment(title="Signups", value=3, icon="👥")
try:
    logsnag.identify(user_id="user-7", properties={"Bad Key": 1})
    print("refused: no")
except Exception as e:
    print("refused:", e)
`
	if err := os.WriteFile(filepath.Join(dir, "sdk.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, python, "sdk.py")
	run.Dir = dir
	run.Env = append(os.Environ(), "PYTHONPATH="+pythonPath, "TIDINGS_URL="+m.URL(), "TIDINGS_TOKEN="+strings.TrimSpace(token))
	out, err = run.CombinedOutput()
	if err != nil {
		t.Fatalf("the snippet with %s failed: %v\n%s", sdk, err, out)
	}
	if !strings.Contains(string(out), "refused:") || !strings.Contains(string(out), "property key must be") {
		t.Fatalf("the error of a refused call, with %s: %s", sdk, out)
	}

	s := testbackend.Open(t, loc)
	a, err := s.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.FindPerson(context.Background(), a.ID, "my-saas", "user-7")
	if err != nil || len(u.Properties) != 2 || u.Properties[0].Value != "Grace" || u.Events != 1 {
		t.Fatalf("user-7 after track and identify: %+v %v", u, err)
	}
	ins, err := s.ListInsights(context.Background(), a.ID, "my-saas")
	if err != nil || len(ins) != 1 || ins[0].Value != "3" {
		t.Fatalf("the incremented insight: %+v %v", ins, err)
	}
}

// lastLine is the last non-empty line of out.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
