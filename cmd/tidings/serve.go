package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
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

	store      tidings.Store
	lock       *dirlock.Lock // the data folder's, held while serving the embedded store
	api        *api.Server
	srv        *http.Server
	metricsSrv *http.Server
	ln         net.Listener
	metricsLn  net.Listener
	served     chan error
	stopRelay  context.CancelFunc // stops the relay from other instances
	stopSend   context.CancelFunc // stops the delivery runner
	sent       chan struct{}      // closed when it has stopped
	stopPurge  context.CancelFunc // stops the retention purge
	purged     chan struct{}      // closed when it has stopped
	stopFlush  chan struct{}
	flushed    chan struct{}
	closeOnce  sync.Once
	closeErr   error
}

// openStore picks the store backend from the configuration: PostgreSQL with
// --database, else the embedded store in the data folder. conns sizes a PostgreSQL
// pool (0: the default, for a server). A management command (conns > 0) leaves the
// indexing of stored events for search, after an upgrade, to the server.
func openStore(ctx context.Context, c Config, onCommit func(int, time.Duration, error), conns int32) (tidings.Store, error) {
	manage := conns > 0
	if c.DatabaseURL != "" {
		if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
			return nil, errors.New("--database must be a postgres://user:password@host:5432/dbname URL")
		}
		return postgres.Open(ctx, c.DatabaseURL, postgres.Options{OnCommit: onCommit, MaxConns: conns, Log: slog.Default(),
			SkipSearchBackfill: manage})
	}
	if manage {
		// Only serve makes a data folder: a command pointed at the wrong place says so.
		if _, err := os.Stat(c.Data); errors.Is(err, fs.ErrNotExist) {
			abs, _ := filepath.Abs(c.Data)
			return nil, fmt.Errorf("no data folder at %s: give the server's folder with --data DIR (or TIDINGS_DATA), or --database URL", abs)
		}
	}
	return sqlite.Open(ctx, c.Data, sqlite.Options{OnCommit: onCommit, Log: slog.Default(), SkipSearchBackfill: manage})
}

// Run opens the store, listens and serves in the background.
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
	met := metrics.New()
	if m.Config.AllowPrivateTargets {
		m.Logger.Warn("webhooks and push may reach loopback and private addresses (--allow-private-targets): " +
			"anyone who can create a webhook can make this server send requests inside its network; turn it off unless you need it")
	}
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
	store, err := openStore(ctx, m.Config, met.ObserveBatch, int32(m.Config.DatabaseConns))
	if err != nil {
		m.lock.Release()
		return err
	}
	m.store = store
	if q, ok := store.(interface{ QueueLen() int }); ok {
		met.WatchQueue(q.QueueLen)
	}
	vapid, err := deliver.LoadVAPID(ctx, store, m.Config.VAPIDKeyFile, m.Config.VAPIDSubject)
	if err != nil {
		m.Close()
		return err
	}
	broker := inmem.NewBroker(0)
	relayCtx, stopRelay := context.WithCancel(context.Background())
	m.stopRelay = stopRelay
	if db, ok := store.(*postgres.DB); ok {
		// Other instances' events and insights reach this one's dashboards and runner.
		go db.Relay(relayCtx, broker, m.Logger)
	}
	m.api = api.New(api.Config{Store: store, Broker: broker, Logger: m.Logger, Now: m.Now,
		Limits: m.Config.Limits, TrustedProxies: m.Config.TrustedProxies})
	if db, ok := store.(*postgres.DB); ok {
		go m.shareLimits(relayCtx, db)
	}
	dash, err := web.New(web.Config{Store: store, Broker: broker, Logger: m.Logger, Now: m.Now,
		OpenSignup: m.Config.OpenSignup, TrustedProxies: m.Config.TrustedProxies, HTTPS: m.httpsOnly(), Passwords: m.Config.Passwords,
		MaxStreamsPerSession: m.Config.MaxStreamsPerSession, MaxStreamsPerAccount: m.Config.MaxStreamsPerAccount,
		SignupsPerHour: m.Config.SignupsPerHour, AllowPrivateTargets: m.Config.AllowPrivateTargets, VAPIDPublicKey: vapid.Public,
		FlushTokenUse: m.api.FlushUsage})
	if err != nil {
		m.Close()
		return err
	}

	mux := http.NewServeMux()
	m.api.Register(mux)
	dash.Register(mux)
	mux.Handle("/", dash.NotFound())
	var handler http.Handler = mux
	if m.httpsOnly() {
		handler = hsts(handler)
	}
	m.srv = &http.Server{
		Handler:           api.Middleware(handler, m.Logger, met),
		ReadHeaderTimeout: m.Timeouts.ReadHeader,
		ReadTimeout:       m.Timeouts.Read, // whole request, body included: slow senders are cut off
		IdleTimeout:       m.Timeouts.Idle,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	m.srv.RegisterOnShutdown(dash.CloseStreams)
	if m.ln, err = net.Listen("tcp", m.Config.Addr); err != nil {
		m.Close()
		return err
	}
	m.served = make(chan error, 1)
	go func() {
		if m.Config.TLSCert != "" {
			m.served <- m.srv.ServeTLS(m.ln, m.Config.TLSCert, m.Config.TLSKey)
		} else {
			m.served <- m.srv.Serve(m.ln)
		}
	}()
	if m.Config.MetricsAddr != "" {
		mm := http.NewServeMux()
		mm.Handle("GET /metrics", met.Handler())
		// Profiles, on the operator's listener only: never on the public address.
		mm.HandleFunc("GET /debug/pprof/", pprof.Index)
		mm.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mm.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		mm.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		m.metricsSrv = &http.Server{Addr: m.Config.MetricsAddr, Handler: mm, ReadHeaderTimeout: 5 * time.Second}
		if m.metricsLn, err = net.Listen("tcp", m.Config.MetricsAddr); err != nil {
			m.Close()
			return fmt.Errorf("metrics listener: %w", err)
		}
		go m.metricsSrv.Serve(m.metricsLn)
	}
	m.stopFlush, m.flushed = make(chan struct{}), make(chan struct{})
	go m.flushUsage()
	m.startDelivery(store, met, vapid)
	m.startPurge(store)
	return nil
}

