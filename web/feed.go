package web

import (
	"net/http"
	"net/url"
	"strconv"
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

// clone copies URL parameters, so that one link's additions do not leak into another's.
func clone(v url.Values) url.Values {
	out := make(url.Values, len(v)+1)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
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
	v := eventView{Event: ev, Description: s.renders.description(ev), Time: ev.Timestamp,
		URL: "/p/" + ev.Project + "/events/" + ev.ID, ChannelURL: feedURL(ev.Project, ev.Channel)}
	for _, t := range ev.Tags {
		p := clone(params)
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
		p := clone(params)
		p.Set("before", page.Next)
		d.Older = base + "?" + p.Encode()
	}
	if q.Before == "" {
		// Live from a moment before this page was read on: what arrives before the
		// stream starts is caught up by it; the few events sent twice the browser
		// recognises by their element id.
		p := clone(params)
		if q.Channel != "" {
			p.Set("channel", q.Channel)
		}
		p.Set("last", tidings.EventIDFloor(s.now().Add(-2*time.Second)))
		d.Stream = "/p/" + q.Project + "/stream?" + p.Encode()
	}
	title := q.Project
	if q.Channel != "" {
		title += " #" + q.Channel
	}
	return s.render(w, r, "feed", &view{Title: title, Project: q.Project, Channel: q.Channel, Section: "feed", Data: d})
}

func (s *Server) eventPage(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	ev, err := s.store.FindEvent(r.Context(), sess.account.ID, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		return err
	}
	d := eventPageData{eventView: s.eventView(ev, feedURL(ev.Project, ""), url.Values{})}
	if ev.Notify {
		if d.Pushed, err = s.pushSummary(r, ev); err != nil {
			return err
		}
	}
	return s.render(w, r, "event", &view{Title: ev.Event, Project: ev.Project, Channel: ev.Channel, Section: "feed", Data: d})
}

type eventPageData struct {
	eventView
	Pushed string // what became of its push notification, for people
}

// pushSummary says what became of a notify event's push notifications: "Pushed to 2
// devices; 1 muted", or why none was sent.
func (s *Server) pushSummary(r *http.Request, ev *tidings.Event) (string, error) {
	if !ev.ShouldPush(ev.CreatedAt) {
		return "Not pushed: the event happened more than an hour before it was sent (a backfill wakes nobody).", nil
	}
	records, err := s.store.EventPushes(r.Context(), sessionFrom(r).account.ID, ev.ID)
	if err != nil {
		return "", err
	}
	if len(records) == 0 {
		return "Not pushed yet, or nobody in the team has enabled notifications (Settings → Devices).", nil
	}
	count := map[string]int{}
	for _, rec := range records {
		count[rec.Status]++
	}
	devices := func(n int) string {
		if n == 1 {
			return "1 device"
		}
		return strconv.Itoa(n) + " devices"
	}
	parts := []string{"Pushed to " + devices(count[tidings.PushSent])}
	for _, st := range []struct{ status, words string }{
		{tidings.PushPending, "being delivered"}, {tidings.PushMuted, "muted"}, {tidings.PushQuiet, "in quiet hours"},
		{tidings.PushCollapsed, "collapsed into a summary (flood limit)"}, {tidings.PushFailed, "failed"}, {tidings.PushGone, "unsubscribed"},
	} {
		if n := count[st.status]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+st.words)
		}
	}
	return strings.Join(parts, "; ") + ".", nil
}
