package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// runCLI runs one command line in-process against the data folder and returns its
// exit code, standard output and standard error.
func runCLI(t *testing.T, data, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append(args, storeArgs(data)...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// storeArgs are the flags that point a command at a store's location.
func storeArgs(loc string) []string {
	if loc == "" {
		return nil
	}
	if testbackend.IsURL(loc) {
		return []string{"--database", loc}
	}
	return []string{"--data", loc}
}

// TestMain runs the server's and the CLI's tests on SQLite, then on PostgreSQL.
func TestMain(m *testing.M) { testbackend.Main(m) }

func TestCLI(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, data, stdin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		code, out, errs := runCLI(t, data, "short\n", args...)
		if code == 0 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want a one-line error with %q", args, code, out, errs, want)
		}
	}

	fails("no account yet", "project", "create", "my-saas")
	fails(`takes no arguments, but got "extra"`, "account", "list", "extra")
	fails("missing CHANNEL: usage is tidings channel create PROJECT CHANNEL", "channel", "create", "my-saas")
	fails("too many arguments (2): usage is tidings account create NAME (quote a value that has spaces)", "account", "create", "Acme", "Inc")
	ok("", "account", "create", "acme")
	fails("already exists", "account", "create", "acme")
	fails("lowercase letters, digits and single dashes", "account", "create", "Acme Inc")
	ok("", "project", "create", "my-saas") // --account left out: the only account
	ok("", "project", "create", "shop", "--account", "acme")
	fails("lowercase letters, digits and single dashes", "project", "create", "My_SaaS", "--account", "acme")
	fails("already exists", "project", "create", "my-saas", "--account", "acme")
	ok("", "channel", "create", "my-saas", "payments", "--account", "acme")
	fails("lowercase letters, digits and single dashes", "channel", "create", "my-saas", "Pay Ments", "--account", "acme")
	fails(`project "nope" does not exist`, "channel", "create", "nope", "payments", "--account", "acme")
	fails(`no account named "globex"`, "project", "create", "x", "--account", "globex")

	// A project's settings, at creation and after.
	ok("", "project", "create", "sdk-app", "--insight-change-default", "update", "--retention-days", "30")
	fails("--insight-change-default must be update or none", "project", "create", "bad-app", "--insight-change-default", "increment")
	fails(`project "bad-app" does not exist`, "project", "update", "bad-app", "--retention-days", "7") // the wrong flag made nothing
	fails("nothing to change", "project", "update", "sdk-app")
	fails("--retention-days must be one of", "project", "update", "sdk-app", "--retention-days", "12")
	if code, _, errs := runCLI(t, data, "", "project", "update", "sdk-app", "--auto-create-channels=maybe"); code == 0 || !strings.Contains(errs, "must be true or false") {
		t.Fatalf("--auto-create-channels=maybe: exit %d, %s", code, errs)
	}
	if out := ok("", "project", "update", "sdk-app", "--auto-create-channels", "--retention-days", "0"); out !=
		"updated project sdk-app: auto-create-channels=true\tkeep=forever\tinsight-change-default=update\tignore-gpc=false\tescalate-after=0\trepeat-urgent-every=5m\trepeat-urgent-times=12\tnotify=everyone\n" {
		t.Fatalf("project update printed %q", out)
	}
	ok("", "project", "update", "sdk-app", "--insight-change-default", "none")
	ok("", "project", "update", "shop", "--auto-create-channels=false")
	projects := ok("", "project", "list")
	for _, want := range []string{"my-saas events=0 channels=1 auto-create-channels=false keep=forever insight-change-default=none ignore-gpc=false",
		"sdk-app events=0 channels=0 auto-create-channels=true keep=forever insight-change-default=none ignore-gpc=false"} {
		if !strings.Contains(strings.Join(strings.Fields(projects), " "), want) {
			t.Fatalf("project list lacks %q:\n%s", want, projects)
		}
	}

	tok := ok("", "token", "create", "--account", "acme", "--access", "public", "--project", "my-saas", "--channel", "payments", "--name", "website")
	if !strings.HasPrefix(tok, "tds_") || strings.Count(tok, "\n") != 1 || strings.Contains(strings.TrimSpace(tok), " ") {
		t.Fatalf("token create must print the token alone: %q", tok)
	}
	fails("--access is required", "token", "create", "--account", "acme")
	fails(`must be "public" or "full"`, "token", "create", "--account", "acme", "--access", "admin")
	fails("needs a project limit", "token", "create", "--account", "acme", "--access", "full", "--channel", "payments")
	fails(`channel "nope" does not exist`, "token", "create", "--account", "acme", "--access", "full", "--project", "my-saas", "--channel", "nope")
	fails(`roles are "log" and "insight"`, "token", "create", "--account", "acme", "--access", "full", "--roles", "log,admin")
	ok("", "token", "create", "--access", "full", "--roles", "insight")

	list := ok("", "token", "list", "--account", "acme")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	id := strings.Split(strings.TrimPrefix(strings.TrimSpace(tok), "tds_"), "_")[0]
	if len(lines) != 2 || !strings.HasPrefix(lines[0], id+" ") {
		t.Fatalf("token list:\n%s", list)
	}
	for _, want := range []string{"website", "public", "project=my-saas,channel=payments", "never-used", "active", "log,insight"} {
		if !strings.Contains(lines[0], want) {
			t.Fatalf("token list line %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], "all-projects") || !strings.Contains(lines[1], "insight") {
		t.Fatalf("second token: %q", lines[1])
	}
	ok("", "token", "revoke", id, "--account", "acme")
	if l := ok("", "token", "list"); !strings.Contains(strings.Split(l, "\n")[0], "T") || strings.Contains(strings.Split(l, "\n")[0], "active") {
		t.Fatalf("revoked token still active: %s", l)
	}
	fails("no token", "token", "revoke", "doesnotexist", "--account", "acme")

	ok("", "account", "create", "globex")
	fails("2 accounts exist", "project", "create", "x")
	fails("no token", "token", "revoke", id, "--account", "globex") // another account's token

	ok("correct horse battery\n", "user", "create", "ada@example.com", "--account", "acme")
	fails("at least 8 characters", "user", "create", "bob@example.com", "--account", "acme")
	if code, _, errs := runCLI(t, data, "", "user", "create", "bob@example.com"); code != 1 || !strings.Contains(errs, "standard input") {
		t.Fatalf("no password: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, data, "another long one\n", "user", "create", "ADA@example.com", "--account", "acme"); code != 1 || !strings.Contains(errs, "already exists") {
		t.Fatalf("duplicate email: %d %s", code, errs)
	}
	fails("not an email", "user", "create", "ada", "--account", "acme")
	fails("--role must be owner or member", "user", "create", "eve@example.com", "--account", "acme", "--role", "admin")

	if out := ok("", "channel", "list", "my-saas", "--account", "acme"); out != "payments  events=0  notify=project(everyone)\n" {
		t.Fatalf("channel list = %q", out)
	}
	if out := ok("", "project", "list", "--account", "acme"); !strings.Contains(out, "my-saas") || !strings.Contains(out, "shop") ||
		!strings.Contains(out, "events=0") || strings.Contains(out, "PROJECT") {
		t.Fatalf("project list = %q", out)
	}
	if list := ok("", "token", "list", "--account", "acme"); strings.Contains(list, "ID") {
		t.Fatalf("token list to a script has a header: %q", list)
	}
}

// The user commands: list, reset-password (signs the user out), delete (never the last
// owner); project and channel delete say what goes and need --yes.
func TestCLIManage(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, loc, stdin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		code, out, errs := runCLI(t, loc, "a long password\n", args...)
		if code != 1 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want a one-line error with %q", args, code, out, errs, want)
		}
	}
	ok("", "account", "create", "acme")
	ok("first password\n", "user", "create", "ada@example.com", "--role", "owner")
	ok("second password\n", "user", "create", "bob@example.com") // member: the safe default
	if out := ok("", "user", "list"); !strings.Contains(out, "ada@example.com") || !strings.Contains(out, "owner") ||
		!regexp.MustCompile(`bob@example\.com\s+member`).MatchString(out) {
		t.Fatalf("user list: %q", out)
	}
	s := testbackend.Open(t, loc)
	ada, err := s.FindUserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	hash := []byte("session-of-ada-0123456789abcdef")
	if err := s.CreateSession(ctx, &tidings.Session{Hash: hash, UserID: ada.ID, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if out := ok("a new long password\n", "user", "reset-password", "ada@example.com"); !strings.Contains(out, "signed them out") {
		t.Fatalf("reset-password: %q", out)
	}
	if _, _, _, err := s.FindSession(ctx, hash, time.Now()); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("ada's session after a reset: %v", err)
	}
	ada, _ = s.FindUserByEmail(ctx, "ada@example.com")
	if okp, _ := password.Verify(ada.PasswordHash, "a new long password"); !okp {
		t.Fatal("the new password does not verify")
	}
	fails("no user with the email", "user", "reset-password", "nobody@example.com")
	fails("the account's only owner", "user", "delete", "ada@example.com")
	ok("", "user", "delete", "bob@example.com")
	fails("no user with the email", "user", "delete", "bob@example.com")

	ok("", "project", "create", "my-saas")
	ok("", "channel", "create", "my-saas", "payments")
	ok("", "channel", "create", "my-saas", "signups")
	a, _ := s.FindAccount(ctx, "acme")
	for range 3 {
		if _, err := s.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Paid", Parser: tidings.ParserText}); err != nil {
			t.Fatal(err)
		}
	}
	fails("this deletes channel payments of project my-saas with 3 events: run it again with --yes", "channel", "delete", "my-saas", "payments")
	fails("this deletes project my-saas with 2 channels and 3 events, and its insights: run it again with --yes", "project", "delete", "my-saas")
	if out := ok("", "channel", "list", "my-saas"); !strings.Contains(out, "payments  events=3") {
		t.Fatalf("after a delete without --yes: %q", out)
	}
	if out := ok("", "channel", "delete", "my-saas", "signups", "--yes"); out != "deleted channel signups of project my-saas with 0 events\n" {
		t.Fatalf("channel delete: %q", out)
	}
	fails(`channel "signups" does not exist`, "channel", "delete", "my-saas", "signups", "--yes")
	if out := ok("", "project", "delete", "my-saas", "--yes"); out != "deleted project my-saas with 1 channel and 3 events\n" {
		t.Fatalf("project delete: %q", out)
	}
	fails(`project "my-saas" does not exist`, "project", "delete", "my-saas", "--yes")
}

// TestCLIUsage: every command and every group answers --help and -h on standard output
// with exit 0; flags are written --name, as in the README; version answers.
func TestCLIUsage(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	var all [][]string
	groups := map[string]bool{}
	for _, cmd := range commands {
		words := strings.Fields(cmd.name)
		all = append(all, append(words[:len(words):len(words)], "--help"), append(words[:len(words):len(words)], "-h"))
		if len(words) > 1 && !groups[words[0]] {
			groups[words[0]] = true
			all = append(all, []string{words[0], "--help"}, []string{words[0], "-h"})
		}
	}
	all = append(all, []string{"--help"}, []string{"-h"}, []string{"help"})
	for _, args := range all {
		var out, errs bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errs); code != 0 || !strings.Contains(out.String(), "Usage") || errs.Len() != 0 {
			t.Fatalf("%v: exit %d, out %q, err %q", args, code, out.String(), errs.String())
		}
		if regexp.MustCompile(`\n  -[a-z][a-z-]* `).MatchString(out.String()) {
			t.Fatalf("%v: a flag written with one dash:\n%s", args, out.String())
		}
	}
	var out, errs bytes.Buffer
	// The full help: commands grouped, in a stable order, version among them.
	run(context.Background(), []string{"help"}, nil, &out, &errs)
	last := -1
	for _, want := range []string{"Run the service:", "tidings serve", "tidings version", "Accounts, users and projects:", "tidings project update NAME",
		"API tokens, webhooks and inbound hooks:", "Talk to a server (TIDINGS_URL, TIDINGS_TOKEN):", "tidings publish", "tidings insight ",
		"Events and insights in the store:", "tidings insight delete", "The store:", "tidings check"} {
		i := strings.Index(out.String(), want)
		if i < 0 || i < last {
			t.Fatalf("help: %q missing or out of order:\n%s", want, out.String())
		}
		last = i
	}
	// A word's commands together: the webhook commands, then the hook commands.
	at := func(cmd string) int { return strings.Index(out.String(), "\n  tidings "+cmd+" ") }
	order := []string{"webhook create", "webhook list", "webhook delete", "hook create", "hook list", "hook delete"}
	for i := 1; i < len(order); i++ {
		if at(order[i-1]) < 0 || at(order[i]) < at(order[i-1]) {
			t.Fatalf("help: %q and %q missing or out of order:\n%s", order[i-1], order[i], out.String())
		}
	}
	out.Reset()
	run(context.Background(), []string{"token", "--help"}, nil, &out, &errs)
	for _, want := range []string{"tidings token create", "tidings token list", "tidings token revoke"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("token --help lacks %s: %s", want, out.String())
		}
	}
	out.Reset()
	run(context.Background(), []string{"serve", "--help"}, nil, &out, &errs)
	if !strings.Contains(out.String(), "--addr string") || !strings.Contains(out.String(), "--database string") {
		t.Fatalf("serve --help: %s", out.String())
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out.Reset()
		if code := run(context.Background(), args, nil, &out, &errs); code != 0 || !strings.HasPrefix(out.String(), "tidings ") || !strings.Contains(out.String(), "go1.") {
			t.Fatalf("%v: exit %d, %q", args, code, out.String())
		}
	}
	out.Reset()
	errs.Reset()
	if code := run(context.Background(), []string{"webhook"}, nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), "tidings webhook create") {
		t.Fatalf("a group alone: exit %d, %q", code, errs.String())
	}
	errs.Reset()
	if code := run(context.Background(), []string{"frobnicate"}, nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), "unknown command") {
		t.Fatalf("unknown command: %d %q", code, errs.String())
	}
	if code := run(context.Background(), []string{"channel", "create", "only-one"}, nil, &out, &errs); code != 2 {
		t.Fatalf("missing argument: exit %d", code)
	}
	if code := run(context.Background(), []string{"account", "list", "--database", "postgres://x"}, nil, &out, &errs); code != 1 {
		t.Fatalf("postgres: exit %d", code)
	}
}

