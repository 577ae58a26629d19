package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

type personRow struct {
	*tidings.Person
	Who   person
	URL   string
	Chips []string // "key: value"
}

type usersData struct {
	Users  []personRow
	Query  string // the filter box as typed
	Sort   string // the order: "" (last seen), events or first_seen
	Sorts  []choice
	Error  string // why the filter or the order was refused
	Older  string // URL of the next page
	Filter bool
}

// userSorts are the users page's orders, each newest or largest first.
var userSorts = []choice{{tidings.PersonSortLastSeen, "Last seen"}, {tidings.PersonSortEvents, "Events"}, {tidings.PersonSortFirstSeen, "First seen"}}

func propertyChips(props tidings.Tags) []string {
	var out []string
	for _, t := range props {
		out = append(out, t.Key+": "+t.Value)
	}
	return out
}

// usersPage lists a project's users, most recently seen first or in the order of
// sort=events|first_seen; the box filters them by properties (key:value words) and
// the start of their ID.
func (s *Server) usersPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	v := r.URL.Query()
	d := usersData{Query: strings.TrimSpace(v.Get("q")), Sort: v.Get("sort"), Sorts: userSorts}
	status := http.StatusOK
	if d.Sort == tidings.PersonSortLastSeen {
		d.Sort = ""
	}
	if tidings.CheckPersonSort(d.Sort) != nil {
		d.Error = "Unknown order “" + cut(d.Sort, 40) + "”: sort users by last seen, events or first seen."
		d.Sort, status = "", http.StatusBadRequest
	}
	q := tidings.PersonQuery{Project: project, Sort: d.Sort, Before: v.Get("before"), Limit: 50}
	if err := tidings.ParsePersonSearch(&q, d.Query); err != nil && d.Error == "" {
		d.Error = tidings.ErrorMessage(err)
	}
	d.Filter = len(q.Properties) > 0 || q.IDPrefix != ""
	if d.Error == "" {
		page, err := s.store.ListPeople(r.Context(), sessionFrom(r).account.ID, q)
		if tidings.ErrorCode(err) == tidings.EValidation { // a stale cursor: start again
			return redirect(w, r, usersURL(project, d.Query, d.Sort, ""))
		}
		if err != nil {
			return err
		}
		page.TrimPeople()
		for _, u := range page.People {
			d.Users = append(d.Users, personRow{Person: u, Who: personOf(u.UserID, u.Properties), URL: userURL(project, u.UserID), Chips: propertyChips(u.Properties)})
		}
		if page.Next != "" {
			d.Older = usersURL(project, d.Query, d.Sort, page.Next)
		}
	} else if _, err := s.store.FindProject(r.Context(), sessionFrom(r).account.ID, project); err != nil {
		return err
	}
	return s.render(w, r, "users", &view{Title: project + " users", Project: project, Section: "users", Status: status, Data: d})
}

// usersURL is the users page with a filter, an order and a cursor, each left out when empty.
func usersURL(project, q, sort, before string) string {
	p := url.Values{}
	if q != "" {
		p.Set("q", q)
	}
	if sort != "" {
		p.Set("sort", sort)
	}
	if before != "" {
		p.Set("before", before)
	}
	u := "/p/" + project + "/users"
	if len(p) > 0 {
		u += "?" + p.Encode()
	}
	return u
}

// journey is a page of events, newest first, by day, with the live stream of
// new ones on the first page: a user's events, or a tag's.
type journey struct {
	Cards  []eventView   // newest first; the page heads each day in the viewer's time zone
	Items  []journeyItem // the cards, and on a profile the page views folded between them
	Older  string        // URL of the next page
	Stream string        // the live stream of new events, on the first page
}

// readJourney reads a page of q's events (q.Before from the request) into days;
// pageURL is the journey's own address, stream its live filter's parameters.
func (s *Server) readJourney(r *http.Request, q tidings.EventQuery, pageURL string, stream url.Values) (*journey, error) {
	q.Before, q.Limit = r.URL.Query().Get("before"), 50
	page, err := s.store.ListEvents(r.Context(), sessionFrom(r).account.ID, q)
	if err != nil {
		return nil, err
	}
	j := &journey{}
	base := feedURL(q.Project, "")
	for _, ev := range page.Events {
		c := s.eventView(ev, base, url.Values{})
		c.ThreadID, c.Back = "", pageURL // a journey shows every version; its buttons return to it
		j.Cards = append(j.Cards, c)
		j.Items = append(j.Items, journeyItem{Card: j.Cards[len(j.Cards)-1]})
	}
	sep := "?"
	if strings.Contains(pageURL, "?") {
		sep = "&"
	}
	if page.Next != "" {
		j.Older = pageURL + sep + "before=" + url.QueryEscape(page.Next)
	}
	if q.Before == "" {
		// Live from a moment before the page was read, as the feed.
		stream.Set("last", tidings.EventIDFloor(s.now().Add(-2*time.Second)))
		j.Stream = "/p/" + q.Project + "/stream?" + stream.Encode()
	}
	return j, nil
}

