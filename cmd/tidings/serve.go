package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzhttp"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
	scripts "github.com/tidings-dev/tidings/browser" // as browser_test.go has a type browser
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/inmem"
	"github.com/tidings-dev/tidings/internal/dirlock"
	"github.com/tidings-dev/tidings/internal/metrics"
	"github.com/tidings-dev/tidings/postgres"
	"github.com/tidings-dev/tidings/sqlite"
	"github.com/tidings-dev/tidings/web"
)

// ShutdownTimeout bounds a graceful stop.
const ShutdownTimeout = 10 * time.Second

// Timeouts against slow or idle clients. Event streams lift them for themselves.
type Timeouts struct {
	ReadHeader time.Duration // the request line and headers
	Read       time.Duration // the whole request, body included
	Idle       time.Duration // a kept-alive connection between requests
}

// DefaultTimeouts are those of `tidings serve`.
var DefaultTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second, Idle: 120 * time.Second}

// Main is a running server: Run starts it, Close stops it. Tests start it on port 0.
type Main struct {
	Config   Config
	Logger   *slog.Logger
	Now      func() time.Time
	Timeouts Timeouts // zero: DefaultTimeouts

	store     tidings.Store
	lock      *dirlock.Lock // the data folder's, held while serving the embedded store
	api       *api.Server
	ln        net.Listener
	metricsLn net.Listener // with --metrics-addr
	maxConns  int          // the public listener's connection cap
	served    chan error   // what the HTTP server's Serve returned, if not closed by us
	// stopAccessLog writes the access log's last counts of refused requests.
	stopAccessLog func()
	services      group
	stopOnCtx     func() bool    // stops Close from running when Run's context ends
	mailer        tidings.Mailer // nil without --smtp-url (cmd_mail.go)
	closeOnce     sync.Once
	closeErr      error
}

// Time budgets of the parts of the server when it stops: each has its own, so that a
// slow HTTP drain cannot leave the usage flush with no time to write.
const (
	httpBudget     = ShutdownTimeout
	deliveryBudget = deliver.DefaultGrace + time.Second
	flushBudget    = 5 * time.Second
	partBudget     = 5 * time.Second // the others: they stop as soon as they are told
)

// openStore picks the store backend from the configuration: PostgreSQL with
// --database, else the embedded store in the data folder. conns sizes a PostgreSQL
// pool. A management command (server false) leaves the indexing of stored events for
// search, after an upgrade, to the server. (It was told by conns > 0, until the
// server's pool got a default size of 16: then no server ran the backfill, and the
// events of an upgraded store were never found by a search.)
func openStore(ctx context.Context, c Config, met *metrics.Metrics, conns int32, server bool) (tidings.Store, error) {
	return openStoreLogged(ctx, c, met, conns, server, slog.Default())
}

// openStoreLogged is openStore reporting a long migration or backfill to log (the
// server's own logger, in its format).
func openStoreLogged(ctx context.Context, c Config, met *metrics.Metrics, conns int32, server bool, log *slog.Logger) (tidings.Store, error) {
	manage := !server
	var onCommit func(int, time.Duration, error)
	var onIndexed func(int, time.Duration)
	if met != nil {
		onCommit, onIndexed = met.ObserveBatch, met.ObserveIndexed
	}
	if c.DatabaseURL != "" || manage {
		if err := storeExists(c); err != nil {
			return nil, err
		}
	}
	if c.DatabaseURL != "" {
		return postgres.Open(ctx, c.DatabaseURL, postgres.Options{OnCommit: onCommit, MaxConns: conns, Log: log,
			SkipSearchBackfill: manage})
	}
	return sqlite.Open(ctx, c.Data, sqlite.Options{OnCommit: onCommit, OnIndexed: onIndexed, Log: log, SkipSearchBackfill: manage})
}

