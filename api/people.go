package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/tidings-dev/tidings"
)

var (
	identifyFields = fieldOrder{"project", "user_id", "properties"}
	groupFields    = fieldOrder{"project", "group_id", "user_id", "properties"}
)

// decodeProperties reads a properties object: values are strings, numbers or
// booleans, as tags; null removes the key.
func decodeProperties(f *fields, p *tidings.Problems) (set tidings.Tags, remove []string) {
	raw, ok := f.get("properties")
	if !ok {
		return nil, nil
	}
	if raw[0] != '{' {
		p.Add("properties", "type", "must be an object of key/value pairs")
		return nil, nil
	}
	obj, err := decodeObject(raw)
	if err != nil {
		p.Add("properties", "invalid", "%s", tidings.ErrorMessage(err))
		return nil, nil
	}
	for _, m := range obj {
		if string(m.raw) == "null" {
			remove = append(remove, m.key)
			continue
		}
		text, kind := scalarOf(m.raw)
		if kind == "" {
			p.Add("properties."+m.key, "type", "must be a string, number, boolean, or null to remove it")
			continue
		}
		set = append(set, tidings.Tag{Key: m.key, Kind: kind, Value: text})
	}
	return set, remove
}

func decodeIdentify(body []byte) (*tidings.Identify, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	c := &tidings.Identify{Project: f.required("project"), UserID: f.required("user_id")}
	c.Properties, c.Remove = decodeProperties(f, &p)
	f.rejectUnknown(identifyFields.String())
	if !p.Has("project") && !p.Has("user_id") {
		c.Check(&p)
	}
	p.SortBy(identifyFields)
	return c, p.Err()
}

func decodeGroup(body []byte) (*tidings.GroupChange, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	c := &tidings.GroupChange{Project: f.required("project"), GroupID: f.required("group_id")}
	if uid, set := f.str("user_id"); set {
		if uid == "" {
			p.Add("user_id", "required", "must not be empty when sent")
		}
		c.UserID = uid
	}
	c.Properties, c.Remove = decodeProperties(f, &p)
	f.rejectUnknown(groupFields.String())
	if !p.Has("project") && !p.Has("group_id") {
		c.Check(&p)
	}
	p.SortBy(groupFields)
	return c, p.Err()
}

// allowPeople checks that the token may describe the project's users: the log role
// and the project limit (a channel limit does not apply: users are the project's).
func allowPeople(tok *tidings.Token, project string) error {
	return tok.AllowPublish(tidings.RoleLog, project, tok.Channel)
}

