// Package api is the JSON API (/v1/…): publishing events and insights with a bearer
// token, reading them back, health checks. Every error is application/problem+json.
package api

import (
	"cmp"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
	"github.com/tidings-dev/tidings/docs"
	"github.com/tidings-dev/tidings/hooks"
)

// Config wires a Server.
type Config struct {
	Store          tidings.Store
	Broker         tidings.Broker
	Logger         *slog.Logger
	Now            func() time.Time
	Limits         Limits
	TrustedProxies []netip.Prefix
	// Questions bounds the charts and funnels asked at once (nil: charts.DefaultGate),
	// shared with the dashboard's.
	Questions *charts.Gate
	// Session is who a request without an Authorization header acts as through its
	// dashboard session (web.Server.SessionActor), for the routes a signed-in member
	// may also call: acknowledging an event, pressing its button. Nil: tokens only.
	Session func(*http.Request) (accountID int64, by string, ok bool)
	// HookSources finds an inbound hook's source by name (nil: hooks.For); tests
	// bring their own.
	HookSources func(source string) hooks.Source
}

// Server serves the JSON API.
type Server struct {
	store   tidings.Store
	broker  tidings.Broker
	log     *slog.Logger
	now     func() time.Time
	limits  *limiter
	trusted []netip.Prefix
	usage   usage
	// inFlight is the idempotency keys of requests under way here.
	inFlight inFlight
	// questions bounds the charts and funnels under way.
	questions *charts.Gate
	session   func(*http.Request) (int64, string, bool)
	// streams is the open live streams (GET /v1/events/stream).
	streams streams
	// hookLimits rate limits each inbound hook like a token (keyed by the hook's ID).
	hookLimits  *limiter
	hookSources func(string) hooks.Source
}

// New returns a Server.
func New(cfg Config) *Server {
	s := &Server{store: cfg.Store, broker: cfg.Broker, log: cfg.Logger, now: cfg.Now,
		limits: newLimiter(cfg.Limits), hookLimits: newLimiter(cfg.Limits), trusted: cfg.TrustedProxies, inFlight: inFlight{max: MaxInFlightKeys},
		questions: cmp.Or(cfg.Questions, charts.DefaultGate()), session: cfg.Session, hookSources: cfg.HookSources}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one line of the route table.
type route struct {
	method, path string
	h            handlerFunc
	cors         bool  // reachable from browsers with a public token
	maxBody      int64 // the largest body it takes; 0: MaxBodyBytes
}

// routes is the API's route table: what Register serves, the 404 lists, and the
// OpenAPI document describes (a test holds them together).
func (s *Server) routes() []route {
	var routes []route
	for _, prefix := range []string{"", "/api"} {
		routes = append(routes,
			route{"POST", prefix + "/v1/log", s.handleLog, true, 0},
			route{"POST", prefix + "/v1/log/batch", s.handleLogBatch, true, MaxBatchBytes},
			route{"POST", prefix + "/v1/insight", s.handleInsight, true, 0},
			route{"PATCH", prefix + "/v1/insight", s.handleIncrement, true, 0},
			route{"POST", prefix + "/v1/identify", s.handleIdentify, true, 0},
			route{"POST", prefix + "/v1/group", s.handleGroup, true, 0},
			route{"POST", prefix + "/v1/page", s.handlePage, true, 0},
		)
	}
	return append(routes,
		route{"GET", "/v1/events", s.handleEvents, false, 0},
		route{"GET", "/v1/events/export", s.handleExport, false, 0},
		route{"GET", "/v1/events/stream", s.handleStream, false, 0},
		route{"DELETE", "/v1/events/{id}", s.handleDeleteEvent, false, 0},
		route{"POST", "/v1/events/{id}/ack", s.handleAck, false, 0},
		route{"POST", "/v1/events/{id}/actions/{action_id}", s.handlePress, false, 0},
		route{"GET", "/v1/insights", s.handleInsights, false, 0},
		route{"GET", "/v1/users", s.handleUsers, false, 0},
		route{"GET", "/v1/users/{user_id}", s.handleUser, false, 0},
		route{"GET", "/v1/page/settings", s.handlePageSettings, true, 0},
		route{"GET", "/v1/pages", s.handlePages, false, 0},
		route{"DELETE", "/v1/insights", s.handleDeleteInsight, false, 0},
		route{"GET", "/v1/charts/query", s.handleChartQuery, false, 0},
		route{"GET", "/v1/funnels/query", s.handleFunnelQuery, false, 0},
		// No token: the path's secret and the source's signature are the credentials.
		// handleHook bounds the body itself (tidings.MaxHookBody), once it has found the
		// hook, so that its log records a delivery too large.
		route{"POST", "/hooks/{id}", s.handleHook, false, math.MaxInt64},
		route{"GET", "/healthz", s.handleHealth, false, 0},
		route{"GET", "/readyz", s.handleReady, false, 0},
		route{"GET", "/v1/openapi.yaml", s.handleOpenAPI, false, 0},
	)
}

// Register adds the API's routes to mux.
func (s *Server) Register(mux *http.ServeMux) {
	routes := s.routes()
	allowed := map[string][]string{}
	cors := map[string]bool{}
	for _, rt := range routes {
		h := s.wrapMax(rt.h, cmp.Or(rt.maxBody, MaxBodyBytes))
		if rt.cors {
			h = withCORS(h)
			cors[rt.path] = true
		}
		mux.Handle(rt.method+" "+rt.path, h)
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for path, methods := range allowed {
		if cors[path] {
			mux.Handle("OPTIONS "+path, withCORS(preflight(methods)))
			methods = append(methods, "OPTIONS")
		}
		if slices.Contains(methods, "GET") {
			methods = append(methods, "HEAD")
		}
		// Per method, not for the bare path: /v1/events/export and DELETE
		// /v1/events/{id} would otherwise be two patterns neither more specific.
		notAllowed := s.methodNotAllowed(path, strings.Join(methods, ", "))
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if !slices.Contains(methods, m) {
				mux.Handle(m+" "+path, notAllowed)
			}
		}
	}
	for _, prefix := range []string{"/v1/", "/api/"} {
		mux.Handle(prefix, s.NotFound())
	}
}

// wrap turns a handler that returns an error into an http.Handler that writes it.
func (s *Server) wrap(h handlerFunc) http.Handler { return s.wrapMax(h, MaxBodyBytes) }

// wrapMax is wrap for a handler that takes bodies of up to maxBody bytes.
func (s *Server) wrapMax(h handlerFunc, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A deadline per request instead of a server-wide WriteTimeout, which would
		// also cut the dashboard's long-lived event streams.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(30 * time.Second))
		if r.ContentLength > maxBody { // before anything else, even the token check
			w.Header().Set("Connection", "close")
			WriteError(w, r, s.log, tooLarge(maxBody))
			return
		}
		if err := h(w, r); err != nil {
			WriteError(w, r, s.log, err)
		}
	})
}