// Run opens the store, listens and serves in the background until Close, or until
// ctx ends.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Config.validate(); err != nil {
		return err
	}
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	if m.Now == nil {
		m.Now = time.Now
	}
	if m.Timeouts == (Timeouts{}) {
		m.Timeouts = DefaultTimeouts
	}
	if m.Config.AllowPrivateTargets {
		m.Logger.Warn("webhooks and push may reach loopback and private addresses (--allow-private-targets): " +
			"anyone who can create a webhook can make this server send requests inside its network; turn it off unless you need it")
	}
	mailer, err := m.startMail(ctx)
	if err != nil {
		return err
	}
	m.mailer = mailer
	m.services = newGroup(ctx, m.Logger)
	m.stopOnCtx = context.AfterFunc(ctx, func() { m.Close() })
	if err := m.start(ctx); err != nil {
		m.Close()
		return err
	}
	return nil
}

// start opens the store and starts the parts of the server, the HTTP server last.
func (m *Main) start(ctx context.Context) error {
	met := metrics.New()
	if m.Config.DatabaseURL == "" {
		// One server per data folder: a second one would take events whose live
		// updates never reach the first one's dashboards. Management commands do not
		// lock: they work beside a running server.
		lock, err := dirlock.Acquire(m.Config.Data)
		if err != nil {
			return err
		}
		m.lock = lock
	}
	store, err := openStoreLogged(ctx, m.Config, met, int32(m.Config.DatabaseConns), true, m.Logger)
	if err != nil {
		return err
	}
	m.store = store
	if q, ok := store.(tidings.QueueWatcher); ok {
		met.WatchQueue(q.QueueLen)
	}
	if s, ok := store.(tidings.SearchLagger); ok {
		met.WatchSearch(s.SearchLag)
	}
	vapid, err := deliver.LoadVAPID(ctx, store, m.Config.VAPIDKeyFile, m.Config.VAPIDSubject)
	if err != nil {
		return err
	}
	broker := inmem.NewBroker(0)
	var dash *web.Server // made next: it takes the API's FlushUsage, the API its sessions
	m.api = api.New(api.Config{Store: store, Broker: broker, Logger: m.Logger, Now: m.Now,
		Limits: m.Config.Limits, TrustedProxies: m.Config.TrustedProxies,
		Session: func(r *http.Request) (int64, string, bool) { return dash.SessionActor(r) }})
	dash, err = web.New(web.Config{Store: store, Broker: broker, Logger: m.Logger, Now: m.Now,
		OpenSignup: m.Config.OpenSignup, TrustedProxies: m.Config.TrustedProxies, HTTPS: m.httpsOnly(), Passwords: m.Config.Passwords,
		MaxStreamsPerSession: m.Config.MaxStreamsPerSession, MaxStreamsPerAccount: m.Config.MaxStreamsPerAccount,
		SignupsPerHour: m.Config.SignupsPerHour, AllowPrivateTargets: m.Config.AllowPrivateTargets, VAPIDPublicKey: vapid.Public,
		FlushTokenUse: m.api.FlushUsage, Mailer: m.mailer, PublicURL: m.Config.PublicURL})
	if err != nil {
		return err
	}

	if c, ok := store.(tidings.Cluster); ok {
		// Other instances' events and insights reach this one's dashboards and runner,
		// and the API's rate limits are shared among the live instances.
		m.services.start(service{name: "relay", budget: partBudget, run: func(ctx context.Context) error {
			c.Relay(ctx, broker, m.Logger)
			return nil
		}})
		m.services.start(service{name: "heartbeat", budget: partBudget, run: every(5*time.Second, func(ctx context.Context) {
			if n, err := c.Heartbeat(ctx); err == nil {
				m.api.ShareLimits(n)
			}
		})})
	}
	m.services.start(service{name: "usage flush", budget: flushBudget, run: m.flushUsage})
	m.services.start(m.delivery(store, met, vapid))
	m.services.start(service{name: "purge", budget: partBudget, run: every(purgeEvery, m.purge)})
	m.services.start(service{name: "live views", budget: partBudget, run: dash.Run})
	if m.Config.MetricsAddr != "" {
		if err := m.serveMetrics(met); err != nil {
			return err
		}
	}
	return m.serveHTTP(m.handler(dash, met), dash, met)
}

