// The inbound hook commands: tidings hook ….
package main

import (
	"context"
	"errors"
	"flag"
)

// Placeholders until the CLI helper lands (issue 40).

func hookFlags(fs *flag.FlagSet, c *cli) { accountFlag(fs, c) }

func hookCreate(ctx context.Context, c *cli, _ []string) error {
	return errors.New("hook create: not built yet")
}

func hookList(ctx context.Context, c *cli, _ []string) error {
	return errors.New("hook list: not built yet")
}

func hookDelete(ctx context.Context, c *cli, _ []string) error {
	return errors.New("hook delete: not built yet")
}
