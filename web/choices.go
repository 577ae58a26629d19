package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/tidings-dev/tidings"
)

// choiceChannels is how many channels of a project a form's list offers (by name). A
// project may hold MaxChannelsPerProject: a list of them all made Settings grow with
// every channel a public token's events created. The others are typed by name.
const choiceChannels = 100

// projectChoices returns the account's projects, each with the first choiceChannels
// channels and the count of the others.
func (s *Server) projectChoices(ctx context.Context, accountID int64) ([]projectRow, error) {
	ps, err := s.store.ListProjects(ctx, accountID)
	if err != nil {
		return nil, err
	}
	rows := make([]projectRow, 0, len(ps))
	for _, p := range ps {
		page, err := s.store.PageChannels(ctx, accountID, tidings.ChannelQuery{Project: p.Name, Limit: choiceChannels})
		if err != nil {
			return nil, err
		}
		rows = append(rows, projectRow{Project: p, Channels: page.Channels, MoreChannels: page.Total - len(page.Channels),
			AllChannels: page.Total})
	}
	return rows, nil
}

// formChannel is the channel a token or webhook form names: typed by name (for one not
// in the list), or chosen from the list.
func formChannel(r *http.Request) string {
	if typed := strings.TrimSpace(r.PostFormValue("channel_name")); typed != "" {
		return typed
	}
	return strings.TrimSpace(r.PostFormValue("channel"))
}
