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
	URL   string
	Chips []string // "key: value"
}

type usersData struct {
	Users  []personRow
	Query  string // the filter box as typed
	Error  string // why the filter was refused
	Older  string // URL of the next page
	Filter bool
}

func propertyChips(props tidings.Tags) []string {
	var out []string
	for _, t := range props {
		out = append(out, t.Key+": "+t.Value)
	}
	return out
}

// usersPage lists a project's users, most recently seen first; the box filters them
// by properties (key:value words) and the start of their ID.
func (s *Server) usersPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	v := r.URL.Query()
	d := usersData{Query: strings.TrimSpace(v.Get("q"))}
	q := tidings.PersonQuery{Project: project, Before: v.Get("before"), Limit: 50}
	if err := tidings.ParsePersonSearch(&q, d.Query); err != nil {
		d.Error = tidings.ErrorMessage(err)
	}
	d.Filter = len(q.Properties) > 0 || q.IDPrefix != ""
	if d.Error == "" {
		page, err := s.store.ListPeople(r.Context(), sessionFrom(r).account.ID, q)
		if tidings.ErrorCode(err) == tidings.EValidation { // a stale cursor: start again
			return redirect(w, r, "/p/"+project+"/users")
		}
		if err != nil {
			return err
		}
		page.TrimPeople()
		for _, u := range page.People {
			d.Users = append(d.Users, personRow{Person: u, URL: userURL(project, u.UserID), Chips: propertyChips(u.Properties)})
		}
		if page.Next != "" {
			p := url.Values{"before": {page.Next}}
			if d.Query != "" {
				p.Set("q", d.Query)
			}
			d.Older = "/p/" + project + "/users?" + p.Encode()
		}
	} else if _, err := s.store.FindProject(r.Context(), sessionFrom(r).account.ID, project); err != nil {
		return err
	}
	return s.render(w, r, "users", &view{Title: project + " users", Project: project, Section: "users", Data: d})
}

// journey is a page of events, newest first, by day, with the live stream of
// new ones on the first page: a user's events, or a tag's.
type journey struct {
	Cards  []eventView // newest first; the page heads each day in the viewer's time zone
	Older  string      // URL of the next page
	Stream string      // the live stream of new events, on the first page
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
		j.Cards = append(j.Cards, s.eventView(ev, base, url.Values{}))
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

type userData struct {
	*tidings.Person
	Chips      []string
	GroupLinks []memberLink
	*journey
}

// userPage shows one user: its properties, groups and journey — its events across
// channels, newest first, by day, live.
func (s *Server) userPage(w http.ResponseWriter, r *http.Request) error {
	project, userID := r.PathValue("project"), r.PathValue("user_id")
	account := sessionFrom(r).account.ID
	u, err := s.store.FindPerson(r.Context(), account, project, userID)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		// Events stored before users were kept name users with no row: their journey still exists.
		if _, perr := s.store.FindProject(r.Context(), account, project); perr != nil {
			return perr
		}
		u, err = &tidings.Person{Project: project, UserID: userID}, nil
	}
	if err != nil {
		return err
	}
	j, err := s.readJourney(r, tidings.EventQuery{Project: project, Users: []string{userID}}, userURL(project, userID), url.Values{"user": {userID}})
	if tidings.ErrorCode(err) == tidings.EValidation {
		return redirect(w, r, userURL(project, userID))
	}
	if err != nil {
		return err
	}
	if u.FirstSeen.IsZero() && len(j.Cards) == 0 && r.URL.Query().Get("before") == "" { // named by nothing
		return tidings.Errorf(tidings.ENotFound, "no user %q in project %q", userID, project)
	}
	d := userData{Person: u, Chips: propertyChips(u.Properties), journey: j}
	for _, g := range u.Groups {
		d.GroupLinks = append(d.GroupLinks, memberLink{g, groupURL(project, g)})
	}
	return s.render(w, r, "user", &view{Title: userID + " · " + project, Project: project, Section: "users", Data: d})
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