// handler is the public address's: the API and the dashboard.
func (m *Main) handler(dash *web.Server, met *metrics.Metrics) http.Handler {
	mux := http.NewServeMux()
	m.api.Register(mux)
	dash.Register(mux)
	// The scripts other websites load: without the dashboard's headers (its
	// Content-Security-Policy and frame rules are for its own pages).
	scripts.Register(mux)
	mux.Handle("/", dash.NotFound())
	var h http.Handler = mux
	if m.httpsOnly() {
		h = hsts(h)
	}
	logged, stop := api.MiddlewareBehind(compress(h), m.Logger, met, m.Config.TrustedProxies)
	m.stopAccessLog = stop
	return logged
}

// compress answers with gzip or zstd when the client takes it: pages, CSS, JS, SVG and
// JSON. The live streams are never compressed: a compressor holds bytes back, and each
// event must leave at once. Nor are the answers to single writes (an event, an insight,
// a user, a group): one object, which SDKs read and drop, and the wrapper cost 3% of the
// CPU of a publish (docs/performance.md).
func compress(h http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(gzhttp.ExceptContentTypes([]string{"text/event-stream"}), gzhttp.MinSize(512))
	if err != nil {
		panic(err) // only for invalid options
	}
	zipped := wrap(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && singleWrite[strings.TrimPrefix(r.URL.Path, "/api")] {
			h.ServeHTTP(w, r)
			return
		}
		zipped.ServeHTTP(w, r)
	})
}

// singleWrite are the API's paths whose writes answer with one object.
var singleWrite = map[string]bool{"/v1/log": true, "/v1/insight": true, "/v1/identify": true, "/v1/group": true}

// serveHTTP listens on the public address and serves h; stopping it lets the requests
// under way finish (each waits for its batch to commit) and ends the live streams. Its
// connections are capped below the file limit (connections.go).
func (m *Main) serveHTTP(h http.Handler, dash *web.Server, met *metrics.Metrics) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: m.Timeouts.ReadHeader,
		ReadTimeout:       m.Timeouts.Read, // whole request, body included: slow senders are cut off
		IdleTimeout:       m.Timeouts.Idle,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(dash.CloseStreams)
	srv.RegisterOnShutdown(m.api.CloseStreams)
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return err
	}
	m.ln, m.served = ln, make(chan error, 1)
	m.maxConns = m.maxConnections()
	ln = m.limitConns(srv, ln, met, "public", m.maxConns)
	// The access log's counts of refused requests are written once the last request
	// is answered, and nothing is logged by the middleware after.
	shutdown := func(ctx context.Context) error {
		err := srv.Shutdown(ctx)
		if m.stopAccessLog != nil {
			m.stopAccessLog()
		}
		return err
	}
	m.services.start(service{name: "http", budget: httpBudget, stop: shutdown, run: func(context.Context) error {
		var err error
		if m.Config.TLSCert != "" {
			err = srv.ServeTLS(ln, m.Config.TLSCert, m.Config.TLSKey)
		} else {
			err = srv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			m.served <- err
		}
		return err
	}})
	return nil
}

