// Package web is the dashboard: sign-up and sign-in, settings (projects, channels, API
// tokens, members), the live feed, insights and charts. Pages are rendered on the
// server from embedded templates; a little vanilla JS makes the feed and the insight
// board move by themselves (server-sent events). No inline script: the CSP forbids it.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/internal/ratelimit"
)

// Config wires a Server.
type Config struct {
	Store          tidings.Store
	Broker         tidings.Broker
	Logger         *slog.Logger
	Now            func() time.Time
	OpenSignup     bool           // anyone may create an account (multi-tenant hosting)
	TrustedProxies []netip.Prefix // whose X-Forwarded-Proto/-For to believe
	// HTTPS says browsers always reach the dashboard over HTTPS (an https:// public
	// URL, behind a proxy that ends TLS): cookies are Secure whatever the request says.
	HTTPS bool
	// APIBase is how the curl examples name this server ("" = from the request).
	APIBase string
	// VAPIDPublicKey is the push key pair's public half ("" = push is off).
	VAPIDPublicKey string
	// AllowPrivateTargets lets webhooks name loopback and private addresses.
	AllowPrivateTargets bool
	// SignupsPerHour limits sign-ups per client address (0: DefaultSignupsPerHour).
	SignupsPerHour float64
	// Live streams allowed open per session and per account (0: the defaults).
	MaxStreamsPerSession, MaxStreamsPerAccount int
	// Passwords are argon2id's costs (zero: password.Default; tests pass cheap ones).
	Passwords password.Params
	// Questions bounds the charts and funnels the dashboard asks at once (nil: two per
	// account and two in all): a page's cards are drawn within one turn.
	Questions *charts.Gate
	// FlushTokenUse records the API's pending last-used times (nil: nothing pending),
	// before a revoke: the revoked token's row then shows its last use.
	FlushTokenUse func(context.Context) error
	// Mailer sends invitations and password reset links (nil: no SMTP; owners copy
	// the links by hand). Mailed links start with PublicURL, never the request's Host.
	Mailer    tidings.Mailer
	PublicURL string
}

// DefaultSignupsPerHour is how many sign-ups one client address may make per hour.
const DefaultSignupsPerHour = 5

// renderCacheBytes bounds the rendered descriptions kept in memory: a few thousand
// events' worth, more than the pages and streams people have open.
const renderCacheBytes = 16 << 20

// Server serves the dashboard.
type Server struct {
	store      tidings.Store
	broker     tidings.Broker
	log        *slog.Logger
	now        func() time.Time
	openSignup bool
	trusted    []netip.Prefix
	httpsOnly  bool
	apiBase    string
	pages      *pages
	assets     *assets
	cop        *http.CrossOriginProtection
	logins     *loginLimiter
	// dummyHash is verified against when the email is unknown, so that both answers
	// take as long and the timing does not tell which emails have accounts. Made on
	// first use, not at start-up: every CLI command links this package.
	dummyHash  func() string
	signups    *ratelimit.Keyed[netip.Prefix]
	signupRate rate.Limit
	passwords  *password.Gate
	// allowPrivate lets webhooks and push endpoints name private addresses.
	allowPrivate bool
	vapidPublic  string
	flushUse     func(context.Context) error
	renders      *renderCache
	questions    *charts.Gate
	hub          *hub
	// cardRenders counts event cards rendered for streams: each event once per feed.
	cardRenders atomic.Int64
	closing     chan struct{} // closed when the server shuts down: streams end
	// pressKeyBytes is the key of press tokens (pressKey), read once.
	mailer        tidings.Mailer
	publicURL     string
	mails         chan string // emails that asked for a reset link, mailed in the background (forgot.go)
	forgotLimit   *forgotLimiter
	pressMu       sync.Mutex
	pressKeyBytes []byte
	mailKeyBytes  []byte // the key of unsubscribe links (mailKey), read once
	closeOnce     sync.Once
}

