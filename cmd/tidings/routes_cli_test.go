package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// cliCase runs commands on one store: ok wants exit 0 and returns standard output;
// fails wants the exit code, nothing on standard output and a one-line error with want.
type cliCase struct {
	t   *testing.T
	loc string
}

func (c cliCase) ok(stdin string, args ...string) string {
	c.t.Helper()
	code, out, errs := runCLI(c.t, c.loc, stdin, args...)
	if code != 0 {
		c.t.Fatalf("%q: exit %d: %s", args, code, errs)
	}
	return out
}

func (c cliCase) fails(exit int, want string, args ...string) {
	c.t.Helper()
	code, out, errs := runCLI(c.t, c.loc, "", args...)
	if code != exit || out != "" || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		c.t.Fatalf("%q: exit %d, stdout %q, stderr %q; want exit %d and a one-line error with %q", args, code, out, errs, exit, want)
	}
}

// TestCLIUserNotify: user notify sets a member's routes for a project and for a
// channel (and forgets a channel's with --by project), and their digest; without
// --by or --digest it prints and changes nothing; the store keeps exactly what was
// said; every wrong input is a one-line error that saves nothing.
func TestCLIUserNotify(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	c := cliCase{t, loc}
	c.ok("correct horse battery\n", "user", "create", "ada@example.com")
	c.ok("correct horse battery\n", "user", "create", "bob@example.com")
	c.ok("", "channel", "create", "my-saas", "deploys")
	c.ok("", "project", "create", "shop")
	users, err := s.ListUsers(ctx, f.Account.ID)
	if err != nil || len(users) != 2 {
		t.Fatal(users, err)
	}
	ada, bob := users[0], users[1]
	// saved is the store's routes and digests of the account's members, in one line.
	saved := func() string {
		t.Helper()
		rs, err := s.AccountRoutes(ctx, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			who := map[int64]string{ada.ID: "ada", bob.ID: "bob"}[r.UserID]
			out = append(out, fmt.Sprintf("%s %s/%s=%s", who, r.Project, r.Channel, r.Routes))
		}
		for _, u := range users {
			ds, err := s.MemberDigests(ctx, f.Account.ID, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for p, every := range ds {
				out = append(out, fmt.Sprintf("%s digest %s=%s", strings.Split(u.Email, "@")[0], p, every))
			}
		}
		slices.Sort(out)
		return strings.Join(out, ", ")
	}
	notify := func(want string, args ...string) {
		t.Helper()
		if out := c.ok("", append([]string{"user", "notify"}, args...)...); out != want+"\n" {
			t.Fatalf("user notify %q printed %q, want %q", args, out, want)
		}
	}

	// Nothing chosen: push, no digest; printing saves nothing.
	notify("ada@example.com: my-saas by push; digest off", "ada@example.com", "--project", "my-saas")
	notify("ada@example.com: my-saas/#payments by push (as the project); digest off", "ada@example.com", "--project", "my-saas", "--channel", "payments")
	if got := saved(); got != "" {
		t.Fatalf("printing saved %q", got)
	}

	// The project, then a channel of it with the digest, then another channel.
	notify("ada@example.com: my-saas by email; digest off", "ada@example.com", "--project", "my-saas", "--by", "email")
	notify("ada@example.com: my-saas/#payments by push,email; digest weekly",
		"ada@example.com", "--project", "my-saas", "--channel", "payments", "--by", "email, push", "--digest", "weekly", "--account", "acme")
	notify("ada@example.com: my-saas/#deploys by none; digest weekly", "ADA@example.com", "--project", "my-saas", "--channel", "deploys", "--by", "none")
	notify("ada@example.com: my-saas/#deploys by none; digest daily", "ada@example.com", "--project", "my-saas", "--channel", "deploys", "--digest", "Daily")
	if got, want := saved(), "ada digest my-saas=daily, ada my-saas/=email, ada my-saas/deploys=none, ada my-saas/payments=push,email"; got != want {
		t.Fatalf("stored %q, want %q", got, want)
	}
	notify("ada@example.com: my-saas by email; my-saas/#deploys by none; my-saas/#payments by push,email; digest daily", "ada@example.com", "--project", "my-saas")
	// Another member and another project are apart.
	notify("bob@example.com: my-saas by push; digest off", "bob@example.com", "--project", "my-saas")
	notify("ada@example.com: shop by push; digest off", "ada@example.com", "--project", "shop")
	notify("bob@example.com: shop by push,email; digest weekly", "bob@example.com", "--project", "shop", "--by", "push,email", "--digest", "weekly")

	// A channel follows the project again; the digest goes off.
	notify("ada@example.com: my-saas/#deploys by email (as the project); digest daily", "ada@example.com", "--project", "my-saas", "--channel", "deploys", "--by", "project")
	notify("ada@example.com: my-saas by email; my-saas/#payments by push,email; digest off", "ada@example.com", "--project", "my-saas", "--digest", "off")
	const want = "ada my-saas/=email, ada my-saas/payments=push,email, bob digest shop=weekly, bob shop/=push,email"
	if got := saved(); got != want {
		t.Fatalf("stored %q, want %q", got, want)
	}

	// Every wrong input: one line, exit 1 (2 for the arguments), nothing saved.
	c.ok("", "account", "create", "globex")
	c.ok("correct horse battery\n", "user", "create", "zed@example.com", "--account", "globex")
	c.ok("", "project", "create", "my-saas", "--account", "globex")
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"carol@example.com is not a member of account acme", []string{"carol@example.com", "--project", "my-saas", "--by", "email"}},
		{"carol@example.com is not a member of account acme", []string{"carol@example.com", "--project", "my-saas"}},
		{"zed@example.com is not a member of account acme", []string{"zed@example.com", "--project", "my-saas", "--by", "email", "--account", "acme"}},
		{"ada@example.com is not a member of account globex", []string{"ada@example.com", "--project", "my-saas", "--digest", "daily", "--account", "globex"}},
		{`project "nope" does not exist`, []string{"ada@example.com", "--project", "nope", "--by", "email"}},
		{`project "nope" does not exist`, []string{"ada@example.com", "--project", "nope"}},
		{`channel "nope" does not exist`, []string{"ada@example.com", "--project", "my-saas", "--channel", "nope", "--by", "email", "--digest", "daily"}},
		{`channel "nope" does not exist`, []string{"ada@example.com", "--project", "my-saas", "--channel", "nope"}},
		{`channel "payments" does not exist`, []string{"ada@example.com", "--project", "shop", "--channel", "payments", "--by", "push"}},
		{`--by must be push, email, push,email or none (got "sms")`, []string{"ada@example.com", "--project", "my-saas", "--by", "sms", "--digest", "daily"}},
		{`--by must be push, email, push,email or none (got "push,sms")`, []string{"ada@example.com", "--project", "my-saas", "--by", "push,sms"}},
		{`--by must be push, email, push,email or none (got "")`, []string{"ada@example.com", "--project", "my-saas", "--by", ""}},
		{`--by must be`, []string{"ada@example.com", "--project", "my-saas", "--by", "none,push"}},
		{"--by project is for a channel", []string{"ada@example.com", "--project", "my-saas", "--by", "project"}},
		{`--digest must be off, daily or weekly (got "monthly")`, []string{"ada@example.com", "--project", "my-saas", "--by", "push", "--digest", "monthly"}},
		{`--digest must be off, daily or weekly (got "")`, []string{"ada@example.com", "--project", "my-saas", "--digest", ""}},
		{"--project is required", []string{"ada@example.com", "--by", "email"}},
		{`no account named "initech"`, []string{"ada@example.com", "--project", "my-saas", "--by", "email", "--account", "initech"}},
	} {
		if !slices.Contains(tc.args, "--account") {
			tc.args = append(tc.args, "--account", "acme") // two accounts now
		}
		c.fails(1, tc.want, append([]string{"user", "notify"}, tc.args...)...)
	}
	c.fails(2, "missing EMAIL", "user", "notify", "--project", "my-saas", "--account", "acme")
	c.fails(2, "too many arguments", "user", "notify", "ada@example.com", "bob@example.com", "--project", "my-saas", "--account", "acme")
	if got := saved(); got != want {
		t.Fatalf("a refused command changed the store: %q, want %q", got, want)
	}

	// A deleted channel takes its routes with it.
	c.ok("", "channel", "delete", "my-saas", "payments", "--yes", "--account", "acme")
	notify("ada@example.com: my-saas by email; digest off", "ada@example.com", "--project", "my-saas", "--account", "acme")

	// The help says what --by and --digest take.
	if code, out, _ := runCLI(t, "", "", "user", "notify", "--help"); code != 0 || !strings.Contains(out, "--by routes") ||
		!strings.Contains(out, "push, email, push,email or none") || !strings.Contains(out, "--digest off|daily|weekly\n") {
		t.Fatalf("user notify --help: %d\n%s", code, out)
	}
}

