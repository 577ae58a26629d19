package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/hooks"
	"github.com/tidings-dev/tidings/internal/clientip"
)

// hookAnswer is what POST /hooks/{id} answers: the stored events as POST /v1/log
// answers each.
type hookAnswer struct {
	Events []tidings.EventJSON `json:"events"`
}

// errNoHook answers an unknown hook, a malformed path, and a hook whose project or
// channel went: the same for each, so that the answer says nothing of which.
var errNoHook = tidings.Errorf(tidings.ENotFound, "there is no hook at this address")

// handleHook takes a provider's webhook: POST /hooks/{id}. No bearer token: the path's
// secret and the source's signature are the credentials. The hook's source checks and
// maps the delivery; its events are published as POST /v1/log/batch publishes, with
// the idempotency key hook:<hook id>:<delivery id>, so that a retried delivery stores
// nothing twice and answers what the first one answered (a provider's delivery id
// alone decides; an id the sender chose, a json hook's Idempotency-Key, must come
// with the same body: hooks.Delivery.SenderKey). Every attempt goes to the hook's
// log, with why it was refused, never the body.
func (s *Server) handleHook(w http.ResponseWriter, r *http.Request) error {
	secret := r.PathValue("id")
	if !strings.HasPrefix(secret, tidings.HookPathPrefix) || len(secret) > 128 {
		return errNoHook
	}
	ctx := r.Context()
	h, err := s.store.FindHookByPath(ctx, tidings.HashSecret(secret))
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return errNoHook
	}
	if err != nil {
		return err
	}
	infoFrom(ctx).accountID = h.AccountID
	now := s.now()
	a := &tidings.HookAttempt{HookID: h.ID, At: now}
	defer func() {
		// Recorded even when the client has gone: the log says what happened.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.store.RecordHookAttempt(rctx, h.AccountID, a); err != nil {
			s.log.Warn("recording a hook's delivery", "hook", h.ID, "err", err)
		}
	}()
	refuse := func(err error) error {
		a.Status, a.Error = problemOf(r, err).Status, tidings.ErrorMessage(err)
		return err
	}

	if err := s.hookLimits.allow(w, &tidings.Token{ID: h.ID, Access: tidings.AccessFull}, clientip.Of(r, s.trusted), now); err != nil {
		return refuse(err)
	}
	body, err := readHookBody(w, r)
	if err != nil {
		return refuse(err)
	}
	src := s.hookSource(h.Source)
	if src == nil {
		return refuse(tidings.Errorf(tidings.EInternal, "hook %s: no source %q", h.ID, h.Source))
	}
	req := &hooks.Request{Header: r.Header, Body: body, Now: now}
	if err := src.Verify(h, req); err != nil {
		s.log.Info("a hook's delivery refused", "hook", h.ID, "source", h.Source, "reason", err.Error())
		return s.refuseHook(w, r, a, err)
	}
	d, err := src.Map(h, req)
	if err != nil {
		s.log.Info("a hook's delivery refused", "hook", h.ID, "source", h.Source, "reason", err.Error())
		return s.refuseHook(w, r, a, err)
	}
	a.DeliveryID = d.ID

	var p tidings.Problems
	for i, e := range d.Events {
		e.Project, e.Channel = h.Project, h.Channel
		var ep tidings.Problems
		e.Check(&ep, now)
		for _, f := range ep {
			p.Add("events["+strconv.Itoa(i)+"]."+f.Path, f.Type, "%s", f.Message)
		}
	}
	if err := p.Err(); err != nil {
		return refuse(err)
	}
	if len(d.Events) == 0 {
		a.Status = http.StatusOK
		return writeJSON(w, hookAnswer{Events: []tidings.EventJSON{}})
	}

	var g *keyGuard
	if d.ID != "" {
		g = &keyGuard{s: s, account: h.AccountID, key: hookKey(h.ID, d.ID), fingerprint: hookFingerprint(h.ID, body),
			anyBody: d.SenderKey == "", reused: func(kept *tidings.KeptAnswer) error {
				return tidings.Errorf(tidings.EKeyReused,
					"this delivery's %s header was sent with another body at %s; send a new one with each new delivery",
					d.SenderKey, kept.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
			}}
		release, ok := s.inFlight.hold(flightKey{g.account, g.key})
		if !ok {
			return refuse(inProgress(w))
		}
		g.release = release
		defer g.done()
	}
	render := func(published []tidings.Published) hookAnswer {
		out := hookAnswer{Events: []tidings.EventJSON{}}
		for _, pub := range published {
			if pub.Event != nil {
				out.Events = append(out.Events, eventOut(pub.Event))
			}
		}
		return out
	}
	published, err := s.store.PublishEvents(ctx, h.AccountID,
		&tidings.NewBatch{Events: d.Events, Key: keyFor(g, func(ps []tidings.Published) any { return render(ps) })})
	if err == tidings.ErrKeyTaken {
		// A retried delivery: the answer the first one got, and nothing stored.
		a.Status = http.StatusOK
		if err := g.lost(w, r); err != nil {
			return refuse(err)
		}
		return nil
	}
	if errors.Is(err, tidings.ErrNoneStored) {
		err = nil
	}
	if err != nil {
		// A deleted project or channel is the hook's gone too.
		if c := tidings.ErrorCode(err); c == tidings.EProjectNotFound || c == tidings.EChannelNotFound {
			return refuse(errNoHook)
		}
		return refuse(err)
	}
	var refused []string
	for _, pub := range published {
		if pub.Event != nil {
			a.Events++
			s.broker.Publish(tidings.Notice{AccountID: h.AccountID, Event: pub.Event})
		} else if pub.Err != nil {
			refused = append(refused, tidings.ErrorMessage(pub.Err))
		}
	}
	if a.Events == 0 && len(refused) > 0 {
		for _, pub := range published {
			if c := tidings.ErrorCode(pub.Err); c == tidings.EProjectNotFound || c == tidings.EChannelNotFound {
				return refuse(errNoHook)
			}
		}
		return refuse(tidings.Errorf(tidings.EValidation, "no event was stored: %s", strings.Join(refused, "; ")))
	}
	a.Status = http.StatusOK
	if len(refused) > 0 {
		a.Error = "some events were refused: " + strings.Join(refused, "; ")
	}
	return g.write(w, render(published))
}

