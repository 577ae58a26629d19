package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// service is a part of the server that runs beside it: the HTTP listeners, the
// delivery runner, the retention purge, the live views' fan-out, the relay from other
// instances. Each one's run returns once its context ends (or, with stop, once stop
// has been called); it then has budget to finish what it is doing.
type service struct {
	name   string
	run    func(ctx context.Context) error
	stop   func(ctx context.Context) error // nil: ending run's context stops it
	budget time.Duration
}

// group runs services under one context and stops them in the reverse order of their
// start: what depends on another stops first (the HTTP server before the store's
// writers, the usage flush after the requests that record use). The services see the
// context's values, never its end: when it ends, the owner calls stop, which keeps the
// order (all of them ending at once would flush usage while requests still drain).
type group struct {
	ctx     context.Context
	log     *slog.Logger
	running []*running
}

func newGroup(ctx context.Context, log *slog.Logger) group {
	return group{ctx: context.WithoutCancel(ctx), log: log}
}

type running struct {
	service
	cancel context.CancelFunc
	done   chan error
}

// start runs s in its own goroutine under the group's context.
func (g *group) start(s service) {
	ctx, cancel := context.WithCancel(g.ctx)
	r := &running{service: s, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.run(ctx) }()
	g.running = append(g.running, r)
}

// stop stops every service, last started first, each within its own budget; one that
// overruns is reported and left behind. It returns what the services returned.
func (g *group) stop() error {
	var errs []error
	for i := len(g.running) - 1; i >= 0; i-- {
		r := g.running[i]
		ctx, cancel := context.WithTimeout(context.Background(), r.budget)
		if r.stop != nil {
			if err := r.stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
			}
		}
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
			}
		case <-ctx.Done():
			g.log.Warn("a part of the server did not stop in time", "part", r.name, "budget", r.budget)
			errs = append(errs, fmt.Errorf("%s did not stop within %v", r.name, r.budget))
		}
		cancel()
	}
	g.running = nil
	return errors.Join(errs...)
}

// every runs fn now and then every period until ctx ends.
func every(period time.Duration, fn func(ctx context.Context)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			fn(ctx)
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	}
}
