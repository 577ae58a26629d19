package web

import (
	"context"
	"net/http"

	"github.com/tidings-dev/tidings"
)

// The dashboard's home: a new team's getting-started checklist (checklist.go) while
// steps remain and nobody hid it; after that the project with the most recent activity.

func (s *Server) home(w http.ResponseWriter, r *http.Request) error {
	n, err := s.store.CountUsers(r.Context())
	if err != nil {
		return err
	}
	if n == 0 {
		return redirect(w, r, "/signup")
	}
	sess, err := s.loadSession(r)
	if err != nil {
		return err
	}
	if sess == nil {
		return redirect(w, r, "/login")
	}
	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess))
	c, err := s.checklistOf(r, sess)
	if err != nil {
		return err
	}
	if c != nil {
		return s.render(w, r, "home", &view{Title: "Get started", Section: "home", Data: c})
	}
	return redirect(w, r, s.projectLanding(r.Context(), sess.account.ID, true))
}

// maxLandingProjects bounds the projects compared for the most recent activity: one
// read of each project's newest event. An account with more compares the first ones
// by name.
const maxLandingProjects = 100

// recentProject is the project whose newest event is the newest (by the timestamp its
// feed shows first), "" when no project has an event or on an error: a landing page is
// a convenience, never a reason to fail a sign-in.
func (s *Server) recentProject(ctx context.Context, accountID int64, ps []*tidings.Project) string {
	best, at := "", int64(0)
	for i, p := range ps {
		if i == maxLandingProjects {
			break
		}
		page, err := s.store.ListEvents(ctx, accountID, tidings.EventQuery{Project: p.Name, Limit: 1})
		if err != nil || len(page.Events) == 0 {
			continue
		}
		if t := page.Events[0].Timestamp.UnixNano(); best == "" || t > at {
			best, at = p.Name, t
		}
	}
	return best
}

// projectLanding is where a member lands in a project: the one with the most recent
// activity; without any activity the first project (fallback) or "" (no fallback);
// without projects, the page that creates one.
func (s *Server) projectLanding(ctx context.Context, accountID int64, fallback bool) string {
	ps, err := s.store.ListProjects(ctx, accountID)
	if err != nil || len(ps) == 0 {
		return "/settings/projects"
	}
	if p := s.recentProject(ctx, accountID, ps); p != "" {
		return "/p/" + p
	}
	if !fallback {
		return ""
	}
	return "/p/" + ps[0].Name
}

// signInLanding is where signing in leads without a ?next=: the project with the most
// recent activity; a team without any event yet goes home, to its checklist.
func (s *Server) signInLanding(ctx context.Context, u *tidings.User) string {
	if p := s.projectLanding(ctx, u.AccountID, false); p != "" && p != "/settings/projects" {
		return p
	}
	return "/"
}
