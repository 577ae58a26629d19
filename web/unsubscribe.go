package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tidings-dev/tidings"
)

// The unsubscribe link of every mail about a project (tidings.UnsubscribeURL): GET
// asks "Stop email about P?", POST stops it. The POST is also RFC 8058's one-click
// unsubscribe, which mail clients send without a session or a form of ours (body
// List-Unsubscribe=One-Click): the link's signed token is the credential, and the
// cross-origin check lets exactly this route through (server.go).

type unsubscribeData struct {
	Project, Email string
	All            bool   // every project's email (tidings.UnsubscribeAll: the quiet-hours summary's link)
	Action         string // the form's URL: the link itself
	Done           bool
}

// unsubscriber reads and checks the link: the member and the project it names. A
// malformed link, a wrong token or a member who is gone are all "not found".
func (s *Server) unsubscriber(r *http.Request) (*tidings.User, string, error) {
	q := r.URL.Query()
	id, err := strconv.ParseInt(q.Get("u"), 10, 64)
	project := q.Get("p")
	if err != nil || id <= 0 || !tidings.ValidName(project) && project != tidings.UnsubscribeAll {
		return nil, "", errNotFound
	}
	key, err := s.mailKey(r.Context())
	if err != nil {
		return nil, "", err
	}
	if !tidings.CheckUnsubscribeToken(key, id, project, q.Get("t")) {
		return nil, "", errNotFound
	}
	u, err := s.findUser(r.Context(), id)
	if err != nil {
		return nil, "", err
	}
	return u, project, nil
}

// findUser finds a user by ID in whichever account holds them. The store has no
// lookup by ID alone, so this walks the accounts; it runs only behind a valid token.
func (s *Server) findUser(ctx context.Context, id int64) (*tidings.User, error) {
	as, err := s.store.ListAccounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		u, err := s.store.FindUser(ctx, a.ID, id)
		if err == nil {
			return u, nil
		}
		if tidings.ErrorCode(err) != tidings.ENotFound {
			return nil, err
		}
	}
	return nil, errNotFound
}

func (s *Server) mailKey(ctx context.Context) ([]byte, error) {
	s.pressMu.Lock()
	defer s.pressMu.Unlock()
	if s.mailKeyBytes == nil {
		key, err := tidings.MailKey(ctx, s.store)
		if err != nil {
			return nil, err
		}
		s.mailKeyBytes = key
	}
	return s.mailKeyBytes, nil
}

func (s *Server) unsubscribePage(w http.ResponseWriter, r *http.Request) error {
	u, project, err := s.unsubscriber(r)
	if err != nil {
		return err
	}
	// The link as it was mailed (tidings.UnsubscribeURL), whatever the order it came in.
	action := "/unsubscribe?u=" + strconv.FormatInt(u.ID, 10) + "&p=" + url.QueryEscape(project) + "&t=" + url.QueryEscape(r.URL.Query().Get("t"))
	title := "Stop email about " + project
	if project == tidings.UnsubscribeAll {
		title = "Stop all email from Tidings"
	}
	return s.render(w, r, "unsubscribe", &view{Title: title,
		Data: unsubscribeData{Project: project, Email: u.Email, All: project == tidings.UnsubscribeAll, Action: action}})
}

// unsubscribeMail switches email off in the member's routes of the project and of
// each of its channels (push stays as it was), and ends the project's digest; the
// link of every project (tidings.UnsubscribeAll) does so for each project.
func (s *Server) unsubscribeMail(w http.ResponseWriter, r *http.Request) error {
	u, project, err := s.unsubscriber(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	saved, err := s.store.AccountRoutes(ctx, u.AccountID)
	if err != nil {
		return err
	}
	all := project == tidings.UnsubscribeAll
	for _, m := range saved {
		if m.UserID != u.ID || m.Project != project && !all || !m.Routes.Email {
			continue
		}
		rs := tidings.Routes{Push: m.Routes.Push}
		if err := s.store.SetRoutes(ctx, u.AccountID, u.ID, m.Project, m.Channel, &rs); err != nil && !gone(err) {
			return err
		}
	}
	digests := map[string]string{project: tidings.DigestDaily}
	if all {
		if digests, err = s.store.MemberDigests(ctx, u.AccountID, u.ID); err != nil {
			return err
		}
	}
	for p := range digests {
		if err := s.store.SetDigest(ctx, u.AccountID, u.ID, p, tidings.DigestOff); err != nil && !gone(err) {
			return err
		}
	}
	s.log.Info("unsubscribed from email", "user", u.ID, "project", project)
	title := "No more email about " + project
	if all {
		title = "No more email from Tidings"
	}
	return s.render(w, r, "unsubscribe", &view{Title: title,
		Data: unsubscribeData{Project: project, Email: u.Email, All: all, Done: true}})
}

// gone reports an error saying the project or channel was deleted meanwhile: its
// mail stopped with it.
func gone(err error) bool {
	switch tidings.ErrorCode(err) {
	case tidings.EProjectNotFound, tidings.EChannelNotFound, tidings.ENotFound:
		return true
	}
	return false
}
