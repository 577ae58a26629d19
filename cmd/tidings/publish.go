package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/client"
)

// publishFlags are the flags of `tidings publish` and `tidings insight`: they talk to
// a server over the API, with TIDINGS_URL and TIDINGS_TOKEN, not to a store.
type publishFlags struct {
	url, token                           string
	event, description, icon, userID     string
	tags                                 tagFlags
	notify, markdown                     bool
	title, value, change, prefix, suffix string
	setPrefix, setSuffix, setIcon        bool
	key, file                            string
	// the intent fields of publish: --priority, --click, --key, --action
	priority, click, threadKey string
	actions                    tagFlags
}

// tagFlags collects repeated --tag key=value flags.
type tagFlags []string

func (t *tagFlags) String() string     { return strings.Join(*t, ",") }
func (t *tagFlags) Set(v string) error { *t = append(*t, v); return nil }

// aliases are the one-letter spellings of flags: shown as "-p, --project".
var aliases = map[string]string{"p": "project", "c": "channel", "e": "event", "t": "title", "v": "value", "d": "description"}

func serverFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.pub.url, "url", envString("URL", client.DefaultURL), "the server's address (TIDINGS_URL)")
	fs.StringVar(&c.pub.token, "token", "", "an API token with the role this needs (TIDINGS_TOKEN or TIDINGS_TOKEN_FILE; prefer them: flags show in process lists)")
	fs.StringVar(&c.project, "project", "", "the project (required)")
	fs.StringVar(&c.project, "p", "", "")
	fs.StringVar(&c.pub.key, "idempotency-key", "", "send it with this `key`: run again with the same key (within a day), it is not stored twice. Without it a random key guards the command's own retries")
}

func publishFlagSet(fs *flag.FlagSet, c *cli) {
	serverFlags(fs, c)
	fs.StringVar(&c.channel, "channel", "", "the channel (required)")
	fs.StringVar(&c.channel, "c", "", "")
	fs.StringVar(&c.pub.event, "event", "", "what happened, like \"Deployed v1.4\" (required)")
	fs.StringVar(&c.pub.event, "e", "", "")
	fs.StringVar(&c.pub.description, "description", "", "more about it (Markdown with --markdown)")
	fs.StringVar(&c.pub.description, "d", "", "")
	fs.StringVar(&c.pub.icon, "icon", "", "one emoji, like 🚀 or :rocket:")
	fs.Var(&c.pub.tags, "tag", "a tag `key=value` (repeat for more); numbers and true/false keep their kind")
	fs.BoolVar(&c.pub.notify, "notify", false, "send it as a push notification too")
	fs.BoolVar(&c.pub.markdown, "markdown", false, "the description is Markdown")
	fs.StringVar(&c.pub.userID, "user-id", "", "the user it concerns (their journey)")
	fs.StringVar(&c.pub.priority, "priority", "", "min, low, default, high or urgent (or 1 to 5): urgent is pushed again until acknowledged")
	fs.StringVar(&c.pub.click, "click", "", "the http(s) `URL` a tap on the notification or the event's card opens (the event's \"url\"; --url is the server's)")
	fs.StringVar(&c.pub.threadKey, "key", "", "what the event is about, like deploy-1432: a later event with this key in the channel is a new version of it")
	fs.Var(&c.pub.actions, "action", "a button (repeat for up to 3): `Label=https://…` opens the URL, Label=id is recorded when pressed (tidings event ack and webhooks' event.action)")
	fs.StringVar(&c.pub.file, "file", "", "send the events of this `file` (- for standard input) in batches: one JSON object per line, as POST /v1/log takes it; -p and -c fill in what a line leaves out")
}

func insightFlagSet(fs *flag.FlagSet, c *cli) {
	serverFlags(fs, c)
	fs.StringVar(&c.pub.title, "title", "", "the insight's title, like \"Signups today\" (required)")
	fs.StringVar(&c.pub.title, "t", "", "")
	fs.StringVar(&c.pub.value, "value", "", "the value (required): a number, true/false or text")
	fs.StringVar(&c.pub.value, "v", "", "")
	fs.StringVar(&c.pub.change, "change", tidings.ChangeUpdate, "update (set the value), increment or decrement (by the value)")
	fs.Func("icon", "one `emoji`, like 👥", func(s string) error { c.pub.icon, c.pub.setIcon = s, true; return nil })
	fs.Func("prefix", "`text` shown before the value, like $", func(s string) error { c.pub.prefix, c.pub.setPrefix = s, true; return nil })
	fs.Func("suffix", "`text` shown after the value, like %", func(s string) error { c.pub.suffix, c.pub.setSuffix = s, true; return nil })
}

