// Package deliver sends what the outbox holds: each event that may go out becomes one
// job per webhook (and, with push, per device), sent by a bounded pool of workers that
// is separate from ingest, retried with backoff and jitter for 24 hours.
package deliver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidings-dev/tidings"
)

// Defaults of a Runner.
const (
	DefaultWorkers = 64 // outbound requests at once per pool: waiting on the network costs little
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
	// Observe is told every attempt's channel ("webhook") and outcome ("ok",
	// "retry", "failed", "expired"), for metrics.
	Observe func(channel, outcome string)
}

// Runner sends the outbox's jobs.
type Runner struct {
	cfg     Config
	log     *slog.Logger
	pools   []*pool
	done    chan struct{} // a worker finished: there may be room for more
	flood   flood
	targets targetCache
	events  eventCache
}

// eventCache keeps recently sent events for a few seconds: one notify event goes to
// every device of an account, and each job would otherwise read it again.
type eventCache struct {
	mu   sync.Mutex
	byID map[string]cachedEvent
}

type cachedEvent struct {
	ev   *tidings.Event
	read time.Time
}

const (
	eventsFresh    = 10 * time.Second
	maxEventsCache = 1024
)

func (c *eventCache) get(ctx context.Context, st tidings.Store, accountID int64, id string, now time.Time) (*tidings.Event, error) {
	c.mu.Lock()
	if e, ok := c.byID[id]; ok && now.Sub(e.read) < eventsFresh && e.ev != nil {
		c.mu.Unlock()
		return e.ev, nil
	}
	c.mu.Unlock()
	ev, err := st.FindEventByID(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil || len(c.byID) >= maxEventsCache {
		c.byID = map[string]cachedEvent{} // bounded: start afresh
	}
	c.byID[id] = cachedEvent{ev: ev, read: now}
	return ev, nil
}

// targetCache keeps each account's devices and preferences for a second: a burst of
// notify events would otherwise read them once per event. A device removed or a mute
// set counts from the next second on.
type targetCache struct {
	mu       sync.Mutex
	accounts map[int64]*accountTargets
}

type accountTargets struct {
	read  time.Time
	subs  []*tidings.PushSubscription
	prefs map[int64]*tidings.NotifyPrefs
}

const targetsFresh = time.Second

// sub finds a device of the account, from the cache when it is fresh.
func (c *targetCache) sub(ctx context.Context, st tidings.Store, accountID int64, id string, now time.Time) (*tidings.PushSubscription, error) {
	if t, err := c.get(ctx, st, accountID, now); err == nil {
		for _, s := range t.subs {
			if s.ID == id {
				return s, nil
			}
		}
	}
	return st.FindPushSubscription(ctx, id)
}

func (c *targetCache) get(ctx context.Context, st tidings.Store, accountID int64, now time.Time) (*accountTargets, error) {
	c.mu.Lock()
	if c.accounts == nil {
		c.accounts = map[int64]*accountTargets{}
	}
	t := c.accounts[accountID]
	c.mu.Unlock()
	if t != nil && now.Sub(t.read) < targetsFresh {
		return t, nil
	}
	subs, err := st.AccountPushSubscriptions(ctx, accountID)
	if err != nil {
		return nil, err
	}
	prefs, err := st.AccountNotifyPrefs(ctx, accountID)
	if err != nil {
		return nil, err
	}
	t = &accountTargets{read: now, subs: subs, prefs: prefs}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, old := range c.accounts { // bounded: stale entries go
		if now.Sub(old.read) > time.Minute {
			delete(c.accounts, id)
		}
	}
	c.accounts[accountID] = t
	return t, nil
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
	return &Runner{cfg: cfg, log: cfg.Logger, done: make(chan struct{}, 1), pools: []*pool{
		{name: "events", kinds: []string{tidings.DeliverEvent, tidings.DeliverQuietSummary}},
		{name: "push", kinds: []string{tidings.DeliverPush, tidings.DeliverPushTest}},
		{name: "webhooks", kinds: []string{tidings.DeliverWebhook, tidings.DeliverTest}},
	}}
}

// pool is the workers of some kinds of job. Each pool has its own places, so that
// receivers of one kind that hang (64 webhooks that never answer) cannot stall
// another (push), nor the expansion of new events into jobs.
type pool struct {
	name  string
	kinds []string
	busy  atomic.Int64
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
	var wg sync.WaitGroup
	timer := time.NewTimer(pollEvery)
	defer timer.Stop()
	for ctx.Err() == nil {
		more := false
		for _, p := range r.pools {
			free := r.cfg.Workers - int(p.busy.Load())
			if free <= 0 {
				continue
			}
			jobs, err := r.cfg.Store.ClaimDeliveries(ctx, r.cfg.Now(), lease, free, p.kinds...)
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
	case tidings.DeliverWebhook, tidings.DeliverTest:
		err = r.sendWebhook(ctx, j)
	case tidings.DeliverPush, tidings.DeliverPushTest:
		err = r.sendPush(ctx, j)
	case tidings.DeliverQuietSummary:
		err = r.summarise(ctx, j)
	default:
		r.log.Error("unknown delivery kind: dropped", "kind", j.Kind, "id", j.ID)
		err = r.cfg.Store.FinishDelivery(ctx, j.ID)
	}
	if err != nil && ctx.Err() == nil {
		// The store failed: the lease runs out and the job is tried again.
		r.log.Warn("delivery", "kind", j.Kind, "id", j.ID, "err", err)
	}
}

// expand turns an event's job into one job per target — each webhook that wants it,
// and for a notify event each device of the account's members that did not mute it —
// atomically, with a record of what becomes of it for each device.
func (r *Runner) expand(ctx context.Context, j *tidings.Delivery) error {
	ev, err := r.cfg.Store.FindEventByID(ctx, j.AccountID, j.EventID)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return r.cfg.Store.FinishDelivery(ctx, j.ID) // deleted meanwhile
	}
	if err != nil {
		return err
	}
	hooks, err := r.cfg.Store.WebhooksFor(ctx, j.AccountID, ev.Project, ev.Channel)
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	var jobs []*tidings.Delivery
	for _, w := range hooks {
		if w.Wants(ev) {
			jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverWebhook, AccountID: j.AccountID, EventID: ev.ID,
				Target: w.ID, MessageID: tidings.NewID("msg_"), NextAt: now, CreatedAt: j.CreatedAt})
		}
	}
	var records []*tidings.PushRecord
	if ev.Notify && r.cfg.VAPID != nil {
		pushJobs, recs, err := r.pushTargets(ctx, j, ev, now)
		if err != nil {
			return err
		}
		jobs, records = append(jobs, pushJobs...), recs
	}
	return r.cfg.Store.ReplaceDelivery(ctx, j.ID, jobs, records)
}