type tagJourneyData struct {
	Key, Value string
	FeedURL    string
	*journey
}

// tagJourneyPage is the journey of a tag value — an order, a ticket: every event
// with the tag, across channels, by day, live. GET /p/{project}/journey?tag=key:value.
func (s *Server) tagJourneyPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	key, value, ok := strings.Cut(r.URL.Query().Get("tag"), ":")
	if !ok || !tidings.ValidName(key) {
		var p tidings.Problems
		p.Add("tag", "format", "must be key:value with a key like order-id")
		return p.Err()
	}
	tag := url.Values{"tag": {key + ":" + value}}
	pageURL := "/p/" + project + "/journey?" + tag.Encode()
	j, err := s.readJourney(r, tidings.EventQuery{Project: project, Tags: []tidings.Tag{{Key: key, Value: value}}}, pageURL, tag)
	if tidings.ErrorCode(err) == tidings.EValidation {
		return redirect(w, r, pageURL)
	}
	if err != nil {
		return err
	}
	d := tagJourneyData{Key: key, Value: value, FeedURL: feedURL(project, "") + "?" + tag.Encode(), journey: j}
	return s.render(w, r, "journey", &view{Title: key + ": " + value + " · " + project, Project: project, Section: "feed", Data: d})
}

type groupRow struct {
	*tidings.Group
	URL   string
	Chips []string
}

type groupsData struct {
	Groups []groupRow
	Older  string
}

func groupURL(project, groupID string) string {
	return "/p/" + project + "/groups/" + url.PathEscape(groupID)
}

// groupsPage lists a project's groups, most recently seen first.
func (s *Server) groupsPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	page, err := s.store.ListGroups(r.Context(), sessionFrom(r).account.ID, project, r.URL.Query().Get("before"), 50)
	if tidings.ErrorCode(err) == tidings.EValidation {
		return redirect(w, r, "/p/"+project+"/groups")
	}
	if err != nil {
		return err
	}
	page.TrimGroups()
	var d groupsData
	for _, g := range page.Groups {
		d.Groups = append(d.Groups, groupRow{Group: g, URL: groupURL(project, g.GroupID), Chips: propertyChips(g.Properties)})
	}
	if page.Next != "" {
		d.Older = "/p/" + project + "/groups?before=" + url.QueryEscape(page.Next)
	}
	return s.render(w, r, "groups", &view{Title: project + " groups", Project: project, Section: "users", Data: d})
}

type memberLink struct{ ID, URL string }

type groupData struct {
	*tidings.Group
	Chips     []string
	Members   []memberLink
	JourneyOf int // how many members' events the journey shows
	*journey
}

// groupPage shows one group: its properties, its members, each linking to its
// journey, and the group's journey — its members' events, by day, live.
func (s *Server) groupPage(w http.ResponseWriter, r *http.Request) error {
	project, groupID := r.PathValue("project"), r.PathValue("group_id")
	g, err := s.store.FindGroup(r.Context(), sessionFrom(r).account.ID, project, groupID)
	if err != nil {
		return err
	}
	d := groupData{Group: g, Chips: propertyChips(g.Properties), journey: &journey{}}
	for _, id := range g.MemberIDs {
		d.Members = append(d.Members, memberLink{id, userURL(project, id)})
	}
	if len(g.MemberIDs) > 0 {
		d.JourneyOf = len(journeyMembers(g))
		pageURL := groupURL(project, groupID)
		d.journey, err = s.readJourney(r, tidings.EventQuery{Project: project, Users: journeyMembers(g)}, pageURL, url.Values{"group": {groupID}})
		if tidings.ErrorCode(err) == tidings.EValidation {
			return redirect(w, r, pageURL)
		}
		if err != nil {
			return err
		}
	}
	return s.render(w, r, "group", &view{Title: g.GroupID + " · " + project, Project: project, Section: "users", Data: d})
}

// journeyMembers are the members whose events a group's journey shows: its most
// recently seen ones, as many as one query may name.
func journeyMembers(g *tidings.Group) []string {
	return g.MemberIDs[:min(len(g.MemberIDs), tidings.MaxQueryUsers)]
}
