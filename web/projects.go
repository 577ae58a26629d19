package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

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

type retentionOption struct {
	Days     int
	Label    string
	Selected bool
}

// retentionOptions are the choices of "keep events", the project's selected.
func retentionOptions(days int) []retentionOption {
	var out []retentionOption
	for _, d := range tidings.RetentionChoices {
		label := "forever"
		if d > 0 {
			label = strconv.Itoa(d) + " days"
		}
		out = append(out, retentionOption{Days: d, Label: label, Selected: d == days})
	}
	return out
}

type projectsData struct {
	Projects []projectRow
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
		cs, err := s.store.PageChannels(r.Context(), sess.account.ID, tidings.ChannelQuery{Project: p.Name, Limit: sidebarChannels})
		if err != nil {
			return err
		}
		n, err := s.store.CountEvents(r.Context(), sess.account.ID, p.Name, "")
		if err != nil {
			return err
		}
		every := p.RepeatUrgentEvery
		if every <= 0 { // a store that has not set it: the default
			every = tidings.RepeatUrgentEvery
		}
		rs, _, err := s.store.RecipientsOf(r.Context(), sess.account.ID, p.Name, "")
		if err != nil {
			return err
		}
		d.Projects = append(d.Projects, projectRow{Notify: recipientsText(rs), Project: p, Channels: cs.Channels, MoreChannels: cs.Total - len(cs.Channels),
			AllChannels: cs.Total, Events: n, Retention: retentionOptions(p.RetentionDays),
			EveryMinutes: int(every / time.Minute), Times: p.RepeatUrgentTimes, Escalation: escalationText(every, p.RepeatUrgentTimes)})
	}
	return s.render(w, r, "projects", &view{Title: "Projects and channels", Section: "settings", Status: status, Error: msg, Data: d})
}

// formError re-renders the projects page with the problem, or passes on other errors.
func (s *Server) formError(w http.ResponseWriter, r *http.Request, err error, typed string) error {
	switch code := tidings.ErrorCode(err); code {
	case tidings.EValidation, tidings.EConflict, tidings.ELimitReached:
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

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if _, err := s.store.CreateProject(r.Context(), sessionFrom(r).account.ID, name); err != nil {
		return s.formError(w, r, err, name)
	}
	return s.notice(w, r, "/settings/projects#project-"+name, "Project "+name+" created. Add a channel to it, or let the first event create one.")
}

func (s *Server) createChannel(w http.ResponseWriter, r *http.Request) error {
	project, name := r.PathValue("project"), strings.TrimSpace(r.PostFormValue("name"))
	if _, err := s.store.CreateChannel(r.Context(), sessionFrom(r).account.ID, project, name); err != nil {
		return s.formError(w, r, err, "")
	}
	return s.notice(w, r, "/settings/projects#project-"+project, "Channel #"+name+" created in "+project+".")
}

func (s *Server) setAutoCreate(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	on := r.PostFormValue("on") == "true"
	if err := s.store.SetAutoCreateChannels(r.Context(), sessionFrom(r).account.ID, project, on); err != nil {
		return err
	}
	return redirect(w, r, "/settings/projects#project-"+project)
}

// setInsightChangeDefault switches "Missing change means update" for an insight update.
func (s *Server) setInsightChangeDefault(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	if err := s.store.SetInsightChangeDefault(r.Context(), sessionFrom(r).account.ID, project, r.PostFormValue("change")); err != nil {
		return s.formError(w, r, err, "")
	}
	return redirect(w, r, "/settings/projects#project-"+project)
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
	return redirect(w, r, "/settings/projects#project-"+project)
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
	return redirect(w, r, "/settings/projects#project-"+project)
}

type deleteData struct {
	Project, Channel string
	Events           int
	Action           string
}

func (s *Server) deleteProjectPage(w http.ResponseWriter, r *http.Request) error {
	return s.confirmDelete(w, r, r.PathValue("project"), "")
}

func (s *Server) deleteChannelPage(w http.ResponseWriter, r *http.Request) error {
	return s.confirmDelete(w, r, r.PathValue("project"), r.PathValue("channel"))
}

// confirmDelete says what a deletion takes with it before anything is deleted.
func (s *Server) confirmDelete(w http.ResponseWriter, r *http.Request, project, channel string) error {
	n, err := s.store.CountEvents(r.Context(), sessionFrom(r).account.ID, project, channel)
	if err != nil {
		return err
	}
	action := "/settings/projects/" + project + "/delete"
	if channel != "" {
		action = "/settings/projects/" + project + "/channels/" + channel + "/delete"
	}
	return s.render(w, r, "delete", &view{Title: "Delete", Section: "settings",
		Data: deleteData{Project: project, Channel: channel, Events: n, Action: action}})
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteProject(r.Context(), sessionFrom(r).account.ID, r.PathValue("project")); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/projects", "Project "+r.PathValue("project")+" deleted, with its channels, events and insights.")
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	if err := s.store.DeleteChannel(r.Context(), sessionFrom(r).account.ID, project, r.PathValue("channel")); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/projects#project-"+project, "Channel #"+r.PathValue("channel")+" deleted, with its events.")
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
	return s.notice(w, r, "/settings/projects#project-"+project, escalationText(every, times)+" for "+project+".")
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
	return s.renderProjects(w, r, http.StatusBadRequest, msg, "")
}
