// The inbound hook commands: tidings hook ….
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/hooks"
)

// hookOptions are the flags of tidings hook create that other commands do not share.
type hookOptions struct {
	source, template, userIDFrom string
}

func hookFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.StringVar(&c.project, "project", "", "the project its events go to (required)")
	fs.StringVar(&c.channel, "channel", "", "the channel its events go to (required)")
	fs.StringVar(&c.hook.source, "source", "", "who sends it (required): stripe, github, alertmanager, grafana or json")
	fs.StringVar(&c.secret, "secret", "", "stripe (required): the endpoint's signing `secret` (whsec_…) from Stripe's dashboard; github: the webhook secret; alertmanager, grafana, json: a bearer token the sender must present (github and the others: at least 16 characters; made and printed when left out)")
	fs.StringVar(&c.hook.template, "template", "", "json (required): a JSON or YAML `file` with the fields event, description, icon, tags, user_id and notify, each a Go text/template run on the delivery's body")
	fs.StringVar(&c.name, "name", "", "a name to recognise the hook by")
	fs.StringVar(&c.hook.userIDFrom, "user-id-from", "", "stripe: customer (the customer id is the events' user_id; the default) or none")
}

// readHookTemplate reads --template: a JSON or YAML object with the template's fields.
// Unknown fields are refused: a typo must not silently drop a field.
func readHookTemplate(file string) (*tidings.HookTemplate, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--template: %w", err)
	}
	var f struct {
		Event       string `json:"event" yaml:"event"`
		Description string `json:"description" yaml:"description"`
		Icon        string `json:"icon" yaml:"icon"`
		Tags        string `json:"tags" yaml:"tags"`
		UserID      string `json:"user_id" yaml:"user_id"`
		Notify      string `json:"notify" yaml:"notify"`
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		err = d.Decode(&f)
	} else {
		d := yaml.NewDecoder(bytes.NewReader(b))
		d.KnownFields(true)
		err = d.Decode(&f)
	}
	if err != nil {
		return nil, fmt.Errorf("--template %s: not a JSON or YAML object of text fields event, description, icon, tags, user_id, notify (%s)",
			file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return &tidings.HookTemplate{Event: f.Event, Description: f.Description, Icon: f.Icon, Tags: f.Tags, UserID: f.UserID, Notify: f.Notify}, nil
}

func hookCreate(ctx context.Context, c *cli, _ []string) error {
	nh := tidings.NewHook{Project: c.project, Channel: c.channel, Source: c.hook.source, Name: c.name, Secret: c.secret,
		UserIDFrom: c.hook.userIDFrom}
	if c.hook.template != "" {
		t, err := readHookTemplate(c.hook.template)
		if err != nil {
			return err
		}
		nh.Template = t
	}
	var p tidings.Problems
	nh.Check(&p) // the shape; parsing the template and bounding its cost is hooks.CheckTemplate's
	if nh.Source == tidings.HookJSON && nh.Template != nil && !p.Has("template.event") {
		var e *tidings.Error
		if err := hooks.CheckTemplate(nh.Template); errors.As(err, &e) {
			for _, f := range e.Fields {
				p.Add(f.Path, f.Type, "%s", strings.TrimPrefix(f.Message, f.Path+": "))
			}
		} else if err != nil {
			return err
		}
	}
	if nh.Source == tidings.HookStripe && nh.Secret == "" {
		// Stripe makes the signing secret; a secret of ours would never match its signatures.
		p.Add("secret", "required", "is required for stripe: the endpoint's signing secret (whsec_…), shown in Stripe's dashboard once the endpoint is added")
	}
	if err := p.Err(); err != nil {
		return flagError(err, "project", "channel", "source", "secret", "name", "user_id_from", "template")
	}
	made := false
	if nh.Secret == "" {
		nh.Secret, _ = tidings.NewSecret()
		made = true
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		path, hash := tidings.NewHookPath()
		h := &tidings.Hook{ID: tidings.HookID(hash), PathHash: hash, AccountID: a.ID, Project: nh.Project, Channel: nh.Channel,
			Source: nh.Source, Name: nh.Name, Secret: nh.Secret, UserIDFrom: nh.UserIDFrom, Template: nh.Template}
		if err := s.CreateHook(ctx, h); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, "/hooks/"+path) // shown only now: the store keeps its hash
		if made {
			fmt.Fprintln(c.stdout, nh.Secret)
		}
		fmt.Fprintf(c.stderr, "hook %s: %s\n", h.ID, hookHint(nh.Source, made))
		return nil
	})
}

// hookHint says where the URL (the server's address and the path) and the secret go
// at the sender's end (docs/guide.md, "Hooks in", says it step by step): the secret
// is the second line when the command made it, else the one given with --secret.
func hookHint(source string, made bool) string {
	secret := "the secret you gave with --secret"
	if made {
		secret = "the second line"
	}
	switch source {
	case tidings.HookStripe:
		return "give Stripe https://YOUR-SERVER and the path as the endpoint URL (Workbench → Webhooks → the endpoint → Update details)"
	case tidings.HookGitHub:
		return "in GitHub's Settings → Webhooks → Add webhook: Payload URL https://YOUR-SERVER and the path, content type application/json, Secret " + secret
	case tidings.HookAlertmanager:
		return "in alertmanager.yml: a receiver's webhook_configs url https://YOUR-SERVER and the path, http_config.authorization.credentials " + secret
	case tidings.HookGrafana:
		return "in Grafana's Alerting → Contact points → Webhook: URL https://YOUR-SERVER and the path, Authorization header credentials " + secret
	}
	return "POST JSON to https://YOUR-SERVER and the path, with Authorization: Bearer and " + secret
}

func hookList(ctx context.Context, c *cli, _ []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		hs, err := s.ListHooks(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) { // scripts read one line per hook, id first
			fmt.Fprintln(w, "ID\tNAME\tSOURCE\tPROJECT\tCHANNEL\tCREATED")
		}
		for _, h := range hs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, orDash(h.Name), h.Source, h.Project, h.Channel,
				h.CreatedAt.UTC().Format(time.RFC3339))
		}
		return w.Flush()
	})
}

func hookDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.DeleteHook(ctx, a.ID, args[0]); err != nil {
			if tidings.ErrorCode(err) == tidings.ENotFound {
				return errors.New("no hook " + args[0] + " in this account (tidings hook list shows their ids)")
			}
			return err
		}
		fmt.Fprintf(c.stdout, "deleted hook %s\n", args[0])
		return nil
	})
}
