package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// projectRow is a project with its first channels, for the forms' menus of projects
// and channels (choices.go).
type projectRow struct {
	*tidings.Project
	Channels     []*tidings.Channel
	MoreChannels int // channels not listed: the project's channel list has them
	AllChannels  int
	Events       int
	Retention    []retentionOption
	// Escalation of urgent events: every EveryMinutes, at most Times repeats.
	EveryMinutes, Times int
	Escalation          string
	Notify              string // who is notified of its events, in words
}

// projectLine is one row of Settings → Projects: what a project holds and who hears
// of it; its settings are on its own page (projectsettings.go).
type projectLine struct {
	Name     string
	Channels int
	Events   int
	Notify   string
}

type retentionOption struct {
	Days     int
	Label    string
	Selected bool
}

// retentionOptions are the choices of "keep events", the project's selected.
func retentionOptions(days int) []retentionOption {
	var out []retentionOption
	for _, d := range tidings.RetentionChoices {
		out = append(out, retentionOption{Days: d, Label: retentionLabel(d), Selected: d == days})
	}
	return out
}

func retentionLabel(days int) string {
	if days > 0 {
		return strconv.Itoa(days) + " days"
	}
	return "forever"
}

type projectsData struct {
	Projects []projectLine
	Name     string // the name typed into a failed form
}

func (s *Server) projectsPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderProjects(w, r, http.StatusOK, "", "")
}

func (s *Server) renderProjects(w http.ResponseWriter, r *http.Request, status int, msg, typed string) error {
	sess := sessionFrom(r)
	ps, err := s.store.ListProjects(r.Context(), sess.account.ID)
	if err != nil {
		return err
	}
	d := projectsData{Name: typed}
	for _, p := range ps {
		// Limit 1: only the total is wanted here.
		cs, err := s.store.PageChannels(r.Context(), sess.account.ID, tidings.ChannelQuery{Project: p.Name, Limit: 1})
		if err != nil {
			return err
		}
		n, err := s.store.CountEvents(r.Context(), sess.account.ID, p.Name, "")
		if err != nil {
			return err
		}
		rs, _, err := s.store.RecipientsOf(r.Context(), sess.account.ID, p.Name, "")
		if err != nil {
			return err
		}
		d.Projects = append(d.Projects, projectLine{Name: p.Name, Channels: cs.Total, Events: n, Notify: recipientsText(rs)})
	}
	return s.render(w, r, "projects", &view{Title: "Projects", Section: "settings", Status: status, Error: msg, Data: d})
}

// formError shows a refused form again with the problem: on the project's page when
// the form was one of a project's, on the list otherwise; other errors pass on.
func (s *Server) formError(w http.ResponseWriter, r *http.Request, err error, typed string) error {
	switch code := tidings.ErrorCode(err); code {
	case tidings.EValidation, tidings.EConflict, tidings.ELimitReached:
		if p := r.PathValue("project"); p != "" {
			return s.renderProjectSettings(w, r, p, tidings.HTTPStatus(code), nameMessage(err))
		}
		return s.renderProjects(w, r, tidings.HTTPStatus(code), nameMessage(err), typed)
	}
	return err
}

// nameMessage says a naming problem as a sentence: "Project name: must be …".
func nameMessage(err error) string {
	msg := tidings.ErrorMessage(err)
	if k, rest, ok := strings.Cut(msg, ": "); ok && (k == "project" || k == "channel") {
		return strings.ToUpper(k[:1]) + k[1:] + " name: " + rest + "."
	}
	return msg
}

// createProject leads to the new project's page: its channels and settings are next.
func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if _, err := s.store.CreateProject(r.Context(), sessionFrom(r).account.ID, name); err != nil {
		return s.formError(w, r, err, name)
	}
	return s.notice(w, r, projectPath(name), "Project "+name+" created. Add a channel to it, or let the first event create one.")
}

func (s *Server) createChannel(w http.ResponseWriter, r *http.Request) error {
	project, name := r.PathValue("project"), strings.TrimSpace(r.PostFormValue("name"))
	if _, err := s.store.CreateChannel(r.Context(), sessionFrom(r).account.ID, project, name); err != nil {
		return s.formError(w, r, err, "")
	}
	return s.notice(w, r, projectBack(r, project), "Channel #"+name+" created in "+project+".")
}

