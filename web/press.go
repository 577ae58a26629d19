package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/tidings-dev/tidings"
)

// Pressing an event's buttons: acknowledging it and its id actions, from a card (a
// form, the member's session, via "dashboard") or from a notification (POST
// /push/press, authorised by the press token the notification carries).

// ackEvent acknowledges an event for the whole team: its repeats stop.
func (s *Server) ackEvent(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	ev, err := s.store.FindEvent(r.Context(), sess.account.ID, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		return err
	}
	acked, first, err := s.store.AcknowledgeEvent(r.Context(), sess.account.ID, ev.ID, sess.user.Email, s.now())
	if err != nil {
		return err
	}
	msg := "Acknowledged “" + ev.Event + "”: its repeats stop, for everyone."
	if !first && acked.Ack != nil {
		msg = "“" + ev.Event + "” was already acknowledged by " + acked.Ack.By + "."
	}
	return s.notice(w, r, backTo(r.PostFormValue("back"), ev), msg)
}

// pressAction records a press of one of an event's id actions from the dashboard.
func (s *Server) pressAction(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	ev, err := s.store.FindEvent(r.Context(), sess.account.ID, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		return err
	}
	a, ok := ev.ActionByID(r.PathValue("action_id"))
	if !ok {
		return tidings.Errorf(tidings.ENotFound, "“%s” has no button “%s”.", ev.Event, r.PathValue("action_id"))
	}
	p := &tidings.ActionPress{AccountID: sess.account.ID, EventID: ev.ID, ActionID: a.ID, By: sess.user.Email, Via: "dashboard", At: s.now()}
	if _, err := s.store.PressAction(r.Context(), p); err != nil {
		return err
	}
	return s.notice(w, r, backTo(r.PostFormValue("back"), ev), "Pressed “"+a.Label+"” on “"+ev.Event+"”.")
}

// maxPressBody bounds POST /push/press: its four fields take a few hundred bytes.
const maxPressBody = 4 << 10

type pressBody struct {
	Sub     string `json:"sub"`
	EventID string `json:"event_id"`
	Token   string `json:"token"`
	Action  string `json:"action"`
	Ack     bool   `json:"ack"`
}

// pushPress records a press from a notification's button (the service worker posts
// it): an id action, or "Acknowledge". No session: the press token, which only this
// server makes and only the device that got the notification can read, names the
// device and the event. The token is checked before the store is asked anything.
func (s *Server) pushPress(w http.ResponseWriter, r *http.Request) error {
	var b pressBody
	dec := json.NewDecoder(io.LimitReader(r.Body, maxPressBody))
	if err := dec.Decode(&b); err != nil || dec.Decode(&struct{}{}) != io.EOF {
		return writeProblem(w, tidings.EInvalidJSON, `send {"sub","event_id","token","action","ack"} as JSON`)
	}
	if b.Action == "" && !b.Ack {
		return writeProblem(w, tidings.EValidation, `a press names an "action" or has "ack": true`)
	}
	ctx := r.Context()
	key, err := s.pressKey(ctx)
	if err != nil {
		return err
	}
	if b.Sub == "" || b.EventID == "" || !tidings.CheckPressToken(key, b.Sub, b.EventID, b.Token) {
		return writeProblem(w, tidings.EForbidden, "this press token is not good for that device and event")
	}
	// A removed device has lost its power, whatever tokens it still holds.
	sub, err := s.store.FindPushSubscription(ctx, b.Sub)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return writeProblem(w, tidings.EForbidden, "this device no longer receives notifications")
	}
	if err != nil {
		return err
	}
	user, err := s.store.FindUser(ctx, sub.AccountID, sub.UserID)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return writeProblem(w, tidings.EForbidden, "this device's member has left the team")
	}
	if err != nil {
		return err
	}
	via := strings.TrimSpace(sub.Name)
	if via == "" {
		via = sub.Browser
	}
	now := s.now()
	if b.Action != "" {
		p := &tidings.ActionPress{AccountID: sub.AccountID, EventID: b.EventID, ActionID: b.Action, By: user.Email, Via: via, At: now}
		if _, err := s.store.PressAction(ctx, p); tidings.ErrorCode(err) == tidings.ENotFound {
			return writeProblem(w, tidings.ENotFound, "no such event, or it has no button "+b.Action)
		} else if err != nil {
			return err
		}
	}
	if b.Ack {
		if _, _, err := s.store.AcknowledgeEvent(ctx, sub.AccountID, b.EventID, user.Email, now); tidings.ErrorCode(err) == tidings.ENotFound {
			return writeProblem(w, tidings.ENotFound, "no such event")
		} else if err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// pressKey is the server's key for press tokens, read (or made) on the first press and
// kept: every later press costs no store read for it. A failed read is tried again.
func (s *Server) pressKey(ctx context.Context) ([]byte, error) {
	s.pressMu.Lock()
	defer s.pressMu.Unlock()
	if s.pressKeyBytes == nil {
		key, err := tidings.PressKey(ctx, s.store)
		if err != nil {
			return nil, err
		}
		s.pressKeyBytes = key
	}
	return s.pressKeyBytes, nil
}
