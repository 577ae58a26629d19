// Command tidings is the Tidings server and its management CLI.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/tidings-dev/tidings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one line of the CLI's command table.
type command struct {
	name  string // "token create"
	args  string // positional arguments, for the usage line
	about string
	flags func(fs *flag.FlagSet, c *cli)
	run   func(ctx context.Context, c *cli, args []string) error
	nargs int
	// remote commands talk to a server over the API, not to a store.
	remote bool
}

// cli is the state one command invocation works with.
type cli struct {
	cfg    Config
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// flags of management commands
	account, role, access, project, channel, roles, name string
	url, format, events, to, from                        string
	chatID, userKey, secret                              string
	by, email, digest                                    string
	bySet, digestSet                                     bool // user notify: --by, --digest given ("" is a mistake, not "leave as is")
	yes, verbose, full                                   bool
	pub                                                  publishFlags
	settings                                             projectSettings
	hook                                                 hookOptions // tidings hook create (cmd_hooks.go)
	tail                                                 tailOptions // tidings tail (tail.go)
}

var commands = []command{
	{name: "serve", about: "run the service", flags: func(fs *flag.FlagSet, c *cli) { serveFlags(fs, &c.cfg) }, run: runServe},
	{name: "health", about: "ask the local server (--addr, TIDINGS_ADDR, as serve) if it is ready: exit 0 when GET /readyz answers 200",
		flags: func(fs *flag.FlagSet, c *cli) { listenFlags(fs, &c.cfg) }, run: health},
	{name: "account create", args: "NAME", about: "create an account (a team or company)", nargs: 1, run: accountCreate},
	{name: "account list", about: "list accounts", run: accountList},
	{name: "user create", args: "EMAIL", about: "create a user; the password is read from standard input", nargs: 1,
		flags: func(fs *flag.FlagSet, c *cli) {
			accountFlag(fs, c)
			fs.StringVar(&c.role, "role", "member", "owner (manages tokens, members and projects) or member")
		}, run: userCreate},
	{name: "user list", about: "list the account's users: email, role, created", flags: accountFlag, run: userList},
	{name: "user reset-password", args: "EMAIL", about: "set a user's password, read from standard input, and sign them out everywhere", nargs: 1, run: userResetPassword},
	{name: "user notify", args: "EMAIL", about: "choose how a member is notified of a project's (or a channel's) events: push, email, push,email or none; and their digest", nargs: 1,
		flags: userNotifyFlags, run: userNotify},
	{name: "invite create", about: "make an invitation link to join the account (mailed to --email when SMTP is set); prints the link", flags: inviteFlags, run: inviteCreate},
	{name: "invite list", about: "list pending invitations and password reset links: id, email, role, expires", flags: accountFlag, run: inviteList},
	{name: "invite revoke", args: "INVITE_ID", about: "revoke a pending invitation or password reset link at once", nargs: 1, flags: accountFlag, run: inviteRevoke},
	{name: "user delete", args: "EMAIL", about: "delete a user and sign them out everywhere", nargs: 1, run: userDelete},
	{name: "project create", args: "NAME", about: "create a project (with the settings of project update)", nargs: 1, flags: projectFlags, run: projectCreate},
	{name: "project update", args: "NAME", about: "change a project's settings: channel auto-creation, retention, what an insight without change means, Global Privacy Control, how urgent events repeat, who is notified", nargs: 1, flags: projectFlags, run: projectUpdate},
	{name: "project list", about: "list the account's projects: name, events, channels, settings", flags: accountFlag, run: projectList},
	{name: "project delete", args: "NAME", about: "delete a project with its channels, events and insights (asks for --yes)", nargs: 1, flags: yesFlags, run: projectDelete},
	{name: "channel create", args: "PROJECT CHANNEL", about: "create a channel in a project", nargs: 2, flags: accountFlag, run: channelCreate},
	{name: "channel update", args: "PROJECT CHANNEL", about: "change who is notified of a channel's events (--notify; project: follow the project's setting again)", nargs: 2, flags: channelFlags, run: channelUpdate},
	{name: "channel list", args: "PROJECT", about: "list a project's channels with their event counts and who is notified", nargs: 1, flags: accountFlag, run: channelList},
	{name: "channel delete", args: "PROJECT CHANNEL", about: "delete a channel with its events (asks for --yes)", nargs: 2, flags: yesFlags, run: channelDelete},
	{name: "publish", about: "publish an event to a server (TIDINGS_URL, TIDINGS_TOKEN): for cron jobs, deploy scripts and CI; prints its id",
		flags: publishFlagSet, run: publish, remote: true},
	{name: "event ack", args: "EVENT_ID", about: "acknowledge an event (stops an urgent event's repeats for everyone); prints \"EVENT_ID acknowledged by BY at TIME\", the first acknowledgement", nargs: 1,
		flags: func(fs *flag.FlagSet, c *cli) {
			accountFlag(fs, c)
			fs.StringVar(&c.by, "by", "", "who acknowledges, as members and webhooks see it (default: \"$USER (CLI)\")")
		}, run: eventAck},
	{name: "event delete", args: "EVENT_ID", about: "delete one event (from the feed, tag filters, search and counts)", nargs: 1, flags: accountFlag, run: eventDelete},
	{name: "insight delete", args: "PROJECT TITLE", about: "delete an insight and its history", nargs: 2, flags: accountFlag, run: insightDelete},
	{name: "tail", about: "follow a project's events live from a server (TIDINGS_URL, TIDINGS_TOKEN): one line per event; reconnects and resumes on its own",
		flags: tailFlags, run: tailEvents, remote: true},
	{name: "insight", about: "set, increment or decrement an insight on a server (TIDINGS_URL, TIDINGS_TOKEN); prints its new value",
		flags: insightFlagSet, run: insight, remote: true},
	{name: "token create", about: "create an API token and print it (it is shown only once)", flags: tokenFlags, run: tokenCreate},
	{name: "token list", about: "list API tokens: id, name, access, limits, created, last used, revoked, roles", flags: accountFlag, run: tokenList},
	{name: "token revoke", args: "TOKEN_ID", about: "revoke an API token at once", nargs: 1, flags: accountFlag, run: tokenRevoke},
	{name: "check", about: "verify every index, count and history against the events (read-only, safe beside a running server); exit 1 and a list if any is wrong",
		flags: func(fs *flag.FlagSet, c *cli) {
			fs.BoolVar(&c.verbose, "verbose", false, "print how long each check took (on standard error)")
			fs.BoolVar(&c.full, "full", false, "PostgreSQL: compare every event's search vector, not a sample of about 100,000 (minutes on a large store)")
		}, run: check},
	{name: "backup", about: "copy the embedded store to a new file, consistent, while the server runs (PostgreSQL: use pg_dump)",
		flags: func(fs *flag.FlagSet, c *cli) { fs.StringVar(&c.to, "to", "", "the new file (required)") }, run: backup},
	{name: "migrate-store", about: "copy an embedded store (a data folder) into an empty PostgreSQL database and verify the copy",
		flags: func(fs *flag.FlagSet, c *cli) {
			fs.StringVar(&c.from, "from", "", "the data folder to copy (required)")
			fs.StringVar(&c.to, "to", "", "postgres://… URL of the empty target database (required)")
		}, run: migrateStore},
	{name: "mail test", args: "ADDRESS", about: "send one test mail through --smtp-url; exit 1 with the server's reply if it was refused", nargs: 1,
		flags: func(fs *flag.FlagSet, c *cli) { mailFlags(fs, &c.cfg) }, run: mailTest},
	{name: "webhook create", about: "send a project's events to a URL; prints its id, then (standard) its signing secret", flags: webhookFlags, run: webhookCreate},
	{name: "webhook list", about: "list webhooks: id, name, project, channel, format, events, url", flags: accountFlag, run: webhookList},
	{name: "webhook delete", args: "WEBHOOK_ID", about: "delete a webhook and its pending deliveries", nargs: 1, flags: accountFlag, run: webhookDelete},
	{name: "hook create", about: "make an inbound hook: a secret URL that turns Stripe, GitHub, Alertmanager, Grafana or JSON webhooks into events; prints its path, then the secret it made",
		flags: hookFlags, run: hookCreate},
	{name: "hook list", about: "list inbound hooks: id, name, source, project, channel, created", flags: accountFlag, run: hookList},
	{name: "hook delete", args: "HOOK_ID", about: "delete an inbound hook (its URL stops working at once)", nargs: 1, flags: accountFlag, run: hookDelete},
}

func webhookFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.StringVar(&c.project, "project", "", "the project whose events are sent (required)")
	fs.StringVar(&c.channel, "channel", "", "only this channel's events")
	fs.StringVar(&c.url, "url", "", "where to POST them (required)")
	fs.StringVar(&c.format, "format", tidings.FormatStandard,
		"standard (signed JSON), slack, discord, ntfy, telegram, teams, google-chat, mattermost, pushover or gotify")
	fs.StringVar(&c.events, "events", tidings.WebhookNotify, "notify (events published with notify: true) or all")
	fs.StringVar(&c.name, "name", "", "a name to recognise the webhook by")
	fs.StringVar(&c.chatID, "chat-id", "", "telegram (required): the `chat` to post to, a number like -1001234567890 or @channelname; --url is https://api.telegram.org/bot<TOKEN>/sendMessage")
	fs.StringVar(&c.userKey, "user-key", "", "pushover (required): the user or group `key`, 30 letters and digits")
	fs.StringVar(&c.secret, "secret", "", "pushover: the application's API `token`, when it is not in the URL's token= (gotify's is in its /message?token= URL)")
	c.cfg.boolFlag(fs, &c.cfg.AllowPrivateTargets, "allow-private-targets", "ALLOW_PRIVATE_TARGETS",
		"save a --url on a loopback or private address (refused without it); the server delivers there only when it runs with --allow-private-targets too: for tests and closed networks")
}

func yesFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.BoolVar(&c.yes, "yes", false, "delete without asking: without it, the command says what would go and deletes nothing")
}

func accountFlag(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.account, "account", "", "account name (may be left out while exactly one account exists)")
}

func tokenFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.StringVar(&c.access, "access", "", "public (may only publish; for websites and apps) or full (may also read)")
	fs.StringVar(&c.project, "project", "", "limit the token to this project")
	fs.StringVar(&c.channel, "channel", "", "limit the token's log role to this channel (needs --project)")
	fs.StringVar(&c.roles, "roles", "log,insight", "comma-separated roles: log, insight")
	fs.StringVar(&c.name, "name", "", "a name to recognise the token by")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Tidings: publish log events and insights, read them live.\n\nUsage: tidings COMMAND [ARGUMENTS] [--flags]")
	printCommands(w, "")
	fmt.Fprintln(w, "\nCommands on the store take --data DIR (default ./tidings-data) or --database URL;\n"+
		"publish and insight take --url and --token (or TIDINGS_URL, TIDINGS_TOKEN).\nRun `tidings COMMAND --help` for its flags.")
}

// argumentsError says, in words, what a command expected and got.
func argumentsError(cmd command, pos []string) string {
	switch {
	case cmd.nargs == 0:
		return fmt.Sprintf("takes no arguments, but got %q (flags start with --; see tidings %s --help)", strings.Join(pos, " "), cmd.name)
	case len(pos) < cmd.nargs:
		return fmt.Sprintf("missing %s: usage is tidings %s %s", strings.Join(strings.Fields(cmd.args)[len(pos):], " "), cmd.name, cmd.args)
	default:
		return fmt.Sprintf("too many arguments (%d): usage is tidings %s %s (quote a value that has spaces)", len(pos), cmd.name, cmd.args)
	}
}

// helpGroups orders the full help: each group's commands in the table's order.
var helpGroups = []struct{ title, prefixes string }{
	{"Run the service", "serve health version mail"},
	{"Accounts, users and projects", "account user invite project channel"},
	{"API tokens, webhooks and inbound hooks", "token webhook hook"},
	{"Talk to a server (TIDINGS_URL, TIDINGS_TOKEN)", "publish insight tail"},
	{"Events and insights in the store", "event insight delete"},
	{"The store", "check backup migrate-store"},
}

// helpGroupOf is the index in helpGroups of a command's group.
func helpGroupOf(cmd command) int {
	if cmd.remote {
		return 3
	}
	first := strings.Fields(cmd.name)[0]
	for i, g := range helpGroups {
		if i == 3 {
			continue
		}
		for _, p := range strings.Fields(g.prefixes) {
			if p == first || p == cmd.name {
				return i
			}
		}
	}
	return len(helpGroups) - 1
}

// printCommands lists the commands of a group ("token"), or all of them, grouped, for "".
func printCommands(w io.Writer, group string) {
	line := func(name, args, about string) {
		fmt.Fprintf(w, "  tidings %-34s %s\n", strings.TrimSpace(name+" "+args), about)
	}
	if group != "" {
		for _, cmd := range commands {
			if cmd.name == group || strings.HasPrefix(cmd.name, group+" ") {
				line(cmd.name, cmd.args, cmd.about)
			}
		}
		return
	}
	// Within a group, a word's commands stay together (webhook …, then hook …), in the
	// order the table first names each word.
	var words []string
	for _, cmd := range commands {
		if w := strings.Fields(cmd.name)[0]; !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	for i, g := range helpGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, word := range words {
			for _, cmd := range commands {
				if helpGroupOf(cmd) == i && strings.Fields(cmd.name)[0] == word {
					line(cmd.name, cmd.args, cmd.about)
				}
			}
		}
		if i == 0 {
			line("version", "", "print the version")
		}
	}
}

