// tidings tail: follow a project's events from a terminal (GET /v1/events/stream).
package main

import (
	"context"
	"errors"
	"flag"
)

// Placeholders until the CLI helper lands (issue 40).

func tailFlags(fs *flag.FlagSet, c *cli) {}

func tailEvents(ctx context.Context, c *cli, _ []string) error {
	return errors.New("tail: not built yet")
}
