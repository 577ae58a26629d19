package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tidings-dev/tidings"
)

// A user's profile: who they are (name and initials avatar from their properties),
// first and last seen, sessions, events and page views, their activity over the last
// ActivityDays days, their top pages, properties and groups, and their journey — events
// newest first, with the pages viewed between two events folded in between them.

type profileData struct {
	*tidings.Person
	Who        person
	Chips      []string
	GroupLinks []memberLink
	Sessions   int64
	Activity   drawnDaily
	TopPages   topTable
	*journey
}

// userPage is GET /p/{project}/users/{user_id}[?before=event id].
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
		return tidings.Errorf(tidings.ENotFound, "There is no user “%s” in the project “%s”.", userID, project)
	}
	d := profileData{Person: u, Who: personOf(userID, u.Properties), Chips: propertyChips(u.Properties), journey: j, Sessions: u.Sessions}
	for _, g := range u.Groups {
		d.GroupLinks = append(d.GroupLinks, memberLink{g, groupURL(project, g)})
	}
	days := utcDays(s.now(), tidings.ActivityDays)
	act, err := s.store.UserActivity(r.Context(), account, project, userID, days[0])
	switch {
	case tidings.ErrorCode(err) == tidings.ENotFound: // no row: no page views, no minutes
		act = &tidings.Activity{}
	case err != nil:
		return err
	default:
		d.Sessions = act.Sessions
	}
	d.Activity = activityChart(d.Who.Name, days, act.Days)
	d.TopPages = topTable{Rows: pageRows(act.TopPages), Head: "Page", Count: "Views", Empty: "No page views recorded."}
	if u.PageViews > 0 || len(act.TopPages) > 0 {
		if err := s.foldPageViews(r, account, project, userID, j); err != nil {
			return err
		}
	}
	return s.render(w, r, "user", &view{Title: d.Who.Short() + " · " + project, Project: project, Section: "users", Data: d})
}

// activityChart draws a user's events and page views on each of days.
func activityChart(name string, days []time.Time, act []tidings.ActivityDay) drawnDaily {
	events := dailySeries{Name: "Events", Noun: "event", Class: "s0", Values: make([]int64, len(days))}
	views := dailySeries{Name: "Page views", Noun: "page view", Class: "s2", Values: make([]int64, len(days))}
	at := make(map[time.Time]int, len(days))
	for i, d := range days {
		at[d] = i
	}
	for _, a := range act {
		if i, ok := at[a.Day.UTC().Truncate(24*time.Hour)]; ok {
			events.Values[i] += a.Events
			views.Values[i] += a.Views
		}
	}
	c := dailyChart{Days: days, Series: []dailySeries{events, views}, Stacked: true, What: "Activity of " + name,
		Empty: "No events or page views in the last 90 days."}
	return c.draw()
}
