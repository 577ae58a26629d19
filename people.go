package tidings

import (
	"context"
	"strings"
	"time"
)

// Limits of a user's or group's properties.
const (
	MaxPropertiesPerCall = MaxTags  // properties one identify or group call may send
	MaxProperties        = 100      // properties a user or group keeps, after merging
	MaxUserGroups        = 100      // groups a user may belong to; a Person lists at most these
	MaxPropertiesBytes   = 16 << 10 // a user's or group's properties, as stored JSON
	// PageBytes is the most properties (stored JSON bytes) one page of users or groups
	// carries: a page ends early, with a cursor, rather than grow past it.
	PageBytes = 256 << 10
)

// Identify sets properties of one of a project's users (LogSnag's identify): the
// keys sent overwrite the stored ones, Remove deletes keys (sent as null), the rest
// stay.
type Identify struct {
	Project    string
	UserID     string
	Properties Tags
	Remove     []string
	Key        *Keyed[*Person] // nil: no idempotency key
}

// Check validates an identify call.
func (c *Identify) Check(p *Problems) {
	CheckName(p, "project", c.Project)
	if c.UserID == "" {
		p.Add("user_id", "required", "is required")
	} else {
		checkID(p, "user_id", c.UserID)
	}
	checkProperties(p, c.Properties, c.Remove)
}

// GroupChange sets properties of one of a project's groups and, with UserID, makes
// the user a member (LogSnag's group).
type GroupChange struct {
	Project    string
	GroupID    string
	UserID     string // "" to change the group only
	Properties Tags
	Remove     []string
	Key        *Keyed[*Group] // nil: no idempotency key
}

// Check validates a group call.
func (c *GroupChange) Check(p *Problems) {
	CheckName(p, "project", c.Project)
	if c.GroupID == "" {
		p.Add("group_id", "required", "is required")
	} else {
		checkID(p, "group_id", c.GroupID)
	}
	if c.UserID != "" {
		checkID(p, "user_id", c.UserID)
	}
	checkProperties(p, c.Properties, c.Remove)
}

func checkProperties(p *Problems, set Tags, remove []string) {
	checkTags(p, "properties", set, MaxPropertiesPerCall, "property")
	if len(set)+len(remove) > MaxPropertiesPerCall {
		p.Add("properties", "too_many", "at most %d properties are allowed (got %d)", MaxPropertiesPerCall, len(set)+len(remove))
	}
	for _, k := range remove {
		if !ValidName(k) {
			p.Add("properties."+k, "pattern", "property key %s", NameRuleMessage)
		}
	}
}

// MergeProperties applies a change to stored properties: sent keys overwrite in place
// or are added at the end, removed keys go. It refuses (EValidation) a result of more
// than MaxProperties.
func MergeProperties(stored, set Tags, remove []string) (Tags, error) {
	out := make(Tags, 0, len(stored)+len(set))
	gone := map[string]bool{}
	for _, k := range remove {
		gone[k] = true
	}
	sent := map[string]Tag{}
	for _, t := range set {
		sent[t.Key] = t
	}
	for _, t := range stored {
		if gone[t.Key] {
			continue
		}
		if n, ok := sent[t.Key]; ok {
			t = n
			delete(sent, t.Key)
		}
		out = append(out, t)
	}
	for _, t := range set {
		if _, ok := sent[t.Key]; ok {
			out = append(out, t)
		}
	}
	if len(out) > MaxProperties {
		var p Problems
		p.Add("properties", "too_many", "a user or group keeps at most %d properties; remove some (send them as null) first", MaxProperties)
		return nil, p.Err()
	}
	if n := len(out.JSON()); n > MaxPropertiesBytes {
		var p Problems
		p.Add("properties", "too_large", "a user or group keeps at most %d KiB of properties (these would take %d bytes); remove some (send them as null) first",
			MaxPropertiesBytes>>10, n)
		return nil, p.Err()
	}
	return out, nil
}

// Person is one of a project's users, as identify calls described them.
type Person struct {
	Project    string
	UserID     string
	Properties Tags
	Groups     []string  // the groups it is a member of, by group ID, most recently seen first (at most MaxUserGroups)
	GroupCount int       // how many groups it is a member of
	Events     int64     // events received with its user_id (deleted ones excepted)
	PageViews  int64     // page views recorded for it (expired ones excepted)
	Sessions   int64     // FindPerson's: its sessions (see PageStore); 0 in lists
	FirstSeen  time.Time // the first identify, group call or event naming it
	LastSeen   time.Time // the last one
}

// Group is one of a project's groups.
type Group struct {
	Project    string
	GroupID    string
	Properties Tags
	Members    int
	MemberIDs  []string // FindGroup's: the members' user IDs, most recently seen first, at most MaxGroupMembersShown
	FirstSeen  time.Time
	LastSeen   time.Time
}

// MaxGroupMembersShown is how many members' IDs FindGroup returns.
const MaxGroupMembersShown = 500

// GroupPage is one page of groups, most recently seen first.
type GroupPage struct {
	Groups []*Group
	Next   string
}

