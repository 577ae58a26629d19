// Package deliver sends what the outbox holds: each event that may go out becomes one
// job per webhook (and, by the members' routes, per device with push and per mailbox
// with mail), sent by a bounded pool of workers per kind that is separate from ingest,
// retried with backoff and jitter for 24 hours. It also queues members' digests.
package deliver

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidings-dev/tidings"
)

// Defaults of a Runner.
const (
	DefaultWorkers = 64 // outbound requests at once per pool: waiting on the network costs little
	// mailWorkers bounds the mails sent at once: each is a connection to the one mail
	// server, and submission servers limit connections per client.
	mailWorkers = 8
	// DefaultGrace is how long a stopping runner lets the jobs under way finish.
	DefaultGrace = 5 * time.Second
	// lease is how long a claimed job is ours; a runner that dies loses it after this.
	lease     = 2 * time.Minute
	pollEvery = time.Second
)

// Config wires a Runner.
type Config struct {
	Store     tidings.Store
	Logger    *slog.Logger
	Now       func() time.Time
	Client    *http.Client // nil: NewClient(false)
	PublicURL string       // links in messages point here ("" = no links)
	VAPID     *VAPID       // the push key pair; nil: push notifications are not sent
	Workers   int          // jobs of each pool under way at once (0: DefaultWorkers)
	// Grace is how long Run lets the jobs under way finish once its context ends
	// (0: DefaultGrace); then they are cut short and their leases make them due again.
	Grace time.Duration
	// Signal wakes the runner when jobs were added (the store's), besides its poll.
	Signal <-chan struct{}
	// Backoff is the wait before retry number attempt (0: exponential from 5 s, at
	// most an hour, with ±50% jitter).
	Backoff func(attempt int) time.Duration
	// Observe is told every attempt's channel ("webhook", "push", "mail") and outcome ("ok",
	// "retry", "failed", "expired"), for metrics.
	Observe func(channel, outcome string)
	// PressKey signs the press tokens of notifications (nil: tidings.PressKey reads
	// it from the store, once).
	PressKey []byte
	// TestRepeatEvery is a test hook: when set, urgent events are pushed again this
	// often instead of their project's RepeatUrgentEvery (at least a minute). serve
	// takes it from TIDINGS_TEST_REPEAT_EVERY; never set it in production.
	TestRepeatEvery time.Duration
	// TestLease is a test hook: when set, a claimed job is this runner's for this long
	// instead of two minutes, so that a kill -9 test of a real server process on
	// PostgreSQL sees the jobs the dead one held sent again within seconds. serve takes
	// it from TIDINGS_TEST_LEASE; never set it in production (a lease shorter than a
	// send lets another runner send the same job at once).
	TestLease time.Duration
	// Mailer sends notification mail, summaries and digests (nil: members' email
	// routes and digests are not served).
	Mailer tidings.Mailer
	// MailKey signs unsubscribe links (nil: tidings.MailKey reads it from the store).
	MailKey []byte
}

// EnvTestRepeatEvery names the test hook that shortens escalation (Config.TestRepeatEvery):
// a kill -9 test of a real server process sees repeats within seconds.
const EnvTestRepeatEvery = "TIDINGS_TEST_REPEAT_EVERY"

// EnvTestLease names the test hook that shortens the lease of claimed jobs
// (Config.TestLease).
const EnvTestLease = "TIDINGS_TEST_LEASE"

// Runner sends the outbox's jobs.
type Runner struct {
	cfg        Config
	log        *slog.Logger
	pools      []*pool
	done       chan struct{} // a worker finished: there may be room for more
	flood      flood
	mailFlood  flood
	targets    targetCache
	recipients recipientCache
	routes     routeCache
	events     eventCache
	keyMu      sync.Mutex // guards cfg.PressKey and cfg.MailKey while they are loaded
	digesting  atomic.Bool
	lease      time.Duration // lease, or Config.TestLease
}

// New returns a Runner; Run starts it.
func New(cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(false)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Backoff == nil {
		cfg.Backoff = backoff
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string) {}
	}
	leased := lease
	if cfg.TestLease > 0 {
		leased = cfg.TestLease
	}
	return &Runner{cfg: cfg, log: cfg.Logger, lease: leased, done: make(chan struct{}, 1), mailFlood: flood{every: mailCollapseEvery}, pools: []*pool{
		{name: "events", kinds: []string{tidings.DeliverEvent, tidings.DeliverQuietSummary,
			tidings.DeliverRepeat, tidings.DeliverAck, tidings.DeliverPress, tidings.DeliverEscalate}},
		{name: "push", kinds: []string{tidings.DeliverPush, tidings.DeliverPushTest, tidings.DeliverPushAck}},
		{name: "mail", kinds: []string{tidings.DeliverMail, tidings.DeliverMailSummary, tidings.DeliverDigest}, places: mailWorkers},
		{name: "webhooks", kinds: []string{tidings.DeliverWebhook, tidings.DeliverTest,
			tidings.DeliverWebhookAck, tidings.DeliverWebhookPress}},
	}}
}

