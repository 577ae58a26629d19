package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// actor is who acknowledges an event or presses its button: a full token, or a
// member through the dashboard session.
type actor struct {
	accountID int64
	by, via   string
	tok       *tidings.Token // nil for a session
}

// Where a press or an acknowledgement came from, as ActionPress.Via records it.
const (
	viaAPI       = "API"
	viaDashboard = "dashboard"
)

// actorOf authenticates a request that acts on an event: a bearer token (full
// access, role log), or, without an Authorization header, the dashboard session that
// Config.Session reads.
func (s *Server) actorOf(w http.ResponseWriter, r *http.Request) (*actor, error) {
	if s.session != nil && strings.TrimSpace(r.Header.Get("Authorization")) == "" {
		if account, by, ok := s.session(r); ok {
			return &actor{accountID: account, by: by, via: viaDashboard}, nil
		}
	}
	tok, err := s.authenticate(w, r)
	if err != nil {
		return nil, err
	}
	if tok.Access != tidings.AccessFull {
		return nil, tidings.Errorf(tidings.EForbidden,
			"a public token may only publish; acknowledging an event or pressing its button needs a token with full access")
	}
	by := tok.Name
	if by == "" {
		by = "token " + tok.ID // a token made without --name
	}
	return &actor{accountID: tok.AccountID, by: by, via: viaAPI, tok: tok}, nil
}

// event finds the event of the path's {id} that the actor may act on: of its account
// (another account's is not found) and, for a token, inside its limits.
func (a *actor) event(s *Server, r *http.Request) (*tidings.Event, error) {
	ev, err := s.store.FindEventByID(r.Context(), a.accountID, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if a.tok != nil {
		if err := a.tok.AllowPublish(tidings.RoleLog, ev.Project, ev.Channel); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// handleAck acknowledges an event: POST /v1/events/{id}/ack. The first
// acknowledgement stays: acknowledging again answers it, unchanged.
func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) error {
	a, err := s.actorOf(w, r)
	if err != nil {
		return err
	}
	ev, err := a.event(s, r)
	if err != nil {
		return err
	}
	ev, _, err = s.store.AcknowledgeEvent(r.Context(), a.accountID, ev.ID, a.by, s.now().UTC())
	if err != nil {
		return err
	}
	return writeJSON(w, eventOut(ev))
}

// pressJSON is a press as the API answers it.
type pressJSON struct {
	ID     string    `json:"id"`
	Action string    `json:"action"`
	Label  string    `json:"label"`
	By     string    `json:"by"`
	Via    string    `json:"via"`
	At     time.Time `json:"at"`
}

// handlePress records a press of an event's id action and sends it to the project's
// webhooks: POST /v1/events/{id}/actions/{action_id}.
func (s *Server) handlePress(w http.ResponseWriter, r *http.Request) error {
	a, err := s.actorOf(w, r)
	if err != nil {
		return err
	}
	ev, err := a.event(s, r)
	if err != nil {
		return err
	}
	id := r.PathValue("action_id")
	if _, ok := ev.ActionByID(id); !ok {
		return noSuchAction(ev, id)
	}
	p := &tidings.ActionPress{AccountID: a.accountID, EventID: ev.ID, ActionID: id, By: a.by, Via: a.via, At: s.now().UTC()}
	ev, err = s.store.PressAction(r.Context(), p)
	if err != nil {
		return err
	}
	return writeJSON(w, struct {
		Event tidings.EventJSON `json:"event"`
		Press pressJSON         `json:"press"`
	}{eventOut(ev), pressJSON{ID: p.ID, Action: p.ActionID, Label: p.Label, By: p.By, Via: p.Via, At: p.At}})
}

// noSuchAction is the 404 of a press of an action the event does not have (a URL
// action opens its URL: it is not pressed here).
func noSuchAction(ev *tidings.Event, id string) error {
	var ids []string
	for _, a := range ev.Actions {
		if a.ID != "" {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		return tidings.Errorf(tidings.ENotFound, "event %s has no action with id %q: it has no buttons that can be pressed", ev.ID, id)
	}
	return tidings.Errorf(tidings.ENotFound, "event %s has no action with id %q (its actions' ids: %s)", ev.ID, id, strings.Join(ids, ", "))
}
