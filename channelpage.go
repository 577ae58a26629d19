package tidings

import "context"

// MaxChannelPage bounds a page of a project's channels.
const MaxChannelPage = 100

// ChannelQuery asks for one page of a project's channels, by name.
type ChannelQuery struct {
	Project string
	Search  string // only names that contain it; "" for all
	After   string // the Next of the page before; "" asks for the first page
	Limit   int    // 1 to MaxChannelPage
}

// ChannelPage is one page of channels. Next is "" on the last page; Total counts the
// channels the search matches, on every page.
type ChannelPage struct {
	Channels []*Channel
	Next     string
	Total    int
}

// ChannelPager pages through a project's channels.
type ChannelPager interface {
	// PageChannels returns up to q.Limit channels named after q.After, by name.
	// Errors: EProjectNotFound.
	PageChannels(ctx context.Context, accountID int64, q ChannelQuery) (*ChannelPage, error)
}

// NewChannelPage makes a page of up to q.Limit+1 channels read after the cursor: the
// one past the limit only says there is a next page.
func NewChannelPage(q ChannelQuery, list []*Channel, total int) *ChannelPage {
	page := &ChannelPage{Channels: list, Total: total}
	if len(list) > q.Limit {
		page.Channels = list[:q.Limit]
		page.Next = page.Channels[q.Limit-1].Name
	}
	return page
}