// hookSource is the source that checks and maps a hook's deliveries.
func (s *Server) hookSource(name string) hooks.Source {
	if s.hookSources != nil {
		return s.hookSources(name)
	}
	return hooks.For(name)
}

// refuseHook answers a source's refusal (401: credentials; 400: a body that does not
// parse) with its reason, and logs it in the attempt.
func (s *Server) refuseHook(w http.ResponseWriter, r *http.Request, a *tidings.HookAttempt, err error) error {
	var ref *hooks.Refusal
	if !errors.As(err, &ref) {
		ref = &hooks.Refusal{Status: http.StatusBadRequest, Reason: err.Error()}
	}
	a.Status, a.Error = ref.Status, ref.Reason
	p := &problem{Status: ref.Status, Detail: ref.Reason, RequestID: infoFrom(r.Context()).requestID}
	if ref.Status == http.StatusUnauthorized {
		p.Title, p.Code = "Unauthorized", "invalid_signature"
	} else {
		p.Title, p.Code = "Bad request", "invalid_body"
	}
	p.Message = p.Detail
	p.Validation = &validationBlock{Body: []tidings.FieldError{{Path: "", Type: p.Code, Message: p.Detail}}}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	return newEncoder(w).Encode(p)
}

// readHookBody reads a delivery's body, at most tidings.MaxHookBody bytes, whatever its
// Content-Type (GitHub may send a form).
func readHookBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > tidings.MaxHookBody {
		w.Header().Set("Connection", "close")
		return nil, tooLarge(tidings.MaxHookBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, tidings.MaxHookBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		w.Header().Set("Connection", "close")
		return nil, tooLarge(tidings.MaxHookBody)
	}
	if err != nil {
		return nil, tidings.Errorf(tidings.EInvalidJSON, "the request body could not be read")
	}
	return body, nil
}

// hookKey is the idempotency key of a hook's delivery; a delivery id that would make
// it too long, or is not printable ASCII, is hashed.
func hookKey(hookID, deliveryID string) string {
	k := tidings.HookKeyPrefix + hookID + ":" + deliveryID
	if tidings.CheckIdempotencyKey(k) != nil {
		sum := sha256.Sum256([]byte(deliveryID))
		k = tidings.HookKeyPrefix + hookID + ":sha256:" + hex.EncodeToString(sum[:])
	}
	return k
}

// hookFingerprint identifies a delivery's body: a sender that chose its delivery id
// (hooks.Delivery.SenderKey) must send the same body under it. A provider's id is
// never compared with it: keyGuard.anyBody.
func hookFingerprint(hookID string, body []byte) string {
	h := sha256.New()
	h.Write([]byte("POST /hooks/" + hookID + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
