// The mail settings of serve and the mail command: tidings mail test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	netmail "net/mail"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/mail"
)

// mailFlags registers --smtp-url, --smtp-insecure and --mail-from (TIDINGS_SMTP_URL,
// TIDINGS_SMTP_URL_FILE, TIDINGS_SMTP_INSECURE, TIDINGS_MAIL_FROM).
func mailFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.SMTPURL, "smtp-url", envString("SMTP_URL", c.SMTPURL),
		"send mail through this server: smtp://USER:PASSWORD@HOST:587 (STARTTLS, required unless the host is loopback) or smtps://USER:PASSWORD@HOST:465 (TLS); empty: no mail (TIDINGS_SMTP_URL, or TIDINGS_SMTP_URL_FILE naming a file that holds it)")
	fs.StringVar(&c.MailFrom, "mail-from", envString("MAIL_FROM", c.MailFrom),
		`the sender of Tidings' mail, like tidings@example.com or "Tidings <tidings@example.com>" (TIDINGS_MAIL_FROM)`)
	c.boolFlag(fs, &c.SMTPInsecure, "smtp-insecure", "SMTP_INSECURE",
		"let an smtp:// server that is not loopback go without STARTTLS, and do not verify the mail server's certificate: for a relay on a network you trust only")
}

// mailConfig is the mail package's view of the settings.
func (c *Config) mailConfig() mail.Config {
	return mail.Config{URL: c.SMTPURL, From: c.MailFrom, Insecure: c.SMTPInsecure, RootCAs: c.SMTPRootCAs}
}

// newMailer returns the configured mailer; nil (and no error) without --smtp-url.
func newMailer(c *Config) (tidings.Mailer, error) {
	if c.SMTPURL == "" {
		return nil, nil
	}
	s, err := mail.New(c.mailConfig())
	if err != nil {
		return nil, err
	}
	return s, nil
}

// mailTest sends one message to args[0] and says through which server.
func mailTest(ctx context.Context, c *cli, args []string) error {
	if len(c.cfg.envErrs) > 0 {
		return errors.Join(c.cfg.envErrs...)
	}
	to, err := netmail.ParseAddress(args[0])
	if err != nil {
		return fmt.Errorf("%q is not an address, like ada@example.com", args[0])
	}
	if c.cfg.SMTPURL == "" {
		return errors.New("--smtp-url is missing: smtp://USER:PASSWORD@HOST:587 or smtps://USER:PASSWORD@HOST:465 (or TIDINGS_SMTP_URL)")
	}
	s, err := mail.New(c.cfg.mailConfig())
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	text := "This is a test mail from Tidings (tidings mail test),\nsent through " + s.Addr() + "\nat " +
		now.Format("2006-01-02 15:04:05 MST") + ".\n\nIf you are reading it, Tidings can send mail:\n" +
		"notifications, digests, invitations and password reset links.\n"
	err = s.Send(ctx, &tidings.MailMessage{To: to.Address, Subject: "Tidings test mail", Text: text})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "sent to %s via %s\n", to.Address, s.Addr())
	return nil
}

// mailProbeTimeout bounds serve's look at the mail server at start.
const mailProbeTimeout = 10 * time.Second

// startMail makes serve's mailer (nil without --smtp-url) and looks at the server: a
// public smtp:// server without STARTTLS stops the start (the password would cross
// the network in the clear); one that cannot be reached now is a warning, as mail
// waits in the outbox and is retried.
func (m *Main) startMail(ctx context.Context) (tidings.Mailer, error) {
	c := m.Config
	if c.SMTPURL == "" {
		if c.MailFrom != "" {
			m.Logger.Warn("--mail-from is set but --smtp-url is not: no mail is sent")
		}
		return nil, nil
	}
	s, err := mail.New(c.mailConfig())
	if err != nil {
		return nil, err
	}
	s.Now = m.Now
	pctx, cancel := context.WithTimeout(ctx, mailProbeTimeout)
	defer cancel()
	var refused *tidings.MailError
	switch err := s.Probe(pctx); {
	case errors.Is(err, mail.ErrNoSTARTTLS):
		return nil, fmt.Errorf("--smtp-url: %s does not offer STARTTLS; use smtps:// if it takes TLS on port 465, "+
			"or --smtp-insecure if the network between is yours", s.Addr())
	case errors.As(err, &refused):
		m.Logger.Warn("the mail server refused Tidings ("+refused.Error()+"): mail fails until --smtp-url is right",
			"smtp", s.Addr(), "code", refused.Code)
	case err != nil:
		m.Logger.Warn("the mail server cannot be reached now: mail waits in the outbox and is retried",
			"smtp", s.Addr(), "err", err)
	default:
		m.Logger.Info("mail goes through "+s.Addr(), "smtp", s.Addr(), "from", c.MailFrom)
	}
	if c.PublicURL == "" {
		m.Logger.Warn("--smtp-url without --public-url: mails carry no links (to the event, to unsubscribe), " +
			"and invitations and password resets are not mailed; set --public-url to the dashboard's address")
	}
	return s, nil
}
