package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"

	"github.com/tidings-dev/tidings"
)

// MaxInFlightKeys caps the keys this instance remembers as in flight. Beyond it a keyed
// request is not tracked in memory (it cannot be answered 409), but it is still applied
// once: the store's claim of the key refuses a second writer, which then replays.
const MaxInFlightKeys = 10000

// inFlight is the keys of requests under way on this instance.
type inFlight struct {
	mu   sync.Mutex
	keys map[flightKey]struct{}
	max  int
}

type flightKey struct {
	account int64
	key     string
}

// hold marks a key in flight; it reports false when the key is in flight already.
// release is a no-op for a key the capped set could not hold.
func (f *inFlight) hold(k flightKey) (release func(), ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.keys[k]; busy {
		return nil, false
	}
	if len(f.keys) >= f.max {
		return func() {}, true
	}
	if f.keys == nil {
		f.keys = map[flightKey]struct{}{}
	}
	f.keys[k] = struct{}{}
	return func() {
		f.mu.Lock()
		delete(f.keys, k)
		f.mu.Unlock()
	}, true
}

func (f *inFlight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.keys)
}

// keyGuard is a keyed request's hold on its key while it runs.
type keyGuard struct {
	s           *Server
	account     int64
	key         string
	fingerprint string
	// anyBody: the key alone names the request, whatever its body (a provider's
	// delivery id: a retry or a repeat may send another body under it).
	anyBody bool
	// reused is the refusal of a key kept for another request (nil: the
	// Idempotency-Key header's).
	reused  func(kept *tidings.KeptAnswer) error
	release func()
	// answer is what the store kept: the request answers with these very bytes.
	answer []byte
}

// keyedRequest starts a publishing request: its token (checked and rate limited), its
// body (at most limit bytes) and its idempotency key, held until the guard's done.
func (s *Server) keyedRequest(w http.ResponseWriter, r *http.Request, limit int64) (*tidings.Token, []byte, *keyGuard, error) {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return nil, nil, nil, err
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := s.guardKey(w, r, tok, body)
	return tok, body, g, err
}

// guardKey reads the request's Idempotency-Key and holds it while the request runs
// (the caller ends the guard with done). Without a key it returns a nil guard: the
// request runs unkeyed. A key in flight here is an error (409). A key kept already is
// found by the write itself, whose claim of it fails: the handler then answers with
// lost, which replays the kept answer. So a first request, by far the most common,
// pays no read for its key.
func (s *Server) guardKey(w http.ResponseWriter, r *http.Request, tok *tidings.Token, body []byte) (*keyGuard, error) {
	values := r.Header.Values("Idempotency-Key")
	if len(values) == 0 {
		return nil, nil
	}
	if len(values) > 1 {
		return nil, tidings.Errorf(tidings.EValidation, "send one Idempotency-Key header, not %d", len(values))
	}
	if err := tidings.CheckIdempotencyKey(values[0]); err != nil {
		return nil, err
	}
	if strings.HasPrefix(values[0], tidings.HookKeyPrefix) {
		// Inbound hooks' deliveries are kept under these (hookKey): a client's key must
		// not take one before the provider's delivery arrives.
		return nil, tidings.Errorf(tidings.EValidation, "Idempotency-Key values starting with %q are kept for inbound hooks: choose another", tidings.HookKeyPrefix)
	}
	g := &keyGuard{s: s, account: tok.AccountID, key: values[0], fingerprint: fingerprint(r, body)}
	release, ok := s.inFlight.hold(flightKey{g.account, g.key})
	if !ok {
		return nil, inProgress(w)
	}
	g.release = release
	return g, nil
}

// fingerprint identifies a request's method, path and body: a retry must send the same.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + strings.TrimPrefix(r.URL.Path, "/api") + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func inProgress(w http.ResponseWriter) error {
	w.Header().Set("Retry-After", "1")
	return tidings.ErrKeyTaken
}

// replay writes the key's kept answer, if there is one, as vet makes it for this
// request's token (nil: as it was kept).
func (g *keyGuard) replay(w http.ResponseWriter, r *http.Request, vet vetAnswer) (bool, error) {
	a, err := g.s.store.FindAnswer(r.Context(), g.account, g.key)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !g.anyBody && a.Fingerprint != g.fingerprint {
		if g.reused != nil {
			return false, g.reused(a)
		}
		return false, tidings.Errorf(tidings.EKeyReused,
			"this Idempotency-Key was used with another request (method, path or body) at %s; use a new key for a new request",
			a.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	body := a.Body
	if vet != nil {
		if body, err = vet(a.Body); err != nil {
			return false, err
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Idempotent-Replayed", "true")
	w.WriteHeader(a.Status)
	_, err = w.Write(body)
	return true, err
}

// vetAnswer decides what a kept answer may show the token that replays it: the key is
// the account's, so another of its tokens, with other limits or access, may send the
// same request. It returns the answer to write, or why the token may not have it.
type vetAnswer func(kept []byte) ([]byte, error)

// lost answers a write that found its key taken: with the answer kept under it (a
// retry), 422 when that answer is another request's, or 409 while it cannot be read
// (another instance's request, not committed yet).
func (g *keyGuard) lost(w http.ResponseWriter, r *http.Request) error { return g.lostAs(w, r, nil) }

// lostAs is lost with the kept answer as vet makes it for this request's token.
func (g *keyGuard) lostAs(w http.ResponseWriter, r *http.Request, vet vetAnswer) error {
	replayed, err := g.replay(w, r, vet)
	if err == nil && !replayed {
		return inProgress(w)
	}
	return err
}

func (g *keyGuard) done() {
	if g != nil && g.release != nil {
		g.release()
		g.release = nil
	}
}

// keyFor is the key of the guarded write, whose answer is what render makes of its
// result; nil for an unkeyed request.
func keyFor[T any](g *keyGuard, render func(T) any) *tidings.Keyed[T] {
	if g == nil {
		return nil
	}
	return &tidings.Keyed[T]{Key: g.key, Fingerprint: g.fingerprint, Status: http.StatusOK,
		Render: func(result T) ([]byte, error) {
			b, err := encodeJSON(render(result))
			if err == nil {
				g.answer = b
			}
			return b, err
		}}
}

// answer writes v, or for a keyed request the very bytes its key keeps.
func (g *keyGuard) write(w http.ResponseWriter, v any) error {
	if g == nil || g.answer == nil {
		return writeJSON(w, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, err := w.Write(g.answer)
	return err
}

// encodeJSON is v as writeJSON writes it.
func encodeJSON(v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		return append(a.AppendJSON(make([]byte, 0, 512)), '\n'), nil
	}
	var buf bytes.Buffer
	err := newEncoder(&buf).Encode(v)
	return buf.Bytes(), err
}