// scalar is a command-line value as JSON would carry it: a number, a boolean or text.
func scalar(s string) (value, kind string) {
	switch s {
	case "true", "false":
		return s, tidings.KindBool
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXnN_ ") && s != "" && s[0] != '+' && s[0] != '.' {
		return s, tidings.KindNumber
	}
	return s, tidings.KindString
}

func (c *cli) client() (*client.Client, error) {
	token := c.pub.token
	if token == "" {
		token, _ = env("TOKEN") // or TIDINGS_TOKEN_FILE
	}
	if token == "" {
		return nil, errors.New("no token: export TIDINGS_TOKEN=tds_… (Settings → API, or tidings token create), or give --token")
	}
	return client.New(c.pub.url, token), nil
}

func publish(ctx context.Context, c *cli, _ []string) error {
	if c.pub.file != "" {
		return publishFile(ctx, c)
	}
	e := &tidings.NewEvent{Project: c.project, Channel: c.channel, Event: c.pub.event, Description: c.pub.description,
		Icon: c.pub.icon, Notify: c.pub.notify, UserID: c.pub.userID}
	if c.pub.markdown {
		e.Parser = tidings.ParserMarkdown
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"-p/--project", e.Project}, {"-c/--channel", e.Channel}, {"-e/--event", e.Event}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s required: tidings publish -p my-saas -c deploys -e \"Deployed v1.4\"", strings.Join(missing, ", ")+map[bool]string{true: " is", false: " are"}[len(missing) == 1])
	}
	e.Priority, e.URL, e.ThreadKey = c.pub.priority, c.pub.click, c.pub.threadKey
	for _, a := range c.pub.actions {
		action, err := parseAction(a)
		if err != nil {
			return err
		}
		e.Actions = append(e.Actions, action)
	}
	for _, t := range c.pub.tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("--tag %q: write key=value, like --tag plan=pro", t)
		}
		value, kind := scalar(v)
		e.Tags = append(e.Tags, tidings.Tag{Key: k, Kind: kind, Value: value})
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	ev, err := cl.Publish(ctx, e, keyOption(c.pub.key)...)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, ev.ID)
	return nil
}

func insight(ctx context.Context, c *cli, _ []string) error {
	if c.project == "" || c.pub.title == "" || c.pub.value == "" {
		return errors.New("-p/--project, -t/--title and -v/--value are required: tidings insight -p my-saas -t \"Signups today\" -v 1 --change increment")
	}
	ch := &tidings.InsightChange{Project: c.project, Title: c.pub.title, Change: c.pub.change}
	ch.Value, ch.ValueKind = scalar(c.pub.value)
	if c.pub.setIcon {
		ch.Icon = &c.pub.icon
	}
	if c.pub.setPrefix {
		ch.Prefix = &c.pub.prefix
	}
	if c.pub.setSuffix {
		ch.Suffix = &c.pub.suffix
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	in, err := cl.Insight(ctx, ch, keyOption(c.pub.key)...)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: %s%s%s\n", in.Title, in.Prefix, in.Value, in.Suffix)
	return nil
}

// keyOption is the client's option for --idempotency-key: none without one (the client
// then makes a random key, which its retries repeat).
func keyOption(key string) []client.Option {
	if key == "" {
		return nil
	}
	return []client.Option{client.IdempotencyKey(key)}
}

// parseAction reads --action: "Label=https://…" (a button that opens the URL) or
// "Label=id" (a button that is recorded). The label ends at the first "=": a URL may
// hold more.
func parseAction(s string) (tidings.Action, error) {
	label, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(label) == "" || v == "" {
		return tidings.Action{}, fmt.Errorf("--action %q: write Label=https://… (a button that opens the URL) or Label=id (one that is recorded when pressed), like --action Approve=approve", s)
	}
	if strings.Contains(v, "://") || strings.Contains(v, ":") && !tidings.ValidName(v) {
		return tidings.Action{Label: label, URL: v}, nil // the server says if it is not http(s)
	}
	return tidings.Action{Label: label, ID: v}, nil
}
