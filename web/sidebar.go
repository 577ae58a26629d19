package web

import (
	"net/http"
	"slices"

	"github.com/tidings-dev/tidings"
)

// sidebarChannels is how many channels of each project the sidebar names (by name);
// a link leads to the others. A project may hold MaxChannelsPerProject: naming them
// all made every page of the dashboard, another project's too, grow with them.
const sidebarChannels = 20

type sidebarProject struct {
	Name     string
	Channels []string
	More     int // channels not named
}

func (s *Server) loadSidebar(r *http.Request, v *view) error {
	ps, err := s.store.ListProjects(r.Context(), v.Account.ID)
	if err != nil {
		return err
	}
	for _, p := range ps {
		page, err := s.store.PageChannels(r.Context(), v.Account.ID, tidings.ChannelQuery{Project: p.Name, Limit: sidebarChannels})
		if err != nil {
			return err
		}
		sp := &sidebarProject{Name: p.Name}
		for _, c := range page.Channels {
			sp.Channels = append(sp.Channels, c.Name)
		}
		sp.More = page.Total - len(sp.Channels)
		// The channel on screen is named even when it is not among the first.
		if v.Project == p.Name && v.Channel != "" && sp.More > 0 && !slices.Contains(sp.Channels, v.Channel) {
			sp.Channels = append(sp.Channels, v.Channel)
			sp.More--
		}
		v.Projects = append(v.Projects, sp)
	}
	return nil
}
