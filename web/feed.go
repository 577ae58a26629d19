package web

import (
	"cmp"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/export"
)

// eventView is an event as a card shows it.
type eventView struct {
	*tidings.Event
	Description any // safe HTML
	URL         string
	ChannelURL  string
	UserURL     string // the journey of its user_id, "" without one
	InChannel   bool   // the card is in its channel's own feed, which names the channel once
	Chips       []chip
	Time        time.Time
	intentView
}

// userURL is the page of one of a project's users: its properties and journey.
func userURL(project, userID string) string {
	return "/p/" + project + "/users/" + url.PathEscape(userID)
}

type chip struct {
	Label, URL string
	Journey    string // the tag's journey page
}

type feedData struct {
	Events []eventView
	Query  string // the search box as typed, with the tag chips clicked
	// SearchError says why the search box's query was refused.
	SearchError string
	// ExportCSV and ExportNDJSON download what the page shows, every page of it.
	ExportCSV, ExportNDJSON string
	// Journey is the journey page of the one tag the feed is filtered by, if so.
	Journey, JourneyTag string
	Older               string // URL of the next page, "" on the last
	Stream              string // URL of the live stream, "" when not live (an older page)
	Filtered            bool
	ClearURL            string
	FeedURL             string
	Empty               bool
	Partial             bool   // a search page cut short by its work budget
	Example             string // an empty feed's first command: a curl that publishes to it
	ChartThis           string // the chart of this search: its form, filled in, with a preview
}

// eventURL is the address of an event's page.
func eventURL(ev *tidings.Event) string { return "/p/" + ev.Project + "/events/" + ev.ID }

// feedURL is the address of a project's feed or one channel's.
func feedURL(project, channel string) string {
	if channel == "" {
		return "/p/" + project
	}
	return "/p/" + project + "/c/" + channel
}

// searchBox is what the search box shows: the query as typed, then each tag chip
// clicked as key:value (quoted when it holds a space or a quote).
func searchBox(v url.Values) string {
	box := strings.TrimSpace(v.Get("q"))
	for _, t := range v["tag"] {
		k, val, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		if strings.ContainsAny(val, " \t\"") || val == "" {
			val = `"` + strings.ReplaceAll(val, `"`, "") + `"`
		}
		if w := k + ":" + val; !strings.Contains(box, w) {
			box = strings.TrimSpace(box + " " + w)
		}
	}
	return box
}

