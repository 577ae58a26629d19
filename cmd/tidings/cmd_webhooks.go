// The webhook commands: tidings webhook ….

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/netguard"
)

func webhookCreate(ctx context.Context, c *cli, _ []string) error {
	nw := tidings.NewWebhook{Project: c.project, Channel: c.channel, URL: c.url, Format: c.format, Events: c.events, Name: c.name,
		ChatID: c.chatID, UserKey: c.userKey, Secret: c.secret}
	var p tidings.Problems
	nw.Check(&p)
	if nw.Secret != "" && nw.Format != tidings.FormatPushover {
		// Check says so for the chat formats only; a standard webhook's secret is made here.
		p.Add("secret", "unexpected", "is for pushover webhooks only")
	}
	if err := p.Err(); err != nil {
		return flagError(err, "chat_id", "user_key", "secret")
	}
	if len(c.cfg.envErrs) > 0 { // a TIDINGS_ALLOW_PRIVATE_TARGETS that is not a boolean
		return errors.Join(c.cfg.envErrs...)
	}
	w := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: nw.Project, Channel: nw.Channel, URL: nw.URL,
		Format: nw.Format, Events: nw.Events, Name: nw.Name, ChatID: nw.ChatID, UserKey: nw.UserKey, Secret: nw.Secret}
	// As the dashboard decides: an address written in the URL is refused here; a name
	// that resolves to one, by the server when it connects.
	if netguard.PrivateURL(w.URL) && !c.cfg.AllowPrivateTargets {
		return fmt.Errorf("--url %s is a loopback or private address, which webhooks may not reach: give --allow-private-targets for a closed network (the server needs it too)",
			w.DisplayURL())
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if w.Format == tidings.FormatStandard {
			w.Secret = tidings.NewWebhookSecret()
		}
		if err := s.CreateWebhook(ctx, a.ID, w); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, w.ID)
		if w.Format == tidings.FormatStandard {
			fmt.Fprintln(c.stdout, w.Secret) // shown only now; a chat service's secrets are what the user typed
		}
		if !c.cfg.AllowPrivateTargets && resolvesPrivate(ctx, w.URL) {
			fmt.Fprintf(c.stderr, "warning: %s resolves to a loopback or private address: the server refuses to deliver to it unless started with --allow-private-targets\n", w.DisplayURL())
		}
		return nil
	})
}

// resolvesPrivate reports whether a URL's host is a name that resolves only to
// loopback, private or link-local addresses, which the server refuses by default.
func resolvesPrivate(ctx context.Context, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil || host == "" {
		return false // an address: netguard.PrivateURL's
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false // unknown here; the server says so when it tries
	}
	for _, a := range addrs {
		if netguard.Public(a.Unmap()) {
			return false
		}
	}
	return len(addrs) > 0
}

func webhookList(ctx context.Context, c *cli, _ []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ws, err := s.ListWebhooks(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "ID\tNAME\tPROJECT\tCHANNEL\tFORMAT\tEVENTS\tURL")
		}
		for _, h := range ws {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, orDash(h.Name), h.Project, orDash(h.Channel), h.Format, h.Events, h.DisplayURL())
		}
		return w.Flush()
	})
}

func webhookDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.DeleteWebhook(ctx, a.ID, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted webhook %s\n", args[0])
		return nil
	})
}
