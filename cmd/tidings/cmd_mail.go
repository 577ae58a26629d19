// The mail settings of serve and the mail command: tidings mail test.
package main

import (
	"context"
	"errors"
	"flag"

	"github.com/tidings-dev/tidings"
)

// mailFlags registers --smtp-url, --smtp-insecure and --mail-from (TIDINGS_SMTP_URL,
// TIDINGS_SMTP_URL_FILE, TIDINGS_MAIL_FROM). Placeholder until the mail helper lands.
func mailFlags(fs *flag.FlagSet, c *Config) {}

// newMailer returns the configured mailer; nil (and no error) without --smtp-url.
func newMailer(c *Config) (tidings.Mailer, error) { return nil, nil }

func mailTest(ctx context.Context, c *cli, args []string) error {
	return errors.New("mail test: not built yet")
}
