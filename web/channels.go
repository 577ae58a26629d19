package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tidings-dev/tidings"
)

// channelsPerPage is a page of the channel list: every channel of a project is found
// here, a page at a time, while the sidebar names only the first sidebarChannels.
const channelsPerPage = 100

type channelsData struct {
	Query    string
	Channels []*tidings.Channel
	Total    int    // channels the search matches
	All      int    // channels of the project
	More     string // the next page's URL
	Max      int
}

// channelsPage lists a project's channels by name: /p/{project}/channels?q=…&after=….
func (s *Server) channelsPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	v := r.URL.Query()
	d := channelsData{Query: strings.TrimSpace(v.Get("q")), Max: tidings.MaxChannelsPerProject}
	id := sessionFrom(r).account.ID
	page, err := s.store.PageChannels(r.Context(), id, tidings.ChannelQuery{Project: project, Search: d.Query,
		After: v.Get("after"), Limit: channelsPerPage})
	if err != nil {
		return err
	}
	d.Channels, d.Total, d.All = page.Channels, page.Total, page.Total
	if d.Query != "" {
		all, err := s.store.PageChannels(r.Context(), id, tidings.ChannelQuery{Project: project, Limit: 1})
		if err != nil {
			return err
		}
		d.All = all.Total
	}
	if page.Next != "" {
		q := url.Values{"after": {page.Next}}
		if d.Query != "" {
			q.Set("q", d.Query)
		}
		d.More = "/p/" + project + "/channels?" + q.Encode()
	}
	return s.render(w, r, "channels", &view{Title: project + " channels", Project: project, Section: "channels", Data: d})
}
