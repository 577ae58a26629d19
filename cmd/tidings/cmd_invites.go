// The invitation commands: tidings invite ….
package main

import (
	"context"
	"errors"
	"flag"
)

func inviteFlags(fs *flag.FlagSet, c *cli) { accountFlag(fs, c) }

func inviteCreate(ctx context.Context, c *cli, _ []string) error {
	return errors.New("invite create: not built yet")
}

func userNotifyFlags(fs *flag.FlagSet, c *cli) { accountFlag(fs, c) }

func userNotify(ctx context.Context, c *cli, args []string) error {
	return errors.New("user notify: not built yet")
}