// serveMetrics serves metrics and profiles on the operator's listener, never on the
// public address.
func (m *Main) serveMetrics(met *metrics.Metrics) error {
	mm := http.NewServeMux()
	mm.Handle("GET /metrics", met.Handler())
	mm.HandleFunc("GET /debug/pprof/", pprof.Index)
	mm.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mm.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mm.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	srv := &http.Server{Handler: mm, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: m.Timeouts.Idle}
	ln, err := net.Listen("tcp", m.Config.MetricsAddr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	m.metricsLn = ln
	ln = m.limitConns(srv, ln, met, "metrics", metricsConns)
	m.services.start(service{name: "metrics", budget: partBudget, stop: srv.Shutdown,
		run: func(context.Context) error { return srv.Serve(ln) }})
	return nil
}

// The background purges: every purgeEvery, the events that retention keeps no longer
// and the idempotency keys older than tidings.IdempotencyKeep (hooks' delivery ids:
// tidings.HookKeyKeep), each in batches of
// purgeBatch with a pause between batches, so that a project that gives up years of
// events at once loses them over a while, without holding the writer long enough to
// slow publishing.
const (
	purgeEvery = time.Minute
	purgeBatch = 500
	purgePause = 20 * time.Millisecond
)

func (m *Main) purge(ctx context.Context) {
	m.inBatches(ctx, "retention: deleted expired events", "events", func(ctx context.Context) (int, error) {
		return m.store.PurgeExpired(ctx, m.Now(), purgeBatch)
	})
	m.inBatches(ctx, "idempotency: deleted expired keys", "keys", func(ctx context.Context) (int, error) {
		now := m.Now()
		return m.store.ExpireAnswers(ctx, now.Add(-tidings.IdempotencyKeep), now.Add(-tidings.HookKeyKeep), purgeBatch)
	})
}

// inBatches calls del until it deletes fewer than purgeBatch rows, pausing between
// calls, and logs what it deleted.
func (m *Main) inBatches(ctx context.Context, done, what string, del func(context.Context) (int, error)) {
	total := 0
	for ctx.Err() == nil {
		n, err := del(ctx)
		total += n
		if err != nil {
			if ctx.Err() == nil {
				m.Logger.Warn("purging expired "+what, "err", err)
			}
			break
		}
		if n < purgeBatch {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(purgePause):
		}
	}
	if total > 0 {
		m.Logger.Info(done, what, total)
	}
}

// delivery is the outbox's sender; stopping, it lets the jobs under way finish
// within its grace period.
func (m *Main) delivery(store tidings.Store, met *metrics.Metrics, vapid *deliver.VAPID) service {
	var signal <-chan struct{}
	if s, ok := store.(tidings.OutboxSignaller); ok {
		signal = s.OutboxSignal()
	}
	met.WatchOutbox(func() (int, time.Time) {
		n, oldest, _ := store.PendingDeliveries(context.Background())
		return n, oldest
	})
	r := deliver.New(deliver.Config{Store: store, Logger: m.Logger, Now: m.Now, PublicURL: m.Config.PublicURL, VAPID: vapid,
		Client: deliver.NewClient(m.Config.AllowPrivateTargets), Signal: signal, Observe: met.ObserveDelivery,
		Grace: deliver.DefaultGrace, TestRepeatEvery: testHook(deliver.EnvTestRepeatEvery), TestLease: testHook(deliver.EnvTestLease), Mailer: m.mailer})
	return service{name: "delivery", budget: deliveryBudget, run: func(ctx context.Context) error {
		if s, ok := store.(tidings.LeaseReleaser); ok {
			// The embedded store has one server (the folder lock): leases are a dead one's.
			// (PostgreSQL's instances share the outbox: there a lease simply runs out.)
			if err := s.ReleaseLeases(ctx); err != nil {
				m.Logger.Warn("releasing delivery leases", "err", err)
			}
		}
		return r.Run(ctx)
	}}
}

// flushUsage writes tokens' last-used times every few seconds, and a last time when
// it stops, with a time of its own.
func (m *Main) flushUsage(ctx context.Context) error {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := m.api.FlushUsage(ctx); err != nil && ctx.Err() == nil {
				m.Logger.Warn("recording token use", "err", err)
			}
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushBudget-time.Second)
			defer cancel()
			return m.api.FlushUsage(last)
		}
	}
}

// URL is the base address the server listens on.
func (m *Main) URL() string {
	scheme := "http"
	if m.Config.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + m.ln.Addr().String()
}

// Close stops accepting, lets in-flight requests finish (each waits for its batch to
// commit), records token use, and closes the store. Calling it again returns the
// first result.
func (m *Main) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Main) close() error {
	if m.stopOnCtx != nil {
		m.stopOnCtx()
	}
	errs := []error{m.services.stop()}
	if m.store != nil {
		errs = append(errs, m.store.Close())
	}
	errs = append(errs, m.lock.Release())
	return errors.Join(errs...)
}

// httpsOnly tells whether browsers reach the server over HTTPS only: it serves TLS
// itself, or its public URL is https:// (a proxy ends TLS). Then cookies are Secure
// and every answer carries HSTS.
func (m *Main) httpsOnly() bool {
	return m.Config.TLSCert != "" || strings.HasPrefix(m.Config.PublicURL, "https://")
}

func hsts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		next.ServeHTTP(w, r)
	})
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// testHook reads a duration of a test hook only: how often urgent events are pushed
// again instead of their project's setting (escalation_kill_test.go), the lease of
// the outbox's jobs (mail_kill_test.go).
func testHook(env string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(env))
	return d
}