// pushTargets decides, device by device, what a notify event becomes: a push, a
// collapsed push (the device had its PushesPerMinute), nothing (muted, or counted for
// the next collapsed one), or a line in the summary at the end of the user's quiet
// hours. Deciding here, not when sending, keeps a burst from becoming a job per event
// and device.
func (r *Runner) pushTargets(ctx context.Context, j *tidings.Delivery, ev *tidings.Event, now time.Time) ([]*tidings.Delivery, []*tidings.PushRecord, error) {
	targets, err := r.targets.get(ctx, r.cfg.Store, j.AccountID, now)
	if err != nil {
		return nil, nil, err
	}
	var jobs []*tidings.Delivery
	var records []*tidings.PushRecord
	for _, sub := range targets.subs {
		p := targets.prefs[sub.UserID]
		if p == nil {
			p = &tidings.NotifyPrefs{}
		}
		status := tidings.PushPending
		if p.Mutes(ev.Project, ev.Channel) {
			status = tidings.PushMuted
		} else if until, quiet := p.QuietUntil(now); quiet {
			status = tidings.PushQuiet
			// One summary per user and quiet period: the message id makes it unique. It
			// counts the user's quiet records since a day before the period's end: the
			// previous period ended then.
			jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverQuietSummary, AccountID: j.AccountID,
				Target: strconv.FormatInt(sub.UserID, 10), MessageID: fmt.Sprintf("quiet-%d-%d", sub.UserID, until.Unix()),
				NextAt: until, CreatedAt: until.Add(-24 * time.Hour)})
		} else {
			normal, n := r.flood.admit(sub.ID, ev.Project+"/"+ev.Channel, now)
			switch {
			case normal:
			case n > 0:
				status = tidings.PushCollapsed
			default:
				// Counted for the device's next collapsed notification. No record: a
				// burst must not cost a write per event and device.
				continue
			}
			jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverPush, AccountID: j.AccountID, EventID: ev.ID,
				Target: sub.ID, MessageID: tidings.NewID("push_"), Count: n, NextAt: now, CreatedAt: j.CreatedAt})
		}
		records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: sub.UserID, Status: status, At: now})
	}
	return jobs, records, nil
}

