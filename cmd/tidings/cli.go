package main

import (
	"context"
	"errors"

	"github.com/tidings-dev/tidings"
)

// errMessage is what a failing command prints: the domain message, or the error text
// for errors of the machine (an unreadable data folder) that the operator must see.
func errMessage(err error) string {
	var e *tidings.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// withStore opens the store for one management command. It works beside running
// servers: SQLite serialises the writers, each waits for the other's lock; PostgreSQL
// takes them all (a command uses two connections).
func withStore(ctx context.Context, c *cli, fn func(s tidings.Store) error) error {
	s, err := openStore(ctx, c.cfg, nil, 2, false)
	if err != nil {
		return err
	}
	return errors.Join(fn(s), s.Close())
}

// withAccount runs fn on the store with the account that --account names (or the only one).
func withAccount(ctx context.Context, c *cli, fn func(s tidings.Store, a *tidings.Account) error) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		a, err := findAccount(ctx, s, c.account)
		if err != nil {
			return err
		}
		return fn(s, a)
	})
}