// handleIdentify merges properties into a user: POST /v1/identify (LogSnag's identify).
// A full token is answered the stored user; a public one only what it sent
// (people_public.go).
func (s *Server) handleIdentify(w http.ResponseWriter, r *http.Request) error {
	tok, body, g, err := s.keyedRequest(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	defer g.done()
	c, err := decodeIdentify(body)
	if err != nil {
		return err
	}
	if err := allowPeople(tok, c.Project); err != nil {
		return err
	}
	answer, vet := func(u *tidings.Person) any { return personOut(u) }, vetAnswer(nil)
	if tok.Access != tidings.AccessFull {
		sent := identifySent(c)
		answer, vet = func(*tidings.Person) any { return sent }, answerSent(sent)
	}
	c.Key = keyFor(g, answer)
	u, err := s.store.Identify(r.Context(), tok.AccountID, c)
	if err == tidings.ErrKeyTaken {
		return g.lostAs(w, r, vet)
	}
	if err != nil {
		return err
	}
	return g.write(w, answer(u))
}

// handleGroup merges properties into a group and adds the user: POST /v1/group. A
// full token is answered the stored group; a public one only what it sent.
func (s *Server) handleGroup(w http.ResponseWriter, r *http.Request) error {
	tok, body, guard, err := s.keyedRequest(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	defer guard.done()
	c, err := decodeGroup(body)
	if err != nil {
		return err
	}
	if err := allowPeople(tok, c.Project); err != nil {
		return err
	}
	answer, vet := func(g *tidings.Group) any { return groupOut(g) }, vetAnswer(nil)
	if tok.Access != tidings.AccessFull {
		sent := groupSent(c)
		answer, vet = func(*tidings.Group) any { return sent }, answerSent(sent)
	}
	c.Key = keyFor(guard, answer)
	g, err := s.store.Group(r.Context(), tok.AccountID, c)
	if err == tidings.ErrKeyTaken {
		return guard.lostAs(w, r, vet)
	}
	if err != nil {
		return err
	}
	return guard.write(w, answer(g))
}

type groupJSON struct {
	Project    string       `json:"project"`
	GroupID    string       `json:"group_id"`
	Properties tidings.Tags `json:"properties"`
	Members    int          `json:"members"`
	FirstSeen  time.Time    `json:"first_seen"`
	LastSeen   time.Time    `json:"last_seen"`
}

func groupOut(g *tidings.Group) groupJSON {
	props := g.Properties
	if props == nil {
		props = tidings.Tags{}
	}
	return groupJSON{g.Project, g.GroupID, props, g.Members, g.FirstSeen, g.LastSeen}
}

type personJSON struct {
	Project    string       `json:"project"`
	UserID     string       `json:"user_id"`
	Properties tidings.Tags `json:"properties"`
	Groups     []string     `json:"groups"`
	GroupCount int          `json:"groups_count"`
	Events     int64        `json:"events"`
	PageViews  int64        `json:"page_views"`
	FirstSeen  time.Time    `json:"first_seen"`
	LastSeen   time.Time    `json:"last_seen"`
}

func personOut(u *tidings.Person) personJSON {
	out := personJSON{Project: u.Project, UserID: u.UserID, Properties: u.Properties, Groups: u.Groups, GroupCount: u.GroupCount, Events: u.Events,
		PageViews: u.PageViews, FirstSeen: u.FirstSeen, LastSeen: u.LastSeen}
	if out.Properties == nil {
		out.Properties = tidings.Tags{}
	}
	if out.Groups == nil {
		out.Groups = []string{}
	}
	return out
}

// allowReadWhole checks that the token may read what belongs to the whole project
// (users, page views): full access, the project limit, and no channel limit; why says
// why a channel's token may not.
func allowReadWhole(tok *tidings.Token, project, why string) error {
	if err := tok.AllowRead(project, tok.Channel); err != nil {
		return err
	}
	if tok.Channel != "" {
		return tidings.Errorf(tidings.EForbidden, "this token is limited to channel %q; %s", tok.Channel, why)
	}
	return nil
}

// handleUsers lists a project's users:
// GET /v1/users?project=P[&property=k:v…][&sort=last_seen|events|first_seen][&before=ID][&limit=N].
func (s *Server) handleUsers(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	var p tidings.Problems
	q := tidings.PersonQuery{Project: v.Get("project"), Sort: v.Get("sort"), Before: v.Get("before")}
	tidings.CheckName(&p, "project", q.Project)
	q.Properties = pairs(v, "property", &p)
	var perr *tidings.Error
	if errors.As(tidings.CheckPersonSort(q.Sort), &perr) {
		p = append(p, perr.Fields...)
	}
	q.Limit = limit(v, &p)
	if err := p.Err(); err != nil {
		return err
	}
	if err := allowReadWhole(tok, q.Project, "users belong to the whole project"); err != nil {
		return err
	}
	page, err := s.store.ListPeople(r.Context(), tok.AccountID, q)
	if err != nil {
		return err
	}
	page.TrimPeople()
	out := struct {
		Users []personJSON `json:"users"`
		Next  *string      `json:"next"`
	}{Users: make([]personJSON, len(page.People))}
	for i, u := range page.People {
		out.Users[i] = personOut(u)
	}
	if page.Next != "" {
		out.Next = &page.Next
	}
	return writeJSON(w, out)
}

// handleUser shows one user with its groups, sessions and recent events: GET /v1/users/{user_id}?project=P.
func (s *Server) handleUser(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	project := r.URL.Query().Get("project")
	if err := tidings.ValidateName("project", project); err != nil {
		return err
	}
	if err := allowReadWhole(tok, project, "users belong to the whole project"); err != nil {
		return err
	}
	u, err := s.store.FindPerson(r.Context(), tok.AccountID, project, r.PathValue("user_id"))
	if err != nil {
		return err
	}
	recent, err := s.store.ListEvents(r.Context(), tok.AccountID, tidings.EventQuery{Project: project, Users: []string{u.UserID}, Limit: 20})
	if err != nil {
		return err
	}
	out := struct {
		personJSON
		Sessions int64               `json:"sessions"` // its activity (events and page views) without a gap over 30 minutes
		Events   []tidings.EventJSON `json:"events"`   // the 20 most recent, newest first
	}{personJSON: personOut(u), Sessions: u.Sessions, Events: make([]tidings.EventJSON, len(recent.Events))}
	for i, ev := range recent.Events {
		out.Events[i] = eventOut(ev)
	}
	return writeJSON(w, out)
}