// testEvent is what "send a test" delivers.
func testEvent(w *tidings.Webhook, now time.Time) *tidings.Event {
	return &tidings.Event{ID: "test", Project: w.Project, Channel: w.Channel, Event: "Test from Tidings", Icon: "🔔",
		Description: "This is a test message: the webhook works.", Parser: tidings.ParserText, Notify: true,
		Tags: tidings.Tags{}, Timestamp: now, CreatedAt: now}
}

// sendWebhook sends one event to one webhook and records the attempt.
func (r *Runner) sendWebhook(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	w, err := st.FindWebhook(ctx, j.AccountID, j.Target)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return st.FinishDelivery(ctx, j.ID)
	}
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	var ev *tidings.Event
	if j.Kind == tidings.DeliverTest {
		ev = testEvent(w, now)
	} else if ev, err = st.FindEventByID(ctx, j.AccountID, j.EventID); tidings.ErrorCode(err) == tidings.ENotFound {
		return st.FinishDelivery(ctx, j.ID)
	} else if err != nil {
		return err
	}
	req, err := webhookRequest(w, ev, j.MessageID, r.cfg.PublicURL, now)
	if err != nil {
		r.log.Error("building a webhook request", "webhook", w.ID, "err", err)
		return st.FinishDelivery(ctx, j.ID)
	}
	out := r.send(ctx, req.WithContext(ctx))
	attempt := &tidings.WebhookAttempt{WebhookID: w.ID, MessageID: j.MessageID, EventID: ev.ID, Attempt: j.Attempts + 1,
		Status: out.status, Error: out.err, Duration: out.took, At: now}
	if err := st.RecordWebhookAttempt(ctx, attempt); err != nil {
		return err
	}
	return r.settle(ctx, "webhook", j, out)
}

// outcome is what one attempt came to.
type outcome struct {
	status     int
	err        string
	took       time.Duration
	retryAfter time.Duration
	retry      bool // worth trying again
}

// send makes one request and classifies the answer: 2xx done; 408, 425, 429, 5xx and
// network errors retried (429 and 503 after their Retry-After); other 4xx final.
func (r *Runner) send(ctx context.Context, req *http.Request) outcome {
	start := time.Now()
	res, err := r.cfg.Client.Do(req)
	out := outcome{took: time.Since(start)}
	if err != nil {
		out.err, out.retry = PublicError(err), !errors.Is(err, ErrPrivateTarget)
		return out
	}
	return classify(res, out)
}

// classify reads an answer into an outcome (and closes its body): 2xx done; 429 and
// 503 retried after their Retry-After; 408, 425 and other 5xx retried; any other
// status final.
func classify(res *http.Response, out outcome) outcome {
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	out.status = res.StatusCode
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return out
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
		out.retryAfter = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
		out.retry = true
	case res.StatusCode >= 500, res.StatusCode == http.StatusRequestTimeout, res.StatusCode == http.StatusTooEarly:
		out.retry = true
	}
	out.err = res.Status
	return out
}

// parseRetryAfter reads seconds or an HTTP date; at most a day.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, tidings.DeliveryMaxAge)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), tidings.DeliveryMaxAge)
	}
	return 0
}

// settle writes an attempt's outcome to the outbox: done, retried later, or given up
// after 24 hours or a final answer.
func (r *Runner) settle(ctx context.Context, channel string, j *tidings.Delivery, out outcome) error {
	st := r.cfg.Store
	now := r.cfg.Now()
	switch {
	case out.err == "":
		r.cfg.Observe(channel, "ok")
		return st.FinishDelivery(ctx, j.ID)
	case !out.retry:
		r.cfg.Observe(channel, "failed")
		r.log.Info("delivery failed", "channel", channel, "target", j.Target, "event", j.EventID, "err", out.err)
		return st.FinishDelivery(ctx, j.ID)
	}
	next := now.Add(max(r.cfg.Backoff(j.Attempts), out.retryAfter))
	if next.Sub(j.CreatedAt) > tidings.DeliveryMaxAge {
		r.cfg.Observe(channel, "expired")
		r.log.Warn("delivery given up after 24 hours", "channel", channel, "target", j.Target, "event", j.EventID, "err", out.err)
		return st.FinishDelivery(ctx, j.ID)
	}
	r.cfg.Observe(channel, "retry")
	return st.RetryDelivery(ctx, j.ID, j.Attempts+1, next)
}
