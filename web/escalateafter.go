package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// The escalation order of a project's urgent events, on its "Who is notified" page:
// the recipients at once, then everyone after so many minutes without an
// acknowledgement (0 or empty: never). Owners set it; members see it.

// escalateText says a project's escalation order in words.
func escalateText(after time.Duration) string {
	if after <= 0 {
		return "Urgent events reach the recipients only."
	}
	return "Urgent events reach everyone " + plural(int(after/time.Minute), "minute") + " after they arrive, unless someone acknowledges them first."
}

// setEscalateAfter saves the form's minutes ("" or 0: never).
func (s *Server) setEscalateAfter(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	text := strings.TrimSpace(r.PostFormValue("minutes"))
	minutes := 0
	if text != "" {
		var err error
		if minutes, err = strconv.Atoi(text); err != nil || minutes < 0 {
			return s.renderRecipients(w, r, http.StatusBadRequest, "Then everyone after: a whole number of minutes, from 1 to 1440, or 0 for never.")
		}
	}
	after := time.Duration(minutes) * time.Minute
	if err := tidings.CheckEscalateAfter(after); err != nil {
		return s.renderRecipients(w, r, http.StatusBadRequest, "Then everyone after: a whole number of minutes, from 1 to 1440, or 0 for never.")
	}
	if err := s.store.SetEscalation(r.Context(), sessionFrom(r).account.ID, project, after); err != nil {
		if tidings.ErrorCode(err) == tidings.EValidation {
			return s.renderRecipients(w, r, http.StatusBadRequest, "Then everyone after: "+tidings.ErrorMessage(err))
		}
		return err
	}
	return s.notice(w, r, "/settings/projects/"+project+"/notify#escalate", escalateText(after))
}
