package api

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidings-dev/tidings/internal/clientip"
	"github.com/tidings-dev/tidings/internal/metrics"
)

type infoKey struct{}

// requestInfo travels with a request so that the access log can name the account the
// handler found.
type requestInfo struct {
	requestID string
	accountID int64
}

func infoFrom(ctx context.Context) *requestInfo {
	if i, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// RequestID returns the id of the request that ctx belongs to.
func RequestID(ctx context.Context) string { return infoFrom(ctx).requestID }

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flushing).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on: writers wrapped around this one (a compressor) look for
// http.Flusher itself, not through Unwrap as http.ResponseController does.
func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Middleware wraps the whole server: request id, panic recovery, one access-log line
// per request (never a token or a password; refused requests are counted instead,
// refusedlog.go), and request metrics.
func Middleware(next http.Handler, log *slog.Logger, m *metrics.Metrics) http.Handler {
	h, _ := MiddlewareBehind(next, log, m, nil)
	return h
}

// MiddlewareBehind is Middleware for a server behind the trusted proxies: the refused
// requests' counts name each client by its X-Forwarded-For address, not the proxy's.
// Call stop once the server has answered its last request: it writes the counts of
// the second under way, and nothing is logged by the middleware's timer after it.
func MiddlewareBehind(next http.Handler, log *slog.Logger, m *metrics.Metrics, trusted []netip.Prefix) (h http.Handler, stop func()) {
	refused := newRefusedLog(log.Handler(), time.Now, refusedPeriod)
	return middleware(next, log, m, refused, trusted), refused.close
}

func middleware(next http.Handler, log *slog.Logger, m *metrics.Metrics, refused *refusedLog, trusted []netip.Prefix) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// One allocation for the request's info and its status writer.
		st := &requestState{info: requestInfo{requestID: newRequestID()}, sw: statusWriter{ResponseWriter: w}}
		info, sw := &st.info, &st.sw
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		w.Header()["X-Request-Id"] = []string{info.requestID} // canonical already
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				if sw.status == 0 {
					WriteError(sw, r, log, fmt.Errorf("panic: %v", p))
				} else {
					log.Error("panic after response started", "panic", p, "request_id", info.requestID)
				}
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			// The route pattern, never the path: a path may carry a secret
			// (/invite/{secret}). An unmatched path is logged, shortened: it names
			// nothing real, and an attacker must not fill the log with it.
			route := r.Pattern
			unmatched := route == "" || strings.HasSuffix(route, "/") && !strings.Contains(route, " ") // a catch-all: "/", "/v1/"
			if unmatched {
				route = "unmatched"
			}
			d := time.Since(start)
			if m != nil {
				m.ObserveRequest(route, status, d)
			}
			if refusedStatus(status, info.accountID != 0) && !refused.note(route, status, clientip.Of(r, trusted)) {
				return // counted: its line comes at the end of the period
			}
			attrs := make([]slog.Attr, 0, 8)
			attrs = append(attrs, slog.String("method", r.Method), slog.String("route", route), slog.Int("status", status),
				slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.String("request_id", info.requestID))
			if unmatched {
				attrs = append(attrs, slog.String("path", firstSegment(r.URL.Path)))
			}
			if info.accountID != 0 {
				attrs = append(attrs, slog.Int64("account", info.accountID))
			}
			// The record is handed to the handler directly: Logger.LogAttrs would also
			// look up its caller (runtime.Callers), which no handler of ours prints.
			if h := log.Handler(); h.Enabled(r.Context(), slog.LevelInfo) {
				rec := slog.NewRecord(start.Add(d), slog.LevelInfo, "request", 0)
				rec.AddAttrs(attrs...)
				h.Handle(r.Context(), rec)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// requestState is what the middleware allocates per request, in one piece.
type requestState struct {
	info requestInfo
	sw   statusWriter
}

// newRequestID is 16 hex digits from the runtime's per-thread random source: unique
// enough to find a request's log line, with no system call and no lock (crypto/rand
// cost a tenth of the middleware). A request id is not a secret.
func newRequestID() string {
	var b [16]byte
	n := rand.Uint64()
	for i := 15; i >= 0; i-- {
		b[i] = hexDigits[n&0xF]
		n >>= 4
	}
	return string(b[:])
}

const hexDigits = "0123456789abcdef"

// firstSegment is what the log keeps of an unmatched path: its first segment, shortened
// ("/reset/…"). The rest may be a secret (a reset link with a slash added), and an
// attacker must not fill the log with it either.
func firstSegment(path string) string {
	rest := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return "/" + shorten(rest[:i], 40) + "/…"
	}
	return "/" + shorten(rest, 40)
}

// shorten keeps at most n bytes of s (on a rune boundary), marking a cut with "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