// methodNotAllowed answers another method on the route path. Its detail names the
// route's pattern, never the request's path, which may be a secret (/hooks/hk_…).
func (s *Server) methodNotAllowed(path, allow string) http.Handler {
	return s.wrap(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		return tidings.Errorf(tidings.EMethodNotAllowed, "%s is not allowed on %s; allowed: %s", r.Method, path, allow)
	})
}

// NotFound answers unknown API paths with a problem.
func (s *Server) NotFound() http.Handler {
	return s.wrap(func(w http.ResponseWriter, r *http.Request) error {
		return tidings.Errorf(tidings.ENotFound, "there is nothing at %s; the API's endpoints are %s (described at /v1/openapi.yaml)",
			r.URL.Path, s.endpoints())
	})
}

// withCORS lets browsers call the publish endpoints with a public token. No
// credentials: the token travels in the Authorization header, never in a cookie.
func withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed")
		next.ServeHTTP(w, r)
	})
}

// preflight answers a browser's OPTIONS for a path served with methods: the publishing
// paths allow POST and PATCH, a path read from browsers (GET /v1/page/settings, whose
// Authorization header needs a preflight too) GET.
func preflight(methods []string) http.Handler {
	allow := "POST, PATCH, OPTIONS"
	if slices.Contains(methods, "GET") {
		allow = "GET, OPTIONS"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", allow)
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	})
}

// endpoints lists the API's routes for the 404's message, without the /api aliases.
func (s *Server) endpoints() string {
	var out []string
	for _, rt := range s.routes() {
		if !strings.HasPrefix(rt.path, "/api/") {
			out = append(out, rt.method+" "+rt.path)
		}
	}
	return strings.Join(out, ", ")
}

// handleOpenAPI serves the API's OpenAPI 3.1 description: GET /v1/openapi.yaml.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, err := w.Write(docs.OpenAPI)
	return err
}
