package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/tidings-dev/tidings"
)

// Deleting a project or a channel, from the danger zone of the project's page: a page
// that says exactly what goes with it, where the owner types the name to confirm (as
// GitHub asks), so that no slip of a click deletes a year of events.

type deleteData struct {
	Project, Channel string
	Name             string // what is typed to confirm: the project's or the channel's name
	Pattern          string // Name as an HTML pattern, so that the browser checks it too
	What             string // what the deletion takes with it, in a sentence
	Events           int
	Action           string
	Back             string // the project's page
}

func (s *Server) deleteProjectPage(w http.ResponseWriter, r *http.Request) error {
	return s.confirmDelete(w, r, http.StatusOK, "")
}

func (s *Server) deleteChannelPage(w http.ResponseWriter, r *http.Request) error {
	return s.confirmDelete(w, r, http.StatusOK, "")
}

// pickChannelToDelete answers the danger zone's "Delete a channel" (a GET form with
// the channel's name) with its confirmation page.
func (s *Server) pickChannelToDelete(w http.ResponseWriter, r *http.Request) error {
	project, channel := r.PathValue("project"), strings.TrimSpace(r.URL.Query().Get("channel"))
	if channel == "" {
		return s.renderProjectSettings(w, r, project, http.StatusBadRequest, "Pick the channel to delete.")
	}
	return redirect(w, r, projectPath(project)+"/channels/"+url.PathEscape(channel)+"/delete")
}

// deleteCounts is what a deletion takes with it, counted cheaply: rows of the
// account that the deletion cascades to.
type deleteCounts struct {
	Channels, Events, Insights, Charts, Tokens, Webhooks, Hooks int
}

func (s *Server) countDeletion(r *http.Request, project, channel string) (deleteCounts, error) {
	ctx, id := r.Context(), sessionFrom(r).account.ID
	var c deleteCounts
	var err error
	if c.Events, err = s.store.CountEvents(ctx, id, project, channel); err != nil {
		return c, err
	}
	if channel == "" {
		page, err := s.store.PageChannels(ctx, id, tidings.ChannelQuery{Project: project, Limit: 1})
		if err != nil {
			return c, err
		}
		c.Channels = page.Total
		ins, err := s.store.ListInsights(ctx, id, project)
		if err != nil {
			return c, err
		}
		c.Insights = len(ins)
		cards, err := s.store.ListCards(ctx, id, project)
		if err != nil {
			return c, err
		}
		c.Charts = len(cards)
	}
	// A token, webhook or hook limited to the project (or to the channel) goes with it.
	limited := func(p, ch string) bool { return p == project && (channel == "" || ch == channel) }
	tokens, err := s.store.ListTokens(ctx, id)
	if err != nil {
		return c, err
	}
	for _, t := range tokens {
		if !t.Revoked() && limited(t.Project, t.Channel) {
			c.Tokens++
		}
	}
	hooks, err := s.store.ListWebhooks(ctx, id)
	if err != nil {
		return c, err
	}
	for _, h := range hooks {
		if limited(h.Project, h.Channel) {
			c.Webhooks++
		}
	}
	inbound, err := s.store.ListHooks(ctx, id)
	if err != nil {
		return c, err
	}
	for _, h := range inbound {
		if limited(h.Project, h.Channel) {
			c.Hooks++
		}
	}
	return c, nil
}

// sentence says what goes: "3 channels, 1,204 events, 5 insights and 1 API token
// limited to it". Nothing is left out but what there is none of (events are always said).
func (c deleteCounts) sentence(project bool) string {
	var parts []string
	if project {
		parts = append(parts, countOf(c.Channels, "channel"))
	}
	parts = append(parts, countOf(c.Events, "event"))
	if c.Insights > 0 {
		parts = append(parts, countOf(c.Insights, "insight"))
	}
	if c.Charts > 0 {
		parts = append(parts, countOf(c.Charts, "chart")) // funnels included: the board's cards
	}
	if c.Tokens > 0 {
		parts = append(parts, countOf(c.Tokens, "API token")+" limited to it")
	}
	if c.Webhooks > 0 {
		parts = append(parts, countOf(c.Webhooks, "webhook"))
	}
	if c.Hooks > 0 {
		parts = append(parts, countOf(c.Hooks, "inbound hook"))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// countOf is "1,204 events", "1 event".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(n) + " " + noun + "s"
}

// confirmDelete says what a deletion takes with it before anything is deleted; msg is
// the problem of a confirmation refused.
func (s *Server) confirmDelete(w http.ResponseWriter, r *http.Request, status int, msg string) error {
	project, channel := r.PathValue("project"), r.PathValue("channel")
	c, err := s.countDeletion(r, project, channel)
	if err != nil {
		return err
	}
	d := deleteData{Project: project, Channel: channel, Name: project, Events: c.Events, Back: projectPath(project),
		Action: projectPath(project) + "/delete"}
	title := "Delete project " + project
	if channel != "" {
		d.Name, d.Action = channel, projectPath(project)+"/channels/"+url.PathEscape(channel)+"/delete"
		title = "Delete #" + channel
	}
	d.What = c.sentence(channel == "")
	d.Pattern = regexp.QuoteMeta(d.Name)
	return s.render(w, r, "delete", &view{Title: title + " · Projects", Section: "settings", Status: status, Error: msg, Data: d})
}

// confirmed reports whether the form's typed name is the one to delete; if not, the
// page asks again.
func confirmed(r *http.Request, name string) bool {
	return strings.TrimSpace(r.PostFormValue("confirm")) == name
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	// Asked first of the store, so that another account's project is not there at all.
	if _, err := s.store.FindProject(r.Context(), sessionFrom(r).account.ID, project); err != nil {
		return err
	}
	if !confirmed(r, project) {
		return s.confirmDelete(w, r, http.StatusBadRequest, "Type the project’s name, "+project+", to confirm: nothing was deleted.")
	}
	if err := s.store.DeleteProject(r.Context(), sessionFrom(r).account.ID, project); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/projects", "Project "+project+" deleted, with its channels, events and insights.")
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request) error {
	project, channel := r.PathValue("project"), r.PathValue("channel")
	if _, err := s.store.CountEvents(r.Context(), sessionFrom(r).account.ID, project, channel); err != nil {
		return err // not there: EProjectNotFound or EChannelNotFound
	}
	if !confirmed(r, channel) {
		return s.confirmDelete(w, r, http.StatusBadRequest, "Type the channel’s name, "+channel+", to confirm: nothing was deleted.")
	}
	if err := s.store.DeleteChannel(r.Context(), sessionFrom(r).account.ID, project, channel); err != nil {
		return err
	}
	return s.notice(w, r, projectPath(project), "Channel #"+channel+" deleted, with its events.")
}
