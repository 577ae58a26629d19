package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestCLIHooks: hook create prints the path (and the secret when it made one), keeps
// what was asked in the store, refuses every wrong input in one line with nothing
// saved; hook list shows the hooks by id; hook delete deletes one of the account's.
func TestCLIHooks(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	c := cliCase{t, loc}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := []string{"hook", "create", "--project", "my-saas", "--channel", "payments"}
	create := func(args ...string) []string {
		t.Helper()
		return strings.Split(strings.TrimSuffix(c.ok("", append(base, args...)...), "\n"), "\n")
	}
	path := regexp.MustCompile(`^/hooks/hk_[A-Za-z0-9_-]{40,}$`)
	stored := func(line string) *tidings.Hook {
		t.Helper()
		if !path.MatchString(line) {
			t.Fatalf("first line %q is not a hook's path", line)
		}
		h, err := s.FindHookByPath(ctx, tidings.HashSecret(strings.TrimPrefix(line, "/hooks/")))
		if err != nil {
			t.Fatalf("the printed path finds no hook: %v", err)
		}
		if h.AccountID != f.Account.ID || h.Project != "my-saas" || h.Channel != "payments" || h.ID != tidings.HookID(h.PathHash) {
			t.Fatalf("stored %+v", h)
		}
		return h
	}

	// Stripe: the secret is Stripe's, so it is required and never printed.
	const stripeSecret = "whsec_abc123def456ghi789"
	c.fails(1, "--secret is required for stripe", append(base, "--source", "stripe")...)
	c.fails(1, "whsec_", append(base, "--source", "stripe", "--secret", "nope")...)
	out := create("--source", "stripe", "--secret", stripeSecret, "--name", "Stripe live")
	if len(out) != 1 {
		t.Fatalf("stripe: %q, want the path alone", out)
	}
	stripe := stored(out[0])
	if stripe.Source != "stripe" || stripe.Secret != stripeSecret || stripe.UserIDFrom != "customer" || stripe.Name != "Stripe live" {
		t.Errorf("stripe hook %+v", stripe)
	}
	if h := stored(create("--source", "stripe", "--secret", stripeSecret, "--user-id-from", "none")[0]); h.UserIDFrom != "none" {
		t.Errorf("--user-id-from none: %q", h.UserIDFrom)
	}

	// GitHub and the others: a secret is made and printed on the second line, unless given.
	out = create("--source", "github")
	if len(out) != 2 || len(out[1]) < 40 {
		t.Fatalf("github: %q, want the path and a made secret", out)
	}
	if h := stored(out[0]); h.Secret != out[1] || h.Source != "github" || h.UserIDFrom != "" {
		t.Errorf("github hook %+v, printed secret %q", h, out[1])
	}
	out = create("--source", "alertmanager", "--secret", "my-own-bearer-token")
	if len(out) != 1 || stored(out[0]).Secret != "my-own-bearer-token" {
		t.Errorf("alertmanager with --secret: %q", out)
	}
	// The hint on standard error says where the secret is: the second line when one was
	// printed, else the one given.
	for _, hc := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--source", "github"}, "Secret the second line", "--secret"},
		{[]string{"--source", "github", "--secret", "my-own-webhook-secret"}, "Secret the secret you gave with --secret", "second line"},
		{[]string{"--source", "grafana"}, "credentials the second line", "--secret"},
		{[]string{"--source", "json", "--template", write("hint.yaml", "event: x\n"), "--secret", "my-own-bearer-token"}, "Bearer and the secret you gave with --secret", "second line"},
		{[]string{"--source", "stripe", "--secret", stripeSecret}, "endpoint URL", "second line"},
	} {
		code, out, errs := runCLI(t, loc, "", append(base, hc.args...)...)
		if code != 0 || !strings.Contains(errs, hc.want) || strings.Contains(errs, hc.not) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a hint with %q, without %q", hc.args, code, out, errs, hc.want, hc.not)
		}
	}

	// JSON: a template from a YAML or JSON file, checked.
	yml := write("t.yaml", "event: 'Build {{.build.status}}'\ntags: '{\"branch\": {{printf \"%q\" .build.branch}}}'\nnotify: 'true'\n")
	out = create("--source", "json", "--template", yml)
	if len(out) != 2 {
		t.Fatalf("json: %q", out)
	}
	if h := stored(out[0]); h.Template == nil || h.Template.Event != "Build {{.build.status}}" || h.Template.Notify != "true" ||
		h.Template.Tags != `{"branch": {{printf "%q" .build.branch}}}` {
		t.Errorf("json hook's template %+v", h.Template)
	}
	js := write("t.json", `{"event":"Deployed {{.version}}","user_id":"{{.who}}","tags":"{\"v\": {{json .version}}}"}`)
	if h := stored(create("--source", "json", "--template", js)[0]); h.Template.Event != "Deployed {{.version}}" || h.Template.UserID != "{{.who}}" {
		t.Errorf("json file's template %+v", h.Template)
	}
	before, _ := s.ListHooks(ctx, f.Account.ID)
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--source", "json"}, "json hook needs a template"},
		{[]string{"--source", "json", "--template", write("typo.json", `{"evnet":"x"}`)}, "evnet"},
		{[]string{"--source", "json", "--template", write("typo.yaml", "event: x\nnotfy: 'true'\n")}, "notfy"},
		{[]string{"--source", "json", "--template", write("broken.yaml", "event: '{{.x'\n")}, "template.event"},
		{[]string{"--source", "json", "--template", filepath.Join(dir, "missing.yaml")}, "--template"},
		{[]string{"--source", "json", "--template", write("costly.yaml", "event: '{{range 1000000000}}x{{end}}'\n")}, "template.event"},
		{[]string{"--source", "json", "--template", write("define.yaml", "event: x\ndescription: '{{define \"a\"}}b{{end}}'\n")}, "template.description"},
		{[]string{"--source", "github", "--template", yml}, "json hooks only"},
		{[]string{"--source", "github", "--user-id-from", "customer"}, "stripe hooks only"},
		{[]string{"--source", "stripe", "--secret", stripeSecret, "--user-id-from", "email"}, "--user-id-from"},
		{[]string{"--source", "stripe", "--secret", "whsec_abc123"}, "--secret must be the endpoint's signing secret from Stripe's dashboard: whsec_ and at least 16 letters and digits"},
		{[]string{"--source", "github", "--secret", "short"}, "--secret must be at least 16 characters"},
		{[]string{"--source", "alertmanager", "--secret", "0123456789abcde"}, "--secret must be at least 16 characters"},
		{[]string{"--source", "gitlab"}, "must be stripe, github, alertmanager, grafana or json"},
		{[]string{}, "--source is required"},
	} {
		c.fails(1, bad.want, append(base, bad.args...)...)
	}
	c.fails(1, "project", "hook", "create", "--project", "nowhere", "--channel", "payments", "--source", "github")
	if after, _ := s.ListHooks(ctx, f.Account.ID); len(after) != len(before) {
		t.Fatalf("refused commands saved hooks: %d, then %d", len(before), len(after))
	}

	// list: one line per hook, id first; delete: one of the account's, once.
	hs, err := s.ListHooks(ctx, f.Account.ID)
	if err != nil || len(hs) != 11 {
		t.Fatalf("%d hooks, %v", len(hs), err)
	}
	lines := strings.Split(strings.TrimSuffix(c.ok("", "hook", "list"), "\n"), "\n")
	if len(lines) != len(hs) {
		t.Fatalf("hook list: %q", lines)
	}
	if f := strings.Fields(lines[0]); len(f) < 6 || f[0] != stripe.ID || !strings.Contains(lines[0], "Stripe live") || !regexp.MustCompile(`stripe +my-saas +payments +20`).MatchString(lines[0]) {
		t.Errorf("hook list's first line: %q (id %s)", lines[0], stripe.ID)
	}
	if out := c.ok("", "hook", "delete", stripe.ID); out != "deleted hook "+stripe.ID+"\n" {
		t.Errorf("delete: %q", out)
	}
	if _, err := s.FindHook(ctx, f.Account.ID, stripe.ID); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Errorf("the deleted hook is found: %v", err)
	}
	c.fails(1, "no hook "+stripe.ID, "hook", "delete", stripe.ID)
	// Another account's hook is not this account's to delete.
	g := testbackend.Seed(t, s, "globex")
	c.ok("", "hook", "create", "--account", "globex", "--project", "my-saas", "--channel", "payments", "--source", "github")
	theirs, _ := s.ListHooks(ctx, g.Account.ID)
	c.fails(1, "no hook", "hook", "delete", theirs[0].ID, "--account", "acme")
}