// TestCLIEscalateAfter: project create and update --escalate-after set the project's
// escalation delay, project list and update print it, and each wrong value is a
// one-line error that saves nothing (not the other settings of the same command).
func TestCLIEscalateAfter(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	c := cliCase{t, loc}
	escalation := func(project string) time.Duration {
		t.Helper()
		p, err := s.FindProject(ctx, f.Account.ID, project)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := s.ListProjects(ctx, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range ps {
			if q.Name == project && q.EscalateAfter != p.EscalateAfter {
				t.Fatalf("FindProject says %v, ListProjects %v", p.EscalateAfter, q.EscalateAfter)
			}
		}
		return p.EscalateAfter
	}
	listed := func(project string) string {
		t.Helper()
		for _, l := range strings.Split(c.ok("", "project", "list"), "\n") {
			if fs := strings.Fields(l); len(fs) > 0 && fs[0] == project {
				for _, f := range fs {
					if strings.HasPrefix(f, "escalate-after=") {
						return f
					}
				}
			}
		}
		t.Fatalf("project list has no escalate-after for %s", project)
		return ""
	}

	if got := listed("my-saas"); got != "escalate-after=0" || escalation("my-saas") != 0 {
		t.Fatalf("default: %s, %v", got, escalation("my-saas"))
	}
	if out := c.ok("", "project", "update", "my-saas", "--escalate-after", "10m"); !strings.Contains(out, "\tignore-gpc=false\tescalate-after=10m\trepeat-urgent-every=5m\t") {
		t.Fatalf("project update printed %q", out)
	}
	if escalation("my-saas") != 10*time.Minute || listed("my-saas") != "escalate-after=10m" {
		t.Fatalf("stored %v, listed %s", escalation("my-saas"), listed("my-saas"))
	}
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"1m", time.Minute}, {"1h30m", 90 * time.Minute}, {"24h", 24 * time.Hour}, {" 90s", 90 * time.Second}} {
		c.ok("", "project", "update", "my-saas", "--escalate-after", tc.in)
		if got := escalation("my-saas"); got != tc.want {
			t.Fatalf("--escalate-after %s: stored %v", tc.in, got)
		}
	}
	if got := listed("my-saas"); got != "escalate-after=1m30s" {
		t.Fatalf("listed %s", got)
	}
	c.ok("", "project", "update", "my-saas", "--escalate-after", "0", "--repeat-urgent-times", "3")
	if escalation("my-saas") != 0 || listed("my-saas") != "escalate-after=0" {
		t.Fatalf("0: stored %v", escalation("my-saas"))
	}
	c.ok("", "project", "create", "ops", "--escalate-after", "15m", "--notify", "nobody")
	if escalation("ops") != 15*time.Minute || listed("ops") != "escalate-after=15m" {
		t.Fatalf("at creation: stored %v", escalation("ops"))
	}

	// Every wrong value: one line, exit 1, nothing saved.
	c.ok("", "project", "update", "my-saas", "--escalate-after", "5m")
	for _, bad := range []string{"10", "30s", "59s", "24h1m", "25h", "-5m", "", " ", "never", "1d"} {
		c.fails(1, fmt.Sprintf("--escalate-after must be 0 (never) or a duration from 1m to 24h, like 10m or 1h30m, not %q", bad),
			"project", "update", "my-saas", "--escalate-after", bad, "--retention-days", "7")
		c.fails(1, "--escalate-after must be", "project", "create", "blog", "--escalate-after", bad)
	}
	c.fails(1, `project "nope" does not exist`, "project", "update", "nope", "--escalate-after", "10m")
	if p, err := s.FindProject(ctx, f.Account.ID, "my-saas"); err != nil || p.EscalateAfter != 5*time.Minute || p.RetentionDays != 0 {
		t.Fatalf("a refused update changed the project: %+v %v", p, err)
	}
	if _, err := s.FindProject(ctx, f.Account.ID, "blog"); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("a refused create made the project: %v", err)
	}
	// Another account's project of the same name is its own.
	c.ok("", "account", "create", "globex")
	c.ok("", "project", "create", "my-saas", "--account", "globex", "--escalate-after", "1h")
	if escalation("my-saas") != 5*time.Minute {
		t.Fatalf("another account's project changed this one: %v", escalation("my-saas"))
	}

	if code, out, _ := runCLI(t, "", "", "project", "update", "--help"); code != 0 || !strings.Contains(out, "--escalate-after duration") {
		t.Fatalf("project update --help: %d\n%s", code, out)
	}
	c.fails(1, "--escalate-after DURATION", "project", "update", "my-saas", "--account", "acme")
}
