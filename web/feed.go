package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// eventView is an event as a card shows it.
type eventView struct {
	*tidings.Event
	Description any // safe HTML
	URL         string
	ChannelURL  string
	Chips       []chip
	Time        time.Time
}

type chip struct {
	Label, URL string
}

type feedData struct {
	Events    []eventView
	Query     string // the search box as typed
	Older     string // URL of the next page, "" on the last
	Stream    string // URL of the live stream, "" when not live (an older page)
	Filtered  bool
	ClearURL  string
	FeedURL   string
	Empty     bool
	Channels  []string
	Published bool // the project has any event at all
}

// feedURL is the address of a project's feed or one channel's.
func feedURL(project, channel string) string {
	if channel == "" {
		return "/p/" + project
	}
	return "/p/" + project + "/c/" + channel
}

// parseSearch reads the search box: key:value words are tag filters, the rest is text.
// Chips add tag=key:value parameters, which are read too.
func parseSearch(v url.Values) (tags []tidings.Tag, text string) {
	var words []string
	for _, w := range strings.Fields(v.Get("q")) {
		if k, val, ok := strings.Cut(w, ":"); ok && tidings.ValidName(k) && val != "" {
			tags = append(tags, tidings.Tag{Key: k, Value: val})
			continue
		}
		words = append(words, w)
	}
	for _, t := range v["tag"] {
		if k, val, ok := strings.Cut(t, ":"); ok && tidings.ValidName(k) {
			tags = append(tags, tidings.Tag{Key: k, Value: val})
		}
	}
	return tags, strings.Join(words, " ")
}

// withQuery appends key/value pairs to base.
func withQuery(base string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Add(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return base
	}
	return base + "?" + v.Encode()
}

// feedQuery is the filter of a feed request, as store query and as URL parameters.
func feedQuery(r *http.Request) (tidings.EventQuery, url.Values) {
	v := r.URL.Query()
	tags, text := parseSearch(v)
	q := tidings.EventQuery{Project: r.PathValue("project"), Channel: r.PathValue("channel"), Tags: tags, Text: text, Limit: 50}
	params := url.Values{}
	for _, t := range tags {
		params.Add("tag", t.Key+":"+t.Value)
	}
	if text != "" {
		params.Set("q", text)
	}
	return q, params
}

func (s *Server) eventView(ev *tidings.Event, base string, params url.Values) eventView {
	v := eventView{Event: ev, Description: renderDescription(ev), Time: ev.Timestamp,
		URL: "/p/" + ev.Project + "/events/" + ev.ID, ChannelURL: feedURL(ev.Project, ev.Channel)}
	for _, t := range ev.Tags {
		p := url.Values{}
		for k, vs := range params {
			p[k] = append([]string(nil), vs...)
		}
		p.Add("tag", t.Key+":"+t.Value)
		v.Chips = append(v.Chips, chip{Label: t.Key + ": " + t.Value, URL: base + "?" + p.Encode()})
	}
	return v
}

func (s *Server) feed(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	q, params := feedQuery(r)
	q.Before = r.URL.Query().Get("before")
	page, err := s.store.ListEvents(r.Context(), sess.account.ID, q)
	if tidings.ErrorCode(err) == tidings.EValidation { // a stale cursor: start again
		return redirect(w, r, feedURL(q.Project, q.Channel))
	}
	if err != nil {
		return err
	}
	base := feedURL(q.Project, q.Channel)
	d := feedData{FeedURL: base, Filtered: len(params) > 0, ClearURL: base, Empty: len(page.Events) == 0}
	d.Query = r.URL.Query().Get("q")
	for _, t := range q.Tags {
		if !strings.Contains(d.Query, t.Key+":"+t.Value) {
			d.Query = strings.TrimSpace(d.Query + " " + t.Key + ":" + t.Value)
		}
	}
	for _, ev := range page.Events {
		d.Events = append(d.Events, s.eventView(ev, base, params))
	}
	if page.Next != "" {
		p := url.Values{}
		for k, vs := range params {
			p[k] = vs
		}
		p.Set("before", page.Next)
		d.Older = base + "?" + p.Encode()
	}
	if q.Before == "" {
		// Live from the newest event shown on: what arrives between this page and the
		// stream's start is caught up by the stream.
		last := "0"
		if len(page.Events) > 0 {
			last = newestID(page.Events)
		}
		p := url.Values{}
		for k, vs := range params {
			p[k] = vs
		}
		if q.Channel != "" {
			p.Set("channel", q.Channel)
		}
		p.Set("last", last)
		d.Stream = "/p/" + q.Project + "/stream?" + p.Encode()
	}
	title := q.Project
	if q.Channel != "" {
		title += " #" + q.Channel
	}
	return s.render(w, r, "feed", &view{Title: title, Project: q.Project, Channel: q.Channel, Section: "feed", Data: d})
}

// newestID is the largest ID of a page: IDs follow acceptance order, the page follows time.
func newestID(evs []*tidings.Event) string {
	max := ""
	for _, ev := range evs {
		if ev.ID > max {
			max = ev.ID
		}
	}
	return max
}

func (s *Server) eventPage(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	ev, err := s.store.FindEvent(r.Context(), sess.account.ID, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		return err
	}
	v := s.eventView(ev, feedURL(ev.Project, ""), url.Values{})
	return s.render(w, r, "event", &view{Title: ev.Event, Project: ev.Project, Channel: ev.Channel, Section: "feed", Data: v})
}
