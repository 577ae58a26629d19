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
// by properties (key:value words).
func (s *Server) usersPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	v := r.URL.Query()
	d := usersData{Query: strings.TrimSpace(v.Get("q"))}
	q := tidings.PersonQuery{Project: project, Before: v.Get("before"), Limit: 50}
	for _, word := range strings.Fields(d.Query) {
		k, val, ok := strings.Cut(word, ":")
		if !ok || !tidings.ValidName(k) {
			d.Error = "Filter users by property, like plan:pro (" + word + " is not key:value)."
			continue
		}
		q.Properties = append(q.Properties, tidings.Tag{Key: k, Value: val})
	}
	d.Filter = len(q.Properties) > 0
	if d.Error == "" {
		page, err := s.store.ListPeople(r.Context(), sessionFrom(r).account.ID, q)
		if tidings.ErrorCode(err) == tidings.EValidation { // a stale cursor: start again
			return redirect(w, r, "/p/"+project+"/users")
		}
		if err != nil {
			return err
		}
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

type journeyDay struct {
	Day    string // "Monday, 23 November 2026"
	Events []eventView
}

type userData struct {
	*tidings.Person
	Chips      []string
	GroupLinks []memberLink
	Days       []journeyDay
	Older      string
	Stream     string // the live stream of its new events, on the first page
}

// userPage shows one user: its properties, groups and journey — its events across
// channels, newest first, by day.
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
	page, err := s.store.ListEvents(r.Context(), account, tidings.EventQuery{Project: project, UserID: userID,
		Before: r.URL.Query().Get("before"), Limit: 50})
	if tidings.ErrorCode(err) == tidings.EValidation {
		return redirect(w, r, userURL(project, userID))
	}
	if err != nil {
		return err
	}
	if u.FirstSeen.IsZero() && len(page.Events) == 0 && r.URL.Query().Get("before") == "" { // named by nothing
		return tidings.Errorf(tidings.ENotFound, "no user %q in project %q", userID, project)
	}
	d := userData{Person: u, Chips: propertyChips(u.Properties)}
	for _, g := range u.Groups {
		d.GroupLinks = append(d.GroupLinks, memberLink{g, groupURL(project, g)})
	}
	base := feedURL(project, "")
	for _, ev := range page.Events {
		day := ev.Timestamp.UTC().Format("Monday, 2 January 2006")
		if len(d.Days) == 0 || d.Days[len(d.Days)-1].Day != day {
			d.Days = append(d.Days, journeyDay{Day: day})
		}
		last := &d.Days[len(d.Days)-1]
		last.Events = append(last.Events, s.eventView(ev, base, url.Values{}))
	}
	if page.Next != "" {
		d.Older = userURL(project, userID) + "?before=" + url.QueryEscape(page.Next)
	}
	if r.URL.Query().Get("before") == "" {
		// Live from a moment before the page was read, as the feed.
		d.Stream = "/p/" + project + "/stream?" + url.Values{"user": {userID},
			"last": {tidings.EventIDFloor(s.now().Add(-2 * time.Second))}}.Encode()
	}
	return s.render(w, r, "user", &view{Title: userID + " · " + project, Project: project, Section: "users", Data: d})
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
	Chips   []string
	Members []memberLink
}

// groupPage shows one group: its properties and members, each linking to its journey.
func (s *Server) groupPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	g, err := s.store.FindGroup(r.Context(), sessionFrom(r).account.ID, project, r.PathValue("group_id"))
	if err != nil {
		return err
	}
	d := groupData{Group: g, Chips: propertyChips(g.Properties)}
	for _, id := range g.MemberIDs {
		d.Members = append(d.Members, memberLink{id, userURL(project, id)})
	}
	return s.render(w, r, "group", &view{Title: g.GroupID + " · " + project, Project: project, Section: "users", Data: d})
}