func TestServeRefusesBadEnvironment(t *testing.T) {
	testbackend.Once(t)
	for name, value := range map[string]string{
		"TIDINGS_TOKEN_RATE":      "fast",
		"TIDINGS_TOKEN_BURST":     "1.5",
		"TIDINGS_TRUSTED_PROXIES": "10.0.0.0/8,not-an-ip",
		"TIDINGS_OPEN_SIGNUP":     "yes please",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			var out, errs bytes.Buffer
			code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, nil, &out, &errs)
			if code != 1 || !strings.Contains(errs.String(), name) {
				t.Fatalf("exit %d, stderr %q: a bad %s must stop the server with a message naming it", code, errs.String(), name)
			}
		})
	}
}

// event delete and insight delete remove one of each, and say so; an unknown one fails
// with a one-line error.
func TestCLIDeleteOne(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	s := testbackend.Open(t, loc)
	a, err := s.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	s.CreateProject(ctx, a.ID, "my-saas")
	s.CreateChannel(ctx, a.ID, "my-saas", "payments")
	ev, err := s.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Oops, a test", Parser: tidings.ParserText})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "my-saas", Title: "Monthly Revenue", Value: "5",
		ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args       []string
		code       int
		out, error string
	}{
		{[]string{"event", "delete", ev.ID}, 0, "deleted event " + ev.ID, ""},
		{[]string{"event", "delete", ev.ID}, 1, "", "no event"},
		{[]string{"insight", "delete", "my-saas", "Monthly Revenue"}, 0, `deleted insight "Monthly Revenue"`, ""},
		{[]string{"insight", "delete", "my-saas", "Monthly Revenue"}, 1, "", "no insight"},
		{[]string{"insight", "delete", "nope", "Monthly Revenue"}, 1, "", `project "nope" does not exist`},
	} {
		code, out, errs := runCLI(t, loc, "", c.args...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.error) {
			t.Errorf("%v: exit %d, %q, %q", c.args, code, out, errs)
		}
	}
	if _, err := s.FindEvent(ctx, a.ID, "my-saas", ev.ID); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("the deleted event is still found: %v", err)
	}
}

