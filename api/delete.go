package api

import (
	"net/http"

	"github.com/tidings-dev/tidings"
)

// handleDeleteEvent deletes one event: DELETE /v1/events/{id}. It needs a full token
// with the log role whose limits include the event's project and channel. 204 on success.
func (s *Server) handleDeleteEvent(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	if tok.Access != tidings.AccessFull {
		return tok.AllowDelete(tidings.RoleLog, "", "")
	}
	id := r.PathValue("id")
	ev, err := s.store.FindEventByID(r.Context(), tok.AccountID, id)
	if err != nil {
		return err
	}
	if err := tok.AllowDelete(tidings.RoleLog, ev.Project, ev.Channel); err != nil {
		return err
	}
	if err := s.store.DeleteEvent(r.Context(), tok.AccountID, ev.Project, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleDeleteInsight deletes an insight with its history:
// DELETE /v1/insights?project=P&title=T. Full token with the insight role. 204 on success.
func (s *Server) handleDeleteInsight(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	project, title := v.Get("project"), v.Get("title")
	var p tidings.Problems
	tidings.CheckName(&p, "project", project)
	if title == "" {
		p.Add("title", "required", "is required")
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := tok.AllowDelete(tidings.RoleInsight, project, ""); err != nil {
		return err
	}
	if err := s.store.DeleteInsight(r.Context(), tok.AccountID, project, title); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