// CloseStreams ends every open event stream, so that a graceful shutdown need not
// wait for browsers to hang up. Register it with http.Server.RegisterOnShutdown.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Run keeps the live views' fan-out and sends the account mail queued by the sign-in
// page (forgot.go) until ctx ends; then it ends every stream and returns once the
// fan-out of every account and the mail sender have stopped.
func (s *Server) Run(ctx context.Context) error {
	mailing := make(chan struct{})
	go func() { defer close(mailing); s.sendMails(ctx) }()
	<-ctx.Done()
	<-mailing
	s.CloseStreams()
	s.hub.running.Wait()
	return nil
}

// New returns a Server; it fails only if the embedded templates are broken.
func New(cfg Config) (*Server, error) {
	s := &Server{store: cfg.Store, broker: cfg.Broker, log: cfg.Logger, now: cfg.Now, openSignup: cfg.OpenSignup,
		trusted: cfg.TrustedProxies, httpsOnly: cfg.HTTPS, apiBase: cfg.APIBase, logins: newLoginLimiter(),
		renders: newRenderCache(renderCacheBytes), closing: make(chan struct{})}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.hub = newHub(s, cfg.MaxStreamsPerSession, cfg.MaxStreamsPerAccount)
	s.allowPrivate, s.vapidPublic, s.flushUse = cfg.AllowPrivateTargets, cfg.VAPIDPublicKey, cfg.FlushTokenUse
	s.questions = cfg.Questions
	s.mailer, s.publicURL = cfg.Mailer, strings.TrimRight(cfg.PublicURL, "/")
	s.mails, s.forgotLimit = make(chan string, mailQueue), newForgotLimiter()
	if s.questions == nil {
		s.questions = charts.NewGate(2, 2)
	}
	perHour := cfg.SignupsPerHour
	if perHour <= 0 {
		perHour = DefaultSignupsPerHour
	}
	s.signupRate = rate.Limit(perHour / 3600)
	s.signups = ratelimit.NewKeyed[netip.Prefix](maxAddrBuckets)
	// Password hashing takes a core and 64 MiB for tens of milliseconds: at most one
	// per core at a time; the rest wait up to two seconds, then get "busy".
	s.passwords = password.NewGate(runtime.GOMAXPROCS(0), 2*time.Second, cfg.Passwords)
	s.dummyHash = sync.OnceValue(func() string {
		h, _ := s.passwords.Params().Hash("not a real password")
		return h
	})
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if s.pages, err = loadPages(s.assets, s.now); err != nil {
		return nil, err
	}
	s.cop = http.NewCrossOriginProtection()
	s.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, http.StatusForbidden, "This form was sent from another site, so it was refused. Reload the page and try again.")
	}))
	// A mail client's one-click unsubscribe (RFC 8058) comes from elsewhere, without a
	// session: the link's signed token is its credential (unsubscribe.go).
	s.cop.AddInsecureBypassPattern("POST /unsubscribe")
	return s, nil
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// Register adds the dashboard's routes to mux. Every route is wrapped in the security
// headers and cross-origin (CSRF) protection; "user" routes need a session, "owner"
// routes an owner's.
func (s *Server) Register(mux *http.ServeMux) {
	const public, user, owner = 0, 1, 2
	routes := []struct {
		pattern string
		access  int
		h       handlerFunc
	}{
		{"GET /{$}", public, s.home},
		{"POST /getting-started/hide", user, s.hideChecklist},
		{"GET /signup", public, s.signupPage},
		{"POST /signup", public, s.signup},
		{"GET /login", public, s.loginPage},
		{"POST /login", public, s.login},
		{"POST /logout", user, s.logout},
		{"GET /invite/{secret}", public, s.invitePage},
		{"POST /invite/{secret}", public, s.acceptInvite},

		{"GET /p/{project}", user, s.feed},
		{"GET /p/{project}/c/{channel}", user, s.feed},
		{"GET /p/{project}/export", user, s.export},
		{"GET /p/{project}/c/{channel}/export", user, s.export},
		{"GET /p/{project}/events/{id}", user, s.eventPage},
		{"POST /p/{project}/events/{id}/delete", owner, s.deleteEvent},
		{"POST /p/{project}/events/{id}/ack", user, s.ackEvent},
		{"POST /p/{project}/events/{id}/actions/{action_id}", user, s.pressAction},
		{"GET /p/{project}/stream", user, s.stream},
		{"GET /p/{project}/insights", user, s.insightsPage},
		{"GET /p/{project}/channels", user, s.channelsPage},
		{"POST /p/{project}/insights/delete", owner, s.deleteInsight},
		{"GET /p/{project}/charts", user, s.boardPage},
		{"GET /p/{project}/charts/new", user, s.newChartPage},
		{"POST /p/{project}/charts/new", user, s.saveChart},
		{"GET /p/{project}/charts/preview.csv", user, s.chartCSV},
		{"GET /p/{project}/charts/{id}", user, s.chartCSV}, // {id}.csv
		{"GET /p/{project}/charts/{id}/edit", user, s.editChartPage},
		{"POST /p/{project}/charts/{id}/edit", user, s.saveChart},
		{"POST /p/{project}/charts/{id}/move", user, s.moveCard},
		{"POST /p/{project}/charts/{id}/wide", user, s.resizeCard},
		{"POST /p/{project}/charts/{id}/delete", user, s.deleteCard},
		{"GET /p/{project}/funnels/new", user, s.newFunnelPage},
		{"POST /p/{project}/funnels/new", user, s.saveFunnel},
		{"GET /p/{project}/funnels/dropoff", user, s.dropoffPage},
		{"GET /p/{project}/funnels/{id}/edit", user, s.editFunnelPage},
		{"POST /p/{project}/funnels/{id}/edit", user, s.saveFunnel},
		{"GET /p/{project}/funnels/{id}/dropoff", user, s.dropoffPage},
		{"GET /p/{project}/insights/history", user, s.insightHistoryPage},
		{"GET /p/{project}/users", user, s.usersPage},
		{"GET /p/{project}/users/{user_id}", user, s.userPage},
		{"GET /p/{project}/groups", user, s.groupsPage},
		{"GET /p/{project}/journey", user, s.tagJourneyPage},
		{"GET /p/{project}/groups/{group_id}", user, s.groupPage},
		{"GET /p/{project}/pages", user, s.pagesPage},

		{"GET /settings/password", user, s.passwordPage},
		{"POST /settings/password", user, s.changePassword},
		{"GET /settings/projects", user, s.projectsPage},
		{"POST /settings/projects", owner, s.createProject},
		{"GET /settings/projects/{project}", user, s.projectSettingsPage},
		{"POST /settings/projects/{project}/channels", owner, s.createChannel},
		{"GET /settings/projects/{project}/delete-channel", owner, s.pickChannelToDelete},
		{"POST /settings/projects/{project}/auto-create", owner, s.setAutoCreate},
		{"POST /settings/projects/{project}/retention", owner, s.setRetention},
		{"POST /settings/projects/{project}/insight-change-default", owner, s.setInsightChangeDefault},
		{"POST /settings/projects/{project}/gpc", owner, s.setGPC},
		{"POST /settings/projects/{project}/escalation", owner, s.setEscalation},
		{"GET /settings/projects/{project}/notify", user, s.recipientsPage},
		{"POST /settings/projects/{project}/notify", owner, s.setRecipients},
		{"POST /settings/projects/{project}/escalate-after", owner, s.setEscalateAfter},
		{"GET /settings/projects/{project}/delete", owner, s.deleteProjectPage},
		{"POST /settings/projects/{project}/delete", owner, s.deleteProject},
		{"GET /settings/projects/{project}/channels/{channel}/delete", owner, s.deleteChannelPage},
		{"POST /settings/projects/{project}/channels/{channel}/delete", owner, s.deleteChannel},
		{"GET /settings/api", owner, s.tokensPage},
		{"POST /settings/api", owner, s.createToken},
		{"GET /settings/api/{id}", owner, s.tokenPage},
		{"POST /settings/api/{id}/revoke", owner, s.revokeToken},
		{"GET /push/vapid-key", public, s.vapidKey},
		{"POST /push/subscriptions", user, s.subscribe},
		{"GET /push/subscriptions", user, s.listSubscriptions},
		{"DELETE /push/subscriptions/{id}", user, s.unsubscribe},
		{"POST /push/subscriptions/{id}/test", user, s.testSubscription},
		{"POST /push/press", public, s.pushPress},
		{"GET /settings/devices", user, s.devicesPage},
		{"GET /settings/devices/{id}", user, s.devicePage},
		{"POST /settings/devices/{id}/rename", user, s.renameDevice},
		{"POST /settings/devices/{id}/remove", user, s.removeDevice},
		{"POST /settings/devices/{id}/test", user, s.testDevice},
		{"GET /settings/notifications", user, s.notificationsPage},
		{"POST /settings/notifications", user, s.saveNotifications},
		{"POST /settings/notifications/routes", user, s.saveRoutes},
		{"GET /settings/webhooks", owner, s.webhooksPage},
		{"POST /settings/webhooks", owner, s.createWebhook},
		{"GET /settings/webhooks/{id}", owner, s.webhookPage},
		{"POST /settings/webhooks/{id}/delete", owner, s.deleteWebhook},
		{"POST /settings/webhooks/{id}/test", owner, s.testWebhook},
		{"GET /settings/hooks", user, s.hooksPage},
		{"POST /settings/hooks", owner, s.createHook},
		{"POST /settings/hooks/{id}/delete", owner, s.deleteHook},
		{"GET /settings/members", user, s.membersPage},
		{"POST /settings/members/invite", owner, s.invite},
		{"GET /settings/members/{id}", user, s.memberPage},
		{"POST /settings/members/{id}/remove", owner, s.removeMember},
		{"POST /settings/members/{id}/reset", owner, s.createResetLink},
		{"GET /reset/{secret}", public, s.resetPage},
		{"POST /reset/{secret}", public, s.useReset},
		{"GET /forgot", public, s.forgotPage},
		{"POST /forgot", public, s.forgot},
		{"GET /unsubscribe", public, s.unsubscribePage},
		{"POST /unsubscribe", public, s.unsubscribeMail},
		{"POST /settings/members/invites/{id}/revoke", owner, s.revokeInvite},

		{"GET /manifest.webmanifest", public, s.manifest},
		{"GET /sw.js", public, s.serviceWorker},
		{"GET /static/{file}", public, s.static},
	}
	for _, rt := range routes {
		h := rt.h
		switch rt.access {
		case user:
			h = s.requireUser(h, false)
		case owner:
			h = s.requireUser(h, true)
		}
		mux.Handle(rt.pattern, s.secure(s.cop.Handler(s.limitBody(s.wrap(h)))))
	}
}

// NotFound answers unknown pages.
func (s *Server) NotFound() http.Handler {
	return s.secure(s.wrap(func(w http.ResponseWriter, r *http.Request) error {
		return errNotFound
	}))
}

// maxFormBytes bounds a form's body: the largest form (a token with its limits) is a
// few hundred bytes.
const maxFormBytes = 64 << 10

// limitBody refuses a body over maxFormBytes: from its Content-Length at once, without
// waiting for it (and closing the connection, so the rest need not be read), or when
// reading crosses the limit.
func (s *Server) limitBody(next http.Handler) http.Handler {
	tooLarge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		s.renderError(w, r, http.StatusRequestEntityTooLarge, "This form was larger than 64 KiB, so it was refused.")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxFormBytes {
			tooLarge(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if r.Method == http.MethodPost {
			var mbe *http.MaxBytesError
			if err := r.ParseForm(); errors.As(err, &mbe) {
				tooLarge(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// csp allows nothing inline and nothing from elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"manifest-src 'self'; worker-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the headers every page carries.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		next.ServeHTTP(w, r)
	})
}