// TestCLIIgnoreGPC: --ignore-gpc=BOOL on project create and update sets whether the
// project records visitors whose browser signals Global Privacy Control (off by
// default), as the store keeps it and project list shows it; a wrong value changes nothing.
func TestCLIIgnoreGPC(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	ok := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, loc, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	ok("account", "create", "acme")
	ok("project", "create", "site", "--ignore-gpc=true")
	ok("project", "create", "shop")
	s := testbackend.Open(t, loc)
	a, err := s.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ignores := func(project string) bool {
		t.Helper()
		p, err := s.FindProject(ctx, a.ID, project)
		if err != nil {
			t.Fatal(err)
		}
		return p.IgnoreGPC
	}
	if !ignores("site") || ignores("shop") {
		t.Fatalf("after create: site %t (want true), shop %t (want false, the default)", ignores("site"), ignores("shop"))
	}
	list := strings.Join(strings.Fields(ok("project", "list")), " ")
	for _, want := range []string{"site events=0 channels=0 auto-create-channels=false keep=forever insight-change-default=none ignore-gpc=true",
		"shop events=0 channels=0 auto-create-channels=false keep=forever insight-change-default=none ignore-gpc=false"} {
		if !strings.Contains(list, want) {
			t.Fatalf("project list lacks %q:\n%s", want, list)
		}
	}
	if out := ok("project", "update", "shop", "--ignore-gpc"); out !=
		"updated project shop: auto-create-channels=false\tkeep=forever\tinsight-change-default=none\tignore-gpc=true\tescalate-after=0\trepeat-urgent-every=5m\trepeat-urgent-times=12\tnotify=everyone\n" || !ignores("shop") {
		t.Fatalf("update --ignore-gpc printed %q; stored %t", out, ignores("shop"))
	}
	if out := ok("project", "update", "site", "--ignore-gpc=false"); !strings.Contains(out, "\tignore-gpc=false\t") || ignores("site") {
		t.Fatalf("update --ignore-gpc=false printed %q; stored %t", out, ignores("site"))
	}
	for _, args := range [][]string{
		{"project", "update", "shop", "--ignore-gpc=sometimes"},
		{"project", "create", "blog", "--ignore-gpc=yes"},
	} {
		if code, out, errs := runCLI(t, loc, "", args...); code == 0 || out != "" || !strings.Contains(errs, "must be true or false") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if !ignores("shop") {
		t.Fatal("a refused --ignore-gpc changed the setting")
	}
	if _, err := s.FindProject(ctx, a.ID, "blog"); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("a refused create made the project: %v", err)
	}
	if code, _, errs := runCLI(t, loc, "", "project", "update", "nope", "--ignore-gpc"); code != 1 || !strings.Contains(errs, `project "nope" does not exist`) {
		t.Fatalf("update of an unknown project: exit %d, %s", code, errs)
	}
}