// PersonQuery selects a page of a project's users, most recently seen first.
type PersonQuery struct {
	Project    string
	Properties []Tag  // all must match (values compared as text, like tag filters)
	IDPrefix   string // only users whose ID starts with it (ASCII letters in any case)
	Sort       string // PersonSortLastSeen (""), PersonSortEvents or PersonSortFirstSeen; always descending
	Before     string // a user ID: only users after it in the order
	Limit      int    // 1 to 100
}

// The orders of a page of users (PersonQuery.Sort), each newest or largest first, ties
// by the newest row.
const (
	PersonSortLastSeen  = "last_seen"
	PersonSortEvents    = "events"
	PersonSortFirstSeen = "first_seen"
)

// CheckPersonSort returns EValidation (field "sort") for an order that is not one of them.
func CheckPersonSort(sort string) error {
	switch sort {
	case "", PersonSortLastSeen, PersonSortEvents, PersonSortFirstSeen:
		return nil
	}
	var p Problems
	p.Add("sort", "enum", `must be "last_seen", "events" or "first_seen"`)
	return p.Err()
}

// ParsePersonSearch reads the users page's search box into q: key:value words (and
// key:"two words") filter by property, another word is the start of a user ID. It
// returns EValidation (field "q") for more than one such word or too long a query.
func ParsePersonSearch(q *PersonQuery, box string) error {
	var p Problems
	if len(box) > MaxSearchLength {
		p.Add("q", "length", "must be at most %d bytes", MaxSearchLength)
		return p.Err()
	}
	for _, tok := range splitQuery(box) {
		if !tok.quoted {
			if key, value, ok := strings.Cut(tok.text, ":"); ok && ValidName(key) && (value != "" || tok.valueQuoted) {
				if tok.valueQuoted {
					value = tok.value
				}
				q.Properties = append(q.Properties, Tag{Key: key, Value: value})
				continue
			}
		}
		if q.IDPrefix != "" {
			p.Add("q", "terms", "search one user ID at a time (%q and %q), or filter by property with key:value", q.IDPrefix, tok.text)
			continue
		}
		q.IDPrefix = tok.text
	}
	if len(q.Properties) > MaxSearchTerms {
		p.Add("q", "terms", "must have at most %d properties", MaxSearchTerms)
	}
	return p.Err()
}

// LikePrefix is a LIKE pattern matching the strings that start with s (\ escapes).
func LikePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// PersonPage is one page of users; Next is the cursor of the following page.
type PersonPage struct {
	People []*Person
	Next   string
}

// PeopleStore keeps a project's users and groups. Every method is scoped to one account.
type PeopleStore interface {
	// Identify merges properties into a user, creating it. Errors: EProjectNotFound, EValidation.
	Identify(ctx context.Context, accountID int64, c *Identify) (*Person, error)
	// Group merges properties into a group, creating it, and adds the user to it when
	// one is named. Errors: EProjectNotFound, EValidation (also when the user is in
	// MaxUserGroups groups already).
	Group(ctx context.Context, accountID int64, c *GroupChange) (*Group, error)
	// ListPeople returns a page of the project's users. Errors: EProjectNotFound,
	// EValidation for an unknown Before cursor.
	ListPeople(ctx context.Context, accountID int64, q PersonQuery) (*PersonPage, error)
	// FindPerson returns one user with its groups. Errors: EProjectNotFound, ENotFound.
	FindPerson(ctx context.Context, accountID int64, project, userID string) (*Person, error)
	// ListGroups returns a page of the project's groups, most recently seen first;
	// before is a group ID from a previous page. Errors: EProjectNotFound, EValidation.
	ListGroups(ctx context.Context, accountID int64, project, before string, limit int) (*GroupPage, error)
	// FindGroup returns one group with its members' IDs. Errors: EProjectNotFound, ENotFound.
	FindGroup(ctx context.Context, accountID int64, project, groupID string) (*Group, error)
}

// TooManyGroups is the error of every backend for a user who would join one group more
// than MaxUserGroups.
func TooManyGroups(userID string) error {
	var p Problems
	p.Add("user_id", "too_many", "user %q belongs to %d groups already, the most a user may join", userID, MaxUserGroups)
	return p.Err()
}

// TrimPeople ends a page of users before its properties pass PageBytes (keeping one
// user at least), and points Next at the last user kept.
func (pg *PersonPage) TrimPeople() {
	if n := pageCut(pg.People, func(u *Person) Tags { return u.Properties }); n < len(pg.People) {
		pg.People, pg.Next = pg.People[:n], pg.People[n-1].UserID
	}
}

// TrimGroups ends a page of groups before its properties pass PageBytes (keeping one
// group at least), and points Next at the last group kept.
func (pg *GroupPage) TrimGroups() {
	if n := pageCut(pg.Groups, func(g *Group) Tags { return g.Properties }); n < len(pg.Groups) {
		pg.Groups, pg.Next = pg.Groups[:n], pg.Groups[n-1].GroupID
	}
}

// pageCut is how many of items fit in PageBytes of properties (one at least).
func pageCut[T any](items []T, props func(T) Tags) int {
	total := 0
	for i, it := range items {
		total += len(props(it).JSON())
		if total > PageBytes && i > 0 {
			return i
		}
	}
	return len(items)
}
