// Package browser serves the scripts that other websites load from Tidings: ls.js,
// LogSnag's browser command queue (track, identify, data-event clicks, page views),
// and the feedback widget. Both are written by hand without dependencies and embedded.
package browser

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

var (
	//go:embed ls.js
	lsJS []byte
	//go:embed feedback.js
	feedbackJS []byte
)

// Script is one embedded script and the version its content hashes to.
type Script struct {
	body    []byte
	version string
}

func newScript(body []byte) *Script {
	sum := sha256.Sum256(body)
	return &Script{body: body, version: hex.EncodeToString(sum[:6])}
}

// The scripts, and the paths each is served at: LogSnag's snippets load
// /web/ls.js and /feedback/ls.js from their CDN, so a page moving to Tidings only
// changes the host.
var (
	LS       = newScript(lsJS)
	Feedback = newScript(feedbackJS)
	paths    = []struct {
		path   string
		script *Script
	}{{"/ls.js", LS}, {"/web/ls.js", LS}, {"/feedback/ls.js", Feedback}}
)

// Version is a hash of the script's content: `?v=` with it is a URL that never changes
// meaning, cached for a year.
func (s *Script) Version() string { return s.version }

// Body is the script's content.
func (s *Script) Body() []byte { return s.body }

// Cache lifetimes: a versioned URL is immutable; the plain one, which pages embed
// once and never change, is revalidated (a 304) after an hour, so an upgrade reaches
// visitors within one.
const (
	immutable  = "public, max-age=31536000, immutable"
	revalidate = "public, max-age=3600"
)

// ServeHTTP answers GET and HEAD, with a 304 to a matching If-None-Match. Other
// websites load the script: any origin may (a module script from another origin needs
// CORS), including pages that isolate themselves (Cross-Origin-Resource-Policy).
func (s *Script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/javascript; charset=utf-8")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	// Weak: the compressing middleware may change the bytes, not what they mean.
	h.Set("ETag", `W/"`+s.version+`"`)
	if r.URL.Query().Get("v") == s.version {
		h.Set("Cache-Control", immutable)
	} else {
		h.Set("Cache-Control", revalidate)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.body))
}

// Register adds the scripts' routes to mux: GET (which also answers HEAD), and 405
// to any other method.
func Register(mux *http.ServeMux) {
	for _, p := range paths {
		mux.Handle("GET "+p.path, p.script)
		mux.HandleFunc(p.path, notAllowed)
	}
}

func notAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, r.Method+" is not allowed on "+r.URL.Path+"; allowed: GET, HEAD", http.StatusMethodNotAllowed)
}