// isGroup reports whether word names a group of commands ("account", "token").
func isGroup(word string) bool {
	for _, cmd := range commands {
		if strings.HasPrefix(cmd.name, word+" ") {
			return true
		}
	}
	return false
}

// isCommand reports whether name is a whole command ("insight", beside "insight delete").
func isCommand(name string) bool {
	for _, cmd := range commands {
		if cmd.name == name {
			return true
		}
	}
	return false
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "version" || args[0] == "--version" || args[0] == "-version" {
		fmt.Fprintln(stdout, "tidings", version())
		return 0
	}
	if isGroup(args[0]) && !isCommand(args[0]) && (len(args) == 1 || isHelp(args[1])) {
		w, code := stdout, 0
		if len(args) == 1 {
			w, code = stderr, 2
			fmt.Fprintf(w, "tidings %s: which one?\n\n", args[0])
		}
		fmt.Fprintf(w, "Usage:\n")
		printCommands(w, args[0])
		fmt.Fprintf(w, "\nRun `tidings %s COMMAND --help` for its flags.\n", args[0])
		return code
	}
	var cmd *command
	n := 0 // the longest command that the arguments start with wins: "insight delete" over "insight"
	for i := range commands {
		words := strings.Fields(commands[i].name)
		if len(words) > n && len(args) >= len(words) && strings.Join(args[:len(words)], " ") == commands[i].name {
			cmd, n = &commands[i], len(words)
		}
	}
	args = args[n:]
	if cmd == nil {
		fmt.Fprintf(stderr, "tidings: unknown command %q\n\n", strings.Join(args, " "))
		usage(stderr)
		return 2
	}
	if err := checkEnvFiles(); err != nil {
		fmt.Fprintf(stderr, "tidings %s: %v\n", cmd.name, err)
		return 1
	}
	c := &cli{cfg: DefaultConfig(), stdin: stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("tidings "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tidings %s [flags]\n\n%s%s.\n\nFlags:\n", strings.TrimSpace(cmd.name+" "+cmd.args),
			strings.ToUpper(cmd.about[:1]), cmd.about[1:])
		printFlags(fs)
		if isGroup(cmd.name) {
			fmt.Fprintf(fs.Output(), "\nAlso:\n")
			for _, o := range commands {
				if strings.HasPrefix(o.name, cmd.name+" ") {
					fmt.Fprintf(fs.Output(), "  tidings %-34s %s\n", strings.TrimSpace(o.name+" "+o.args), o.about)
				}
			}
		}
	}
	if cmd.name != "serve" && cmd.name != "migrate-store" && cmd.name != "health" && !cmd.remote {
		storeFlags(fs, &c.cfg)
	}
	if cmd.flags != nil {
		cmd.flags(fs, c)
	}
	for _, a := range args {
		if isHelp(a) && a != "help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2 // the flag package has said why
	}
	if len(pos) != cmd.nargs {
		fmt.Fprintf(stderr, "tidings %s: %s\n", cmd.name, argumentsError(*cmd, pos))
		return 2
	}
	if err := cmd.run(ctx, c, pos); err != nil {
		fmt.Fprintf(stderr, "tidings %s: %s\n", cmd.name, oneLine(err))
		return 1
	}
	return 0
}

// printFlags lists a command's flags the way the README writes them: --name.
func printFlags(fs *flag.FlagSet) {
	w := fs.Output()
	short := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if long, ok := aliases[f.Name]; ok && fs.Lookup(long) != nil {
			short[long] = f.Name
		}
	})
	fs.VisitAll(func(f *flag.Flag) {
		if long, ok := aliases[f.Name]; ok && fs.Lookup(long) != nil {
			return // shown with its long name
		}
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if s, ok := short[f.Name]; ok {
			line = "  -" + s + ", --" + f.Name
		}
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			if kind == "string" {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}

// parseInterleaved parses flags that may come before, between or after positional
// arguments ("channel create my-saas payments --account acme").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(errMessage(err)), " ")
}
