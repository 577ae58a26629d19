package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestCLIChannelNotify: who is notified, per project (project create/update --notify)
// and per channel (channel update --notify, project to follow it again), as the store
// keeps it and as project list and channel list print it; every wrong value is a
// one-line error that saves nothing.
func TestCLIChannelNotify(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, loc, stdin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	fails := func(exit int, want string, args ...string) {
		t.Helper()
		code, out, errs := runCLI(t, loc, "", args...)
		if code != exit || out != "" || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit %d and a one-line error with %q", args, code, out, errs, exit, want)
		}
	}
	recipients := func(project, channel string) string {
		t.Helper()
		r, own, err := s.RecipientsOf(ctx, f.Account.ID, project, channel)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s own=%t", r, own)
	}
	lineOf := func(out, first string) string {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if fs := strings.Fields(l); len(fs) > 0 && fs[0] == first {
				return strings.Join(fs, " ")
			}
		}
		t.Fatalf("no line for %s in:\n%s", first, out)
		return ""
	}
	ok("correct horse battery\n", "user", "create", "ada@example.com")
	ok("correct horse battery\n", "user", "create", "bob@example.com")

	// The defaults: the project notifies everyone, its channel follows it.
	if l := lineOf(ok("", "project", "list"), "my-saas"); !strings.HasSuffix(l, " repeat-urgent-times=12 notify=everyone") {
		t.Fatalf("project list: %q", l)
	}
	if out := ok("", "channel", "list", "my-saas"); out != "payments  events=0  notify=project(everyone)\n" {
		t.Fatalf("channel list: %q", out)
	}

	// The project: chosen members (case and order do not matter, doubles neither).
	if out := ok("", "project", "update", "my-saas", "--notify", " Bob@Example.com, ada@example.com,bob@example.com"); !strings.HasSuffix(out,
		"\trepeat-urgent-times=12\tnotify=ada@example.com,bob@example.com\n") {
		t.Fatalf("project update: %q", out)
	}
	if got := recipients("my-saas", ""); got != "ada@example.com,bob@example.com own=true" {
		t.Fatalf("stored %s", got)
	}
	if got := recipients("my-saas", "payments"); got != "ada@example.com,bob@example.com own=false" {
		t.Fatalf("the channel follows: %s", got)
	}
	if out := ok("", "channel", "list", "my-saas"); out != "payments  events=0  notify=project(ada@example.com,bob@example.com)\n" {
		t.Fatalf("channel list: %q", out)
	}

	// The channel: its own setting, then the project's again.
	if out := ok("", "channel", "update", "my-saas", "payments", "--notify", "nobody"); out != "updated channel payments of project my-saas: notify=nobody\n" {
		t.Fatalf("channel update: %q", out)
	}
	if got := recipients("my-saas", "payments"); got != "nobody own=true" {
		t.Fatalf("stored %s", got)
	}
	if out := ok("", "channel", "list", "my-saas"); out != "payments  events=0  notify=nobody\n" {
		t.Fatalf("channel list: %q", out)
	}
	ok("", "channel", "update", "my-saas", "payments", "--notify", "everyone", "--account", "acme")
	if got := recipients("my-saas", "payments"); got != "everyone own=true" {
		t.Fatalf("stored %s", got)
	}
	ok("", "channel", "update", "my-saas", "payments", "--notify", "ada@example.com")
	if got := recipients("my-saas", "payments"); got != "ada@example.com own=true" {
		t.Fatalf("stored %s", got)
	}

	// Every wrong value: one line, exit 1 (2 for a flag the flag package refuses), nothing saved.
	fails(1, "--notify not a member of the account: carol@example.com", "project", "update", "my-saas", "--notify", "ada@example.com,carol@example.com", "--retention-days", "7")
	fails(1, "carol@example.com", "channel", "update", "my-saas", "payments", "--notify", "carol@example.com")
	fails(1, `--notify must be "everyone", "nobody", or members' emails`, "channel", "update", "my-saas", "payments", "--notify", "ada")
	fails(1, `--notify must be`, "project", "update", "my-saas", "--notify", "ada@example.com,not an email")
	fails(1, `--notify must be`, "channel", "update", "my-saas", "payments", "--notify", ",,")
	fails(1, `--notify must be "everyone", "nobody", or members' emails separated by commas, or "project" (got "")`, "channel", "update", "my-saas", "payments", "--notify", "")
	fails(1, `--notify must be "everyone", "nobody", or members' emails separated by commas (got "")`, "project", "update", "my-saas", "--notify", " ")
	fails(1, "--notify project is for a channel", "project", "update", "my-saas", "--notify", "project")
	many := make([]string, tidings.MaxRecipients+1)
	for i := range many {
		many[i] = fmt.Sprintf("m%d@example.com", i)
	}
	fails(1, "at most 100 recipients (got 101)", "channel", "update", "my-saas", "payments", "--notify", strings.Join(many, ","))
	fails(1, `project "nope" does not exist`, "channel", "update", "nope", "payments", "--notify", "nobody")
	fails(1, `channel "nope" does not exist`, "channel", "update", "my-saas", "nope", "--notify", "nobody")
	fails(1, `project "nope" does not exist`, "project", "update", "nope", "--notify", "nobody")
	fails(1, "nothing to change: give --notify", "channel", "update", "my-saas", "payments")
	fails(2, "missing CHANNEL", "channel", "update", "my-saas", "--notify", "nobody")
	if got := recipients("my-saas", ""); got != "ada@example.com,bob@example.com own=true" {
		t.Fatalf("a refused update changed the project's: %s", got)
	}
	if p, err := s.FindProject(ctx, f.Account.ID, "my-saas"); err != nil || p.RetentionDays != 0 {
		t.Fatalf("a refused update changed the retention: %v %v", p, err)
	}
	if got := recipients("my-saas", "payments"); got != "ada@example.com own=true" {
		t.Fatalf("a refused update changed the channel's: %s", got)
	}

	// Following the project again.
	if out := ok("", "channel", "update", "my-saas", "payments", "--notify", "project"); out !=
		"updated channel payments of project my-saas: notify=project(ada@example.com,bob@example.com)\n" {
		t.Fatalf("channel update --notify project: %q", out)
	}
	if got := recipients("my-saas", "payments"); got != "ada@example.com,bob@example.com own=false" {
		t.Fatalf("stored %s", got)
	}
	ok("", "project", "update", "my-saas", "--notify", "nobody")
	if out := ok("", "channel", "list", "my-saas"); out != "payments  events=0  notify=project(nobody)\n" {
		t.Fatalf("channel list: %q", out)
	}

	// At creation: checked before the project exists.
	fails(1, "--notify not a member of the account: carol@example.com", "project", "create", "ops", "--notify", "carol@example.com")
	fails(1, "--notify must be", "project", "create", "ops", "--notify", "carol")
	fails(1, "--notify project is for a channel", "project", "create", "ops", "--notify", "project")
	fails(1, `--notify must be`, "project", "create", "ops", "--notify", "")
	if _, err := s.FindProject(ctx, f.Account.ID, "ops"); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("a refused create made the project: %v", err)
	}
	ok("", "project", "create", "ops", "--notify", "bob@example.com")
	if l := lineOf(ok("", "project", "list"), "ops"); !strings.HasSuffix(l, " notify=bob@example.com") {
		t.Fatalf("project list: %q", l)
	}
	ok("", "channel", "create", "ops", "alerts")
	if out := ok("", "channel", "list", "ops"); out != "alerts  events=0  notify=project(bob@example.com)\n" {
		t.Fatalf("a new channel follows its project: %q", out)
	}

	// Another account's member is not one of this account's.
	ok("", "account", "create", "globex")
	ok("correct horse battery\n", "user", "create", "zed@example.com", "--account", "globex")
	fails(1, "zed@example.com", "channel", "update", "ops", "alerts", "--notify", "zed@example.com", "--account", "acme")
	fails(1, `project "ops" does not exist`, "channel", "update", "ops", "alerts", "--notify", "zed@example.com", "--account", "globex")
	if got := recipients("ops", "alerts"); got != "bob@example.com own=false" {
		t.Fatalf("stored %s", got)
	}

	// The help says what --notify takes, project included.
	code, out, _ := runCLI(t, "", "", "channel", "update", "--help")
	if code != 0 || !strings.Contains(out, "--notify who") || !strings.Contains(out, "project (follow the project's setting again") {
		t.Fatalf("channel update --help: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "", "", "project", "update", "--help"); code != 0 || !strings.Contains(out, "--notify who") {
		t.Fatalf("project update --help: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "", "", "channel", "--help"); code != 0 || !strings.Contains(out, "tidings channel update PROJECT CHANNEL") {
		t.Fatalf("channel --help: %d\n%s", code, out)
	}
}

// TestCLIChatWebhooks: webhook create takes the chat services' formats with their
// extra flags, refuses each wrong input with the domain's message (and saves
// nothing), prints the id alone, and webhook list never shows their secrets.
func TestCLIChatWebhooks(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	const (
		botToken  = "123456789:AAEhBOweik6ad6PsVeRtzXqAebXr8JcGyHs"
		appToken  = "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
		userKey   = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"
		gotifyTok = "AbCdEf.gHiJkL"
	)
	telegramURL := "https://api.telegram.org/bot" + botToken + "/sendMessage"
	base := []string{"webhook", "create", "--project", "my-saas"}
	created := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, loc, "", append(slices.Clip(base), args...)...)
		if code != 0 || !strings.HasPrefix(out, "wh_") || strings.Count(out, "\n") != 1 {
			t.Fatalf("%v: exit %d, %q, %q; want the id alone", args, code, out, errs)
		}
		for _, secret := range []string{botToken, appToken, gotifyTok} {
			if strings.Contains(errs, secret) {
				t.Fatalf("%v: a secret on standard error: %q", args, errs)
			}
		}
		return strings.TrimSpace(out)
	}
	telegram := created("--format", "telegram", "--url", telegramURL, "--chat-id", "-1001234567890", "--name", "ops chat")
	pushover := created("--format", "pushover", "--url", "https://api.pushover.net/1/messages.json?token="+appToken, "--user-key", userKey)
	pushover2 := created("--format", "pushover", "--url", "https://api.pushover.net/1/messages.json", "--user-key", userKey, "--secret", appToken)
	gotify := created("--format", "gotify", "--url", "https://push.example.com/message?token="+gotifyTok)
	created("--format", "telegram", "--url", telegramURL, "--chat-id", "@tidings_ops")
	created("--format", "teams", "--url", "https://prod-01.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=SIGSECRET")
	created("--format", "google-chat", "--url", "https://chat.googleapis.com/v1/spaces/AAAA/messages?key=KEYSECRET&token=TOKSECRET")
	created("--format", "mattermost", "--url", "https://mm.example.com/hooks/xxx-generatedkey-xxx")

	list := func() string {
		t.Helper()
		code, out, errs := runCLI(t, loc, "", "webhook", "list")
		if code != 0 {
			t.Fatalf("webhook list: %d %s", code, errs)
		}
		return out
	}
	out := list()
	for _, secret := range []string{botToken, appToken, gotifyTok, "SIGSECRET", "KEYSECRET", "TOKSECRET", userKey} {
		if strings.Contains(out, secret) {
			t.Fatalf("webhook list shows the secret %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{
		telegram + " ops chat my-saas - telegram notify https://api.telegram.org/bot…/sendMessage",
		pushover + " - my-saas - pushover notify https://api.pushover.net/1/messages.json?token=…",
		pushover2 + " - my-saas - pushover notify https://api.pushover.net/1/messages.json",
		gotify + " - my-saas - gotify notify https://push.example.com/message?token=…",
		"google-chat notify https://chat.googleapis.com/v1/spaces/AAAA/messages?key=…&token=…",
		"teams notify https://prod-01.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=…",
		"mattermost notify https://mm.example.com/hooks/…",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Fatalf("webhook list lacks %q:\n%s", want, out)
		}
	}
	// The store keeps what delivery needs.
	{
		ws, err := s.ListWebhooks(ctx, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]*tidings.Webhook{}
		for _, w := range ws {
			byID[w.ID] = w
		}
		if w := byID[telegram]; w == nil || w.URL != telegramURL || w.ChatID != "-1001234567890" || w.UserKey != "" || w.Secret != "" {
			t.Fatalf("telegram stored as %+v", w)
		}
		if w := byID[pushover2]; w == nil || w.UserKey != userKey || w.Secret != appToken || w.ChatID != "" {
			t.Fatalf("pushover stored as %+v", w)
		}
	}

	// Every wrong input: one line, exit 1, nothing saved.
	before := len(strings.Split(strings.TrimSpace(list()), "\n"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "telegram", "--url", telegramURL, "--chat-id", "ops"}, "--chat-id a telegram webhook needs the chat id"},
		{[]string{"--format", "telegram", "--url", telegramURL, "--chat-id", "@ab"}, "--chat-id a telegram webhook needs the chat id"},
		{[]string{"--format", "telegram", "--url", telegramURL}, "--chat-id a telegram webhook needs the chat id"},
		{[]string{"--format", "telegram", "--url", "https://api.telegram.org/sendMessage", "--chat-id", "42"}, "url: a telegram webhook's URL is the Bot API's sendMessage URL"},
		{[]string{"--format", "telegram", "--url", "https://api.telegram.org/bot123:short/sendMessage", "--chat-id", "42"}, "url: a telegram webhook's URL"},
		{[]string{"--format", "pushover", "--url", "https://api.pushover.net/1/messages.json?token=" + appToken}, "--user-key a pushover webhook needs the user or group key"},
		{[]string{"--format", "pushover", "--url", "https://api.pushover.net/1/messages.json?token=" + appToken, "--user-key", "short"}, "--user-key a pushover webhook needs"},
		{[]string{"--format", "pushover", "--url", "https://api.pushover.net/1/messages.json", "--user-key", userKey}, "--secret a pushover webhook needs the application's API token"},
		{[]string{"--format", "pushover", "--url", "https://api.pushover.net/1/messages.json", "--user-key", userKey, "--secret", "tooshort"}, "--secret a Pushover application token is 30 letters and digits"},
		{[]string{"--format", "pushover", "--url", "https://api.pushover.net/1/messages.json?token=not-a-token", "--user-key", userKey}, "--secret a Pushover application token is 30"},
		{[]string{"--format", "pushover", "--url", "https://api.pushover.net/1/messages.json?token=" + appToken, "--user-key", userKey, "--secret", appToken}, "--secret the app token is in the URL's token= already"},
		{[]string{"--format", "gotify", "--url", "https://push.example.com/message"}, "url: a gotify webhook's URL is the server's /message?token=APP_TOKEN"},
		{[]string{"--format", "gotify", "--url", "https://push.example.com/?token=" + gotifyTok}, "url: a gotify webhook's URL"},
		{[]string{"--format", "slack", "--url", "https://hooks.slack.com/services/T/B/X", "--chat-id", "42"}, "--chat-id is for telegram webhooks only"},
		{[]string{"--format", "telegram", "--url", telegramURL, "--chat-id", "42", "--user-key", userKey}, "--user-key is for pushover webhooks only"},
		{[]string{"--url", "https://example.com/hook", "--secret", appToken}, "--secret is for pushover webhooks only"},
		{[]string{"--format", "slack", "--url", "https://hooks.slack.com/services/T/B/X", "--secret", appToken}, "--secret is for pushover webhooks only"},
		{[]string{"--format", "gotify", "--url", "https://push.example.com/message?token=x", "--secret", appToken}, "--secret is for pushover webhooks only"},
		{[]string{"--format", "matrix", "--url", "https://example.com/hook"}, "format: must be standard, slack, discord, ntfy, telegram, teams, google-chat, mattermost, pushover or gotify"},
		{[]string{"--format", "teams", "--url", "ftp://example.com/hook"}, "url:"},
	} {
		code, out, errs := runCLI(t, loc, "", append(slices.Clip(base), c.args...)...)
		if code != 1 || out != "" || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, %q, %q; want a one-line error with %q", c.args, code, out, errs, c.want)
		}
	}
	if after := len(strings.Split(strings.TrimSpace(list()), "\n")); after != before {
		t.Fatalf("refused webhooks were saved: %d, then %d", before, after)
	}

	// A private target is refused in one line that names the flag and shows no secret,
	// and nothing is saved; with --allow-private-targets it is made
	// (TestCLIWebhookPrivateTargetsFromEnv: TIDINGS_ALLOW_PRIVATE_TARGETS).
	for _, private := range [][]string{
		{"--format", "gotify", "--url", "http://192.168.1.5/message?token=" + gotifyTok},
		{"--format", "gotify", "--url", "http://127.0.0.1:9/message?token=" + gotifyTok},
		{"--format", "telegram", "--url", "http://localhost:8081/bot" + botToken + "/sendMessage", "--chat-id", "42"},
		{"--format", "slack", "--url", "http://[fd00::1]/services/T/B/X"},
	} {
		code, out, errs := runCLI(t, loc, "", append(slices.Clip(base), private...)...)
		if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is a loopback or private address") ||
			!strings.Contains(errs, "--allow-private-targets") || strings.Contains(errs, gotifyTok) || strings.Contains(errs, botToken) {
			t.Fatalf("%v: exit %d, %q, %q; want a one-line refusal naming --allow-private-targets", private, code, out, errs)
		}
	}
	if after := len(strings.Split(strings.TrimSpace(list()), "\n")); after != before {
		t.Fatalf("refused private webhooks were saved: %d, then %d", before, after)
	}
	code, out, errs := runCLI(t, loc, "", append(slices.Clip(base), "--format", "gotify", "--url", "http://192.168.1.5/message?token="+gotifyTok, "--allow-private-targets")...)
	if code != 0 || !strings.HasPrefix(out, "wh_") || strings.Count(out, "\n") != 1 || errs != "" {
		t.Fatalf("private gotify with --allow-private-targets: %d %q %q", code, out, errs)
	}
	if n := len(strings.Split(strings.TrimSpace(list()), "\n")); n != before+1 {
		t.Fatalf("%d webhooks after the one allowed, want %d", n, before+1)
	}

	// The help names the formats and their flags.
	if code, out, _ := runCLI(t, "", "", "webhook", "create", "--help"); code != 0 || !strings.Contains(out, "--chat-id chat") ||
		!strings.Contains(out, "--user-key key") || !strings.Contains(out, "--secret token") || !strings.Contains(out, "google-chat, mattermost, pushover or gotify") {
		t.Fatalf("webhook create --help: %d\n%s", code, out)
	}
}