// onOff is a switch's state in a notice.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func (s *Server) setAutoCreate(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	on := r.PostFormValue("on") == "true"
	if err := s.store.SetAutoCreateChannels(r.Context(), sessionFrom(r).account.ID, project, on); err != nil {
		return err
	}
	return s.notice(w, r, projectBack(r, project), "Saved: create channels on first event is "+onOff(on)+".")
}

// setInsightChangeDefault switches "Missing change means update" for an insight update.
func (s *Server) setInsightChangeDefault(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	change := r.PostFormValue("change")
	if err := s.store.SetInsightChangeDefault(r.Context(), sessionFrom(r).account.ID, project, change); err != nil {
		return s.formError(w, r, err, "")
	}
	return s.notice(w, r, projectBack(r, project), "Saved: a missing change means update is "+onOff(change != "")+".")
}

// setGPC switches "Honour Global Privacy Control": on (the default), ls.js sends
// nothing for visitors whose browser asks for it, and the API stores nothing it sends
// for them.
func (s *Server) setGPC(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	var ignore bool
	switch r.PostFormValue("honour") {
	case "true":
	case "false":
		ignore = true
	default:
		var p tidings.Problems
		p.Add("honour", "enum", `must be "true" or "false"`)
		return s.formError(w, r, p.Err(), "")
	}
	if err := s.store.SetIgnoreGPC(r.Context(), sessionFrom(r).account.ID, project, ignore); err != nil {
		return s.formError(w, r, err, "")
	}
	return s.notice(w, r, projectBack(r, project), "Saved: honour Global Privacy Control is "+onOff(!ignore)+".")
}

// setRetention sets how long a project keeps its events; older ones are deleted by
// the background purge within a minute or so.
func (s *Server) setRetention(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	days, err := strconv.Atoi(r.PostFormValue("days"))
	if err != nil {
		days = -1
	}
	if err := s.store.SetRetention(r.Context(), sessionFrom(r).account.ID, project, days); err != nil {
		return s.formError(w, r, err, "")
	}
	return s.notice(w, r, projectBack(r, project), "Saved: keep events "+retentionLabel(days)+".")
}

// setEscalation sets how an urgent event of the project is pushed again until someone
// acknowledges it: every so many minutes, at most so many times (0: never again).
func (s *Server) setEscalation(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	var p tidings.Problems
	minutes, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("every")))
	if err != nil {
		p.Add("repeat_urgent_every", "format", "must be a whole number of minutes, from 1 to 1440")
	}
	times, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("times")))
	if err != nil {
		p.Add("repeat_urgent_times", "format", "must be a whole number, from 0 to %d", tidings.MaxRepeatUrgentTimes)
	}
	if err := p.Err(); err != nil {
		return s.escalationError(w, r, err)
	}
	every := time.Duration(minutes) * time.Minute
	if err := s.store.SetRepeatUrgent(r.Context(), sessionFrom(r).account.ID, project, every, times); err != nil {
		return s.escalationError(w, r, err)
	}
	return s.notice(w, r, projectBack(r, project), escalationText(every, times)+" for "+project+".")
}

// escalationText says a project's escalation in words.
func escalationText(every time.Duration, times int) string {
	if times == 0 {
		return "Urgent events are pushed once"
	}
	return "Urgent events are pushed again every " + plural(int(every/time.Minute), "minute") + ", at most " + plural(times, "time") + ", until acknowledged"
}

// escalationError shows a refused escalation as the page's other forms show theirs,
// naming the fields as the form does.
func (s *Server) escalationError(w http.ResponseWriter, r *http.Request, err error) error {
	if tidings.ErrorCode(err) != tidings.EValidation {
		return err
	}
	msg := strings.NewReplacer("repeat_urgent_every:", "Repeat every (minutes):", "repeat_urgent_times:", "Repeat at most (times):").
		Replace(tidings.ErrorMessage(err))
	return s.renderProjectSettings(w, r, r.PathValue("project"), http.StatusBadRequest, msg)
}