// pool is the workers of some kinds of job. Each pool has its own places, so that
// receivers of one kind that hang (64 webhooks that never answer) cannot stall
// another (push), nor the expansion of new events into jobs.
type pool struct {
	name   string
	kinds  []string
	places int // at most this many jobs at once (0: Config.Workers)
	busy   atomic.Int64
}

// backoff waits 5 s, 10 s, 20 s … up to an hour, each ±50%, so that retries of many
// jobs against one receiver spread out.
func backoff(attempt int) time.Duration {
	d := 5 * time.Second << min(attempt, 10)
	d = min(d, time.Hour)
	return time.Duration(float64(d) * (0.5 + rand.Float64()))
}

// Run sends jobs until ctx ends, then lets the ones under way finish for up to the
// grace period before it cuts them short, and returns when none is left.
func (r *Runner) Run(ctx context.Context) error {
	work, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	if r.cfg.VAPID != nil {
		if _, err := r.pressKey(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("loading the press key (tried again when a notification needs it)", "err", err)
		}
	}
	var wg sync.WaitGroup
	timer := time.NewTimer(pollEvery)
	defer timer.Stop()
	var digested time.Time
	for ctx.Err() == nil {
		if now := r.cfg.Now(); r.cfg.Mailer != nil && (digested.IsZero() || now.Sub(digested) >= digestEvery || now.Before(digested)) &&
			r.digesting.CompareAndSwap(false, true) {
			digested = now
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer r.digesting.Store(false)
				r.scheduleDigests(ctx, now)
			}()
		}
		more := false
		for _, p := range r.pools {
			places := r.cfg.Workers
			if p.places > 0 {
				places = min(places, p.places)
			}
			free := places - int(p.busy.Load())
			if free <= 0 {
				continue
			}
			jobs, err := r.cfg.Store.ClaimDeliveries(ctx, r.cfg.Now(), r.lease, free, p.kinds...)
			if err != nil && ctx.Err() == nil {
				r.log.Warn("claiming deliveries", "pool", p.name, "err", err)
			}
			for _, j := range jobs {
				p.busy.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.handle(work, j)
					p.busy.Add(-1)
					select {
					case r.done <- struct{}{}:
					default:
					}
				}()
			}
			more = more || len(jobs) == free // there may be more due
		}
		if more {
			continue
		}
		timer.Reset(pollEvery)
		select {
		case <-ctx.Done():
		case <-r.cfg.Signal:
		case <-r.done:
		case <-timer.C:
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(r.cfg.Grace):
		cut() // what is being sent is cut short; its lease makes it due again
		<-finished
	}
	return nil
}

// handle runs one job; its outcome is written back to the outbox.
func (r *Runner) handle(ctx context.Context, j *tidings.Delivery) {
	var err error
	switch j.Kind {
	case tidings.DeliverEvent:
		err = r.expand(ctx, j)
	case tidings.DeliverWebhook, tidings.DeliverTest, tidings.DeliverWebhookAck, tidings.DeliverWebhookPress:
		err = r.sendWebhook(ctx, j)
	case tidings.DeliverPush, tidings.DeliverPushTest, tidings.DeliverPushAck:
		err = r.sendPush(ctx, j)
	case tidings.DeliverQuietSummary:
		err = r.summarise(ctx, j)
	case tidings.DeliverRepeat:
		err = r.repeat(ctx, j)
	case tidings.DeliverAck:
		err = r.expandAck(ctx, j)
	case tidings.DeliverPress:
		err = r.expandPress(ctx, j)
	case tidings.DeliverEscalate:
		err = r.escalate(ctx, j)
	case tidings.DeliverMail, tidings.DeliverMailSummary, tidings.DeliverDigest:
		err = r.sendMail(ctx, j)
	default:
		r.log.Error("unknown delivery kind: dropped", "kind", j.Kind, "id", j.ID)
		err = r.cfg.Store.FinishDelivery(ctx, j.ID)
	}
	if err != nil && ctx.Err() == nil {
		// The store failed: the lease runs out and the job is tried again.
		r.log.Warn("delivery", "kind", j.Kind, "id", j.ID, "err", err)
	}
}

// mailKey is the key of unsubscribe links, read from the store the first time.
func (r *Runner) mailKey(ctx context.Context) ([]byte, error) {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	if r.cfg.MailKey == nil {
		k, err := tidings.MailKey(ctx, r.cfg.Store)
		if err != nil {
			return nil, err
		}
		r.cfg.MailKey = k
	}
	return r.cfg.MailKey, nil
}

// pressKey is the key of press tokens, read from the store the first time.
func (r *Runner) pressKey(ctx context.Context) ([]byte, error) {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	if r.cfg.PressKey == nil {
		k, err := tidings.PressKey(ctx, r.cfg.Store)
		if err != nil {
			return nil, err
		}
		r.cfg.PressKey = k
	}
	return r.cfg.PressKey, nil
}