// Retention's purge: every purgeEvery, PurgeExpired in batches of purgeBatch, a pause
// between batches, so that a project that gives up years of events at once loses them
// over a while, without holding the writer long enough to slow publishing.
const (
	purgeEvery = time.Minute
	purgeBatch = 500
	purgePause = 20 * time.Millisecond
)

func (m *Main) startPurge(store tidings.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	m.stopPurge, m.purged = cancel, make(chan struct{})
	go func() {
		defer close(m.purged)
		t := time.NewTicker(purgeEvery)
		defer t.Stop()
		for {
			total := 0
			for ctx.Err() == nil {
				n, err := store.PurgeExpired(ctx, m.Now(), purgeBatch)
				total += n
				if err != nil {
					if ctx.Err() == nil {
						m.Logger.Warn("retention: purging expired events", "err", err)
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
				m.Logger.Info("retention: deleted expired events", "events", total)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// startDelivery runs the outbox's sender beside the server, with its own context.
func (m *Main) startDelivery(store tidings.Store, met *metrics.Metrics, vapid *deliver.VAPID) {
	ctx, cancel := context.WithCancel(context.Background())
	m.stopSend, m.sent = cancel, make(chan struct{})
	var signal <-chan struct{}
	if s, ok := store.(interface{ OutboxSignal() <-chan struct{} }); ok {
		signal = s.OutboxSignal()
	}
	if s, ok := store.(interface{ ReleaseLeases(context.Context) error }); ok {
		// The embedded store has one server (the folder lock): leases are a dead one's.
		// (PostgreSQL's instances share the outbox: there a lease simply runs out.)
		if err := s.ReleaseLeases(ctx); err != nil {
			m.Logger.Warn("releasing delivery leases", "err", err)
		}
	}
	met.WatchOutbox(func() (int, time.Time) {
		n, oldest, _ := store.PendingDeliveries(context.Background())
		return n, oldest
	})
	r := deliver.New(deliver.Config{Store: store, Logger: m.Logger, Now: m.Now, PublicURL: m.Config.PublicURL, VAPID: vapid,
		Client: deliver.NewClient(m.Config.AllowPrivateTargets), Signal: signal, Observe: met.ObserveDelivery})
	go func() {
		defer close(m.sent)
		r.Run(ctx)
	}()
}

// shareLimits keeps the API's rate limits divided by the number of live instances.
func (m *Main) shareLimits(ctx context.Context, db *postgres.DB) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		if n, err := db.Heartbeat(ctx); err == nil {
			m.api.ShareLimits(n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// flushUsage writes tokens' last-used times every few seconds.
func (m *Main) flushUsage() {
	defer close(m.flushed)
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := m.api.FlushUsage(context.Background()); err != nil {
				m.Logger.Warn("recording token use", "err", err)
			}
		case <-m.stopFlush:
			return
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
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	var errs []error
	if m.srv != nil {
		errs = append(errs, m.srv.Shutdown(ctx))
	}
	if m.metricsSrv != nil {
		errs = append(errs, m.metricsSrv.Shutdown(ctx))
	}
	if m.stopRelay != nil {
		m.stopRelay()
	}
	if m.stopSend != nil {
		m.stopSend() // what is being sent is cut short; its lease makes it due again
		<-m.sent
	}
	if m.stopPurge != nil {
		m.stopPurge()
		<-m.purged
	}
	if m.stopFlush != nil {
		close(m.stopFlush)
		<-m.flushed
		errs = append(errs, m.api.FlushUsage(ctx))
	}
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