// TestCLIWebhookPrivateTargetsFromEnv: TIDINGS_ALLOW_PRIVATE_TARGETS=1, as serve takes
// it, lets webhook create save a private target; a value that is not a boolean is a
// one-line error that saves nothing. Not parallel: it sets the process's environment.
func TestCLIWebhookPrivateTargetsFromEnv(t *testing.T) {
	loc := testbackend.Location(t)
	testbackend.Seed(t, testbackend.Open(t, loc), "acme")
	create := []string{"webhook", "create", "--project", "my-saas", "--format", "gotify", "--url", "http://192.168.1.5/message?token=AbCdEf.gHiJkL"}
	t.Setenv("TIDINGS_ALLOW_PRIVATE_TARGETS", "maybe")
	if code, out, errs := runCLI(t, loc, "", create...); code != 1 || out != "" || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, `TIDINGS_ALLOW_PRIVATE_TARGETS="maybe": use true or false`) {
		t.Fatalf("TIDINGS_ALLOW_PRIVATE_TARGETS=maybe: exit %d, %q, %q", code, out, errs)
	}
	if _, list, _ := runCLI(t, loc, "", "webhook", "list"); list != "" {
		t.Fatalf("saved with a bad TIDINGS_ALLOW_PRIVATE_TARGETS: %q", list)
	}
	t.Setenv("TIDINGS_ALLOW_PRIVATE_TARGETS", "1")
	if code, out, errs := runCLI(t, loc, "", create...); code != 0 || !strings.HasPrefix(out, "wh_") || errs != "" {
		t.Fatalf("TIDINGS_ALLOW_PRIVATE_TARGETS=1: exit %d, %q, %q", code, out, errs)
	}
	if _, list, _ := runCLI(t, loc, "", "webhook", "list"); !strings.Contains(list, "http://192.168.1.5/message?token=…") {
		t.Fatalf("webhook list: %q", list)
	}
}
