package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// A project's own page in Settings, /settings/projects/{project}: its channels, its
// settings as switches, who is notified, and a danger zone. Owners change things;
// members read the same page without its forms.

// The page lists the first projectRowChannels channels as rows, so that a project full
// of channels does not push its settings out of sight, and offers the first
// projectPageChannels in the danger zone's menu; the project's channel list
// (/p/{project}/channels) pages through them all.
const (
	projectRowChannels  = 10
	projectPageChannels = 50
)

type projectSettingsData struct {
	*tidings.Project
	Channels    []*tidings.Channel
	AllChannels int // the project's channels, listed or not
	Events      int
	Retention   []retentionOption
	KeepLabel   string // the retention chosen, in words
	// Escalation of urgent events: every EveryMinutes, at most Times repeats.
	EveryMinutes, Times int
	Escalation          string
	Notify              string // who is notified of its events, in words
}

// Listed are the channels shown as rows.
func (d projectSettingsData) Listed() []*tidings.Channel {
	return d.Channels[:min(len(d.Channels), projectRowChannels)]
}

// More is how many channels the rows do not show.
func (d projectSettingsData) More() int { return d.AllChannels - len(d.Listed()) }

// Unoffered is how many channels the danger zone's menu does not offer.
func (d projectSettingsData) Unoffered() int { return d.AllChannels - len(d.Channels) }

// projectPath is the page of a project's settings.
func projectPath(project string) string { return "/settings/projects/" + url.PathEscape(project) }

func (s *Server) projectSettingsPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderProjectSettings(w, r, r.PathValue("project"), http.StatusOK, "")
}

// renderProjectSettings draws the project's page, with msg as the problem of the form
// just sent when it was refused.
func (s *Server) renderProjectSettings(w http.ResponseWriter, r *http.Request, project string, status int, msg string) error {
	ctx, id := r.Context(), sessionFrom(r).account.ID
	p, err := s.store.FindProject(ctx, id, project)
	if err != nil {
		return err
	}
	cs, err := s.store.PageChannels(ctx, id, tidings.ChannelQuery{Project: p.Name, Limit: projectPageChannels})
	if err != nil {
		return err
	}
	n, err := s.store.CountEvents(ctx, id, p.Name, "")
	if err != nil {
		return err
	}
	rs, _, err := s.store.RecipientsOf(ctx, id, p.Name, "")
	if err != nil {
		return err
	}
	every := p.RepeatUrgentEvery
	if every <= 0 { // a store that has not set it: the default
		every = tidings.RepeatUrgentEvery
	}
	d := projectSettingsData{Project: p, Channels: cs.Channels, AllChannels: cs.Total, Events: n,
		Retention: retentionOptions(p.RetentionDays), KeepLabel: retentionLabel(p.RetentionDays),
		EveryMinutes: int(every / time.Minute), Times: p.RepeatUrgentTimes,
		Escalation: escalationText(every, p.RepeatUrgentTimes), Notify: recipientsText(rs)}
	return s.render(w, r, "projectsettings", &view{Title: p.Name + " · Projects", Section: "settings", Status: status, Error: msg, Data: d})
}

// projectBack is where a project's form leads once saved: the page it names in its "back"
// field when that is one of the project's pages in Settings (never another site, nor
// another project's page), else the project's page.
func projectBack(r *http.Request, project string) string {
	home := projectPath(project)
	back := r.PostFormValue("back")
	u, err := url.Parse(back)
	if back == "" || err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.Contains(back, `\`) ||
		strings.HasPrefix(back, "//") || u.RawQuery != "" {
		return home
	}
	if u.Path == home || strings.HasPrefix(u.Path, home+"/") && !strings.Contains(u.Path, "/..") {
		return u.EscapedPath() + fragment(u)
	}
	return home
}

func fragment(u *url.URL) string {
	if u.Fragment == "" {
		return ""
	}
	return "#" + url.PathEscape(u.Fragment)
}