// syncBuffer is a bytes.Buffer that a server's goroutines write while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeFirstStart: the first log lines say the address to open, the data folder's
// absolute path and, on a store without users, to open it to create the first account.
func TestServeFirstStart(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	ctx, cancel := context.WithCancel(context.Background())
	var errs syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, io.Discard, &errs) }()
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(errs.String(), "create the first one") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	abs, _ := filepath.EvalSymlinks(dir)
	out := errs.String()
	if !strings.Contains(out, "tidings is serving: open http://127.0.0.1:") || !strings.Contains(out, "data="+filepath.Join(abs, "tidings-data")) ||
		!strings.Contains(out, "this store has no account yet: open http://127.0.0.1:") {
		t.Fatalf("first start log:\n%s", out)
	}
}

// TestPublishFromShell: tidings publish and tidings insight reach a running server with
// TIDINGS_URL and TIDINGS_TOKEN; a refused one exits 1 with the server's message.
func TestPublishFromShell(t *testing.T) {
	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	for _, args := range [][]string{{"account", "create", "acme"}, {"project", "create", "my-saas"}, {"channel", "create", "my-saas", "deploys"}} {
		if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, token, _ := runCLI(t, loc, "", "token", "create", "--access", "public")
	t.Setenv("TIDINGS_URL", m.URL())
	t.Setenv("TIDINGS_TOKEN", strings.TrimSpace(token))
	remote := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	code, out, errs := remote("publish", "-p", "my-saas", "-c", "deploys", "-e", "Deployed v1.4", "--icon", "🚀", "--tag", "version=1.4.0",
		"--tag", "region=eu west", "--tag", "canary=true", "--tag", "build=812", "--notify", "--markdown", "--description", "**ok**")
	if code != 0 || errs != "" || len(strings.TrimSpace(out)) != 36 {
		t.Fatalf("publish: exit %d, %q, %q", code, out, errs)
	}
	s := testbackend.Open(t, loc)
	a, _ := s.FindAccount(context.Background(), "acme")
	ev, err := s.FindEvent(context.Background(), a.ID, "my-saas", strings.TrimSpace(out))
	want := tidings.Tags{{Key: "version", Kind: tidings.KindString, Value: "1.4.0"}, {Key: "region", Kind: tidings.KindString, Value: "eu west"},
		{Key: "canary", Kind: tidings.KindBool, Value: "true"}, {Key: "build", Kind: tidings.KindNumber, Value: "812"}}
	if err != nil || ev.Event != "Deployed v1.4" || ev.Icon != "🚀" || !ev.Notify || ev.Parser != "markdown" || !slices.Equal(ev.Tags, want) {
		t.Fatalf("the published event: %+v %v", ev, err)
	}
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"insight", "-p", "my-saas", "-t", "Signups today", "-v", "2", "--change", "increment", "--icon", "👥"}, "Signups today: 2\n"},
		{[]string{"insight", "-p", "my-saas", "--title", "Signups today", "--value", "3", "--change", "increment"}, "Signups today: 5\n"},
		{[]string{"insight", "-p", "my-saas", "-t", "Revenue", "-v", "1205.50", "--prefix", "$"}, "Revenue: $1205.50\n"},
		{[]string{"insight", "-p", "my-saas", "-t", "Status", "-v", "all good"}, "Status: all good\n"},
	} {
		if code, out, errs := remote(c.args...); code != 0 || out != c.out {
			t.Fatalf("%v: exit %d, %q, %q", c.args, code, out, errs)
		}
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"publish", "-p", "my-saas", "-e", "x"}, "-c/--channel is required"},
		{[]string{"publish", "-p", "my-saas", "-c", "nope", "-e", "x"}, `channel "nope" does not exist`},
		{[]string{"publish", "-p", "my-saas", "-c", "deploys", "-e", "x", "--tag", "novalue"}, "write key=value"},
		{[]string{"publish", "-p", "my-saas", "-c", "deploys", "-e", "x", "--icon", "ab"}, "must be exactly one emoji"},
		{[]string{"insight", "-p", "my-saas", "-t", "Status", "-v", "1", "--change", "increment"}, "not a number"},
		{[]string{"insight", "-p", "my-saas", "-t", "Signups today"}, "-v/--value are required"},
		{[]string{"publish", "-p", "my-saas", "-c", "deploys", "-e", "x", "--url", "http://127.0.0.1:1"}, "connection refused"},
	} {
		code, out, errs := remote(c.args...)
		if code != 1 || out != "" || !strings.Contains(errs, c.err) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, %q, %q; want a one-line error with %q", c.args, code, out, errs, c.err)
		}
	}
	t.Setenv("TIDINGS_TOKEN", "")
	if code, _, errs := remote("publish", "-p", "my-saas", "-c", "deploys", "-e", "x"); code != 1 || !strings.Contains(errs, "export TIDINGS_TOKEN") {
		t.Fatalf("no token: exit %d, %q", code, errs)
	}
}

// TestUnreadableEnvFileIsAnError: a TIDINGS_*_FILE that cannot be read stops every
// command with its name, instead of serving the embedded store in ./tidings-data as if
// no database had been given. Not parallel: it sets the environment.
func TestUnreadableEnvFileIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-secret")
	t.Setenv("TIDINGS_DATABASE_URL_FILE", missing)
	for _, args := range [][]string{{"check"}, {"account", "list"}} { // serve too: it is the same gate
		code, _, errs := runCLI(t, "", "", args...)
		if code != 1 || !strings.Contains(errs, "TIDINGS_DATABASE_URL_FILE names a file that cannot be read") || !strings.Contains(errs, missing) {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	os.WriteFile(missing, []byte("postgres://nobody@127.0.0.1:1/none\n"), 0o600)
	if code, _, errs := runCLI(t, "", "", "account", "list"); code != 1 || !strings.Contains(errs, "127.0.0.1:1") && !strings.Contains(errs, "database") {
		t.Fatalf("with the file readable, its URL is used: exit %d: %s", code, errs)
	}
}