// clone copies URL parameters, so that one link's additions do not leak into another's.
func clone(v url.Values) url.Values {
	out := make(url.Values, len(v)+1)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// feedQuery is the filter of a feed request, as store query and as URL parameters:
// the search box (q, tidings.ParseSearch: words, key:value tags, since:) and the tag
// chips clicked (tag=key:value). A search that does not parse is returned as err.
func (s *Server) feedQuery(r *http.Request) (q tidings.EventQuery, params url.Values, err error) {
	v := r.URL.Query()
	// The page's channel: its path's, or the live stream's channel= (its page's).
	page := cmp.Or(r.PathValue("channel"), v.Get("channel"))
	q = tidings.EventQuery{Project: r.PathValue("project"), Channel: page, Limit: 50}
	params = url.Values{}
	search, err := tidings.ParseSearch(v.Get("q"), s.now())
	if raw := strings.TrimSpace(v.Get("q")); raw != "" {
		params.Set("q", raw)
	}
	for _, t := range v["tag"] {
		if k, val, ok := strings.Cut(t, ":"); ok && tidings.ValidName(k) {
			q.Tags = append(q.Tags, tidings.Tag{Key: k, Value: val})
			params.Add("tag", k+":"+val)
		}
	}
	if u := v.Get("user"); u != "" { // a user's journey
		q.Users = []string{u}
		params.Set("user", u)
	} else if g := v.Get("group"); g != "" { // a group's: its members' events
		group, gerr := s.store.FindGroup(r.Context(), sessionFrom(r).account.ID, q.Project, g)
		if gerr != nil {
			return q, params, gerr
		}
		if len(group.MemberIDs) == 0 {
			return q, params, tidings.Errorf(tidings.ENotFound, "The group “%s” has no members yet.", g)
		}
		q.Users = journeyMembers(group)
		params.Set("group", g)
	}
	if !q.AddSearch(search) && err == nil {
		// The search names another channel (or user) than the page's.
		var p tidings.Problems
		switch {
		case search.Channel != "" && search.Channel != page:
			p.Add("q", "channel", "this is #%s's feed, and the search asks for channel:%s: search from the project's feed, or remove channel:", page, search.Channel)
		default:
			p.Add("q", "user", "this journey is another user's than the search's user:%s: search from the project's feed, or remove user:", search.User)
		}
		err = p.Err()
	}
	return q, params, err
}

func (s *Server) eventView(ev *tidings.Event, base string, params url.Values) eventView {
	back := base
	if len(params) > 0 {
		back += "?" + params.Encode()
	}
	// Versions of a key fold in a feed without a search: a search shows each version.
	v := eventView{Event: ev, Description: s.renders.description(ev), Time: ev.Timestamp,
		URL: eventURL(ev), ChannelURL: feedURL(ev.Project, ev.Channel), intentView: intentOf(ev, back, len(params) == 0)}
	v.InChannel = strings.Contains(base, "/c/") && base == v.ChannelURL
	if ev.UserID != "" {
		v.UserURL = userURL(ev.Project, ev.UserID)
	}
	for _, t := range ev.Tags {
		p := clone(params)
		p.Add("tag", t.Key+":"+t.Value)
		v.Chips = append(v.Chips, chip{Label: t.Key + ": " + t.Value, URL: base + "?" + p.Encode(),
			Journey: "/p/" + ev.Project + "/journey?" + url.Values{"tag": {t.Key + ":" + t.Value}}.Encode()})
	}
	return v
}

func (s *Server) feed(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	q, params, searchErr := s.feedQuery(r)
	base := feedURL(q.Project, r.PathValue("channel")) // the page's, whatever the search's channel:
	d := feedData{FeedURL: base, Filtered: len(params) > 0, ClearURL: base, Query: searchBox(r.URL.Query())}
	if searchErr != nil {
		// The search box says what is wrong, and keeps what was typed to fix it.
		d.SearchError = tidings.ErrorMessage(searchErr)
		return s.render(w, r, "feed", &view{Title: q.Project, Project: q.Project, Channel: q.Channel, Section: "feed", Data: d})
	}
	d.ChartThis = chartThis(q.Project, q.Channel, d.Query, r.URL.Query().Get("user"))
	q.Before = r.URL.Query().Get("before")
	page, err := s.store.ListEvents(r.Context(), sess.account.ID, q)
	if tidings.ErrorCode(err) == tidings.EValidation { // a stale cursor: start again
		return redirect(w, r, feedURL(q.Project, q.Channel))
	}
	if err != nil {
		return err
	}
	d.Empty = len(page.Events) == 0
	if d.Empty && !d.Filtered && q.Before == "" {
		channel := q.Channel
		if channel == "" {
			channel = "general" // made by the first event when the project allows it
			if cs, err := s.store.PageChannels(r.Context(), sess.account.ID, tidings.ChannelQuery{Project: q.Project, Limit: 1}); err == nil && len(cs.Channels) > 0 {
				channel = cs.Channels[0].Name
			}
		}
		d.Example = s.firstEventExample(r, q.Project, channel)
	}
	// A search page that its work budget ended before it was full (the store read as
	// many events as one page may): say so, and let the reader go on.
	d.Partial = len(q.Terms) > 0 && page.Next != "" && len(page.Events) < q.Limit
	if len(q.Tags) == 1 && len(q.Terms) == 0 && len(q.Users) == 0 {
		t := q.Tags[0]
		d.JourneyTag = t.Key + ": " + t.Value
		d.Journey = "/p/" + q.Project + "/journey?" + url.Values{"tag": {t.Key + ":" + t.Value}}.Encode()
	}
	for _, f := range []struct {
		format string
		url    *string
	}{{export.CSV, &d.ExportCSV}, {export.NDJSON, &d.ExportNDJSON}} {
		p := clone(params)
		p.Set("format", f.format)
		*f.url = base + "/export?" + p.Encode()
	}
	folder := &threadFolder{s: s, account: sess.account.ID, project: q.Project, seen: map[tidings.Thread]bool{}}
	for _, ev := range page.Events {
		v := s.eventView(ev, base, params)
		if v.ThreadID != "" {
			shown, err := folder.fold(r.Context(), &v)
			if err != nil {
				return err
			}
			if !shown {
				continue
			}
		}
		d.Events = append(d.Events, v)
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
	d.ThreadID, d.Back = "", eventURL(ev)
	if err := s.eventIntent(r, &d); err != nil {
		return err
	}
	if ev.Notify {
		if d.Pushed, err = s.pushSummary(r, ev); err != nil {
			return err
		}
		if ev.ShouldPush(ev.CreatedAt) {
			records, err := s.store.EventPushes(r.Context(), sess.account.ID, ev.ID)
			if err != nil {
				return err
			}
			if d.Who, err = s.whoNotified(r, ev, records); err != nil {
				return err
			}
		}
	}
	if d.Deliveries, err = s.eventDeliveries(r, ev); err != nil {
		return err
	}
	return s.render(w, r, "event", &view{Title: ev.Event, Project: ev.Project, Channel: ev.Channel, Section: "feed", Data: d})
}

type eventPageData struct {
	eventView
	Pushed     string       // what became of its push notification, for people
	Who        []memberLine // who was notified, by which route, and why not
	Deliveries []eventDelivery
	Presses    []*tidings.ActionPress
	// Others are the other versions of its key, newest first (Latest: this is the
	// newest); VersionCount how many there are in all.
	Others       []versionView
	Latest       bool
	VersionCount int
}

// eventDelivery is one webhook's attempts at sending the event.
type eventDelivery struct {
	Webhook  string // its name, or its host
	Attempts []*tidings.WebhookAttempt
}

// eventDeliveries lists what the webhooks of the event's project did with it, from the
// attempts each webhook keeps (its latest 20).
func (s *Server) eventDeliveries(r *http.Request, ev *tidings.Event) ([]eventDelivery, error) {
	account := sessionFrom(r).account.ID
	hooks, err := s.store.ListWebhooks(r.Context(), account)
	if err != nil {
		return nil, err
	}
	var out []eventDelivery
	for _, h := range hooks {
		if h.Project != ev.Project || h.Channel != "" && h.Channel != ev.Channel {
			continue
		}
		attempts, err := s.store.ListWebhookAttempts(r.Context(), account, h.ID)
		if err != nil {
			return nil, err
		}
		d := eventDelivery{Webhook: h.Name}
		if d.Webhook == "" {
			d.Webhook = hostOf(h.URL)
		}
		for _, a := range attempts {
			if a.EventID == ev.ID {
				d.Attempts = append(d.Attempts, a)
			}
		}
		if len(d.Attempts) > 0 {
			out = append(out, d)
		}
	}
	return out, nil
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
		subs, err := s.store.AccountPushSubscriptions(r.Context(), sessionFrom(r).account.ID)
		if err != nil {
			return "", err
		}
		if len(subs) == 0 {
			return "Not pushed: nobody in the team has enabled notifications on a device yet (Settings → Devices).", nil
		}
		return "Not pushed yet: it is waiting to be delivered.", nil
	}
	count, mailed := map[string]int{}, 0
	for _, rec := range records {
		if _, isMail := tidings.MailTargetUser(rec.SubscriptionID); isMail {
			if rec.Status == tidings.PushSent {
				mailed++
			}
			continue // a member's mail, not a device: the lines of who was notified say more
		}
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
		{tidings.PushNotRecipient, "not a recipient"},
	} {
		if n := count[st.status]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+st.words)
		}
	}
	if mailed > 0 {
		parts = append(parts, "mailed to "+plural(mailed, "member"))
	}
	return strings.Join(parts, "; ") + ".", nil
}

// deleteEvent deletes one event and goes back to its channel's feed.
func (s *Server) deleteEvent(w http.ResponseWriter, r *http.Request) error {
	account := sessionFrom(r).account.ID
	ev, err := s.store.FindEvent(r.Context(), account, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.store.DeleteEvent(r.Context(), account, ev.Project, ev.ID); err != nil {
		return err
	}
	return redirect(w, r, feedURL(ev.Project, ev.Channel))
}

// export downloads the feed as it is filtered, as CSV or NDJSON, streamed.
func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	q, _, err := s.feedQuery(r)
	if err != nil {
		return err
	}
	format, err := export.CheckFormat(r.URL.Query().Get("format"))
	if err != nil {
		return err
	}
	account := sessionFrom(r).account.ID
	return export.Serve(w, r, s.store, account, q, format, s.log)
}
