package tidings

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Field limits of a log event.
const (
	MaxEventNameLen   = 160
	MaxDescriptionLen = 10000
	MaxUserIDLen      = 128
)

// Parsers select how a description is shown.
const (
	ParserText     = "text"
	ParserMarkdown = "markdown"
)

// BackfillAge is how old an event's timestamp may be and still wake someone up: a
// notify:true event older than this is stored but sends no push.
const BackfillAge = time.Hour

// earliestTimestamp is the oldest timestamp an event may carry (2000-01-01T00:00:00Z).
var earliestTimestamp = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// NewEvent is a log event as a client publishes it, after decoding.
type NewEvent struct {
	Project     string
	Channel     string
	Event       string
	Description string
	Icon        string
	Notify      bool
	Tags        Tags
	Parser      string
	UserID      string
	Timestamp   time.Time      // zero: the time the server accepts it
	Key         *Keyed[*Event] // nil: the publish has no idempotency key

	// The intent fields (intent.go). Priority is as sent ("high", "4"; "" is
	// default): Check makes it the word.
	Priority  string
	URL       string   // where a tap goes instead of the event page
	Actions   []Action // at most MaxActions buttons
	ThreadKey string   // the "key" field: events with one key in a channel are versions of one thing
}

// Check validates e, normalising it in place (trimmed name, emoji for a shortcode,
// default parser), and records every problem in p.
func (e *NewEvent) Check(p *Problems, now time.Time) {
	CheckName(p, "project", e.Project)
	CheckName(p, "channel", e.Channel)
	e.Event = strings.TrimSpace(e.Event)
	switch n := utf8.RuneCountInString(e.Event); {
	case n == 0:
		p.Add("event", "required", "is required")
	case n > MaxEventNameLen:
		p.Add("event", "too_long", "must be at most %d characters (got %d)", MaxEventNameLen, n)
	default:
		checkText(p, "event", e.Event, ruleLabel)
		checkVisible(p, "event", e.Event)
	}
	e.Description = NormalizeNewlines(e.Description)
	if n := utf8.RuneCountInString(e.Description); n > MaxDescriptionLen {
		p.Add("description", "too_long", "must be at most %d characters (got %d)", MaxDescriptionLen, n)
	}
	checkDescription(p, "description", e.Description)
	CheckIcon(p, "icon", &e.Icon)
	checkTags(p, "tags", e.Tags, MaxTags, "tag")
	switch e.Parser {
	case "":
		e.Parser = ParserText
	case ParserText, ParserMarkdown:
	default:
		p.Add("parser", "enum", `must be "markdown" or "text"`)
	}
	if e.UserID != "" {
		checkID(p, "user_id", e.UserID)
	}
	if !e.Timestamp.IsZero() {
		latest := now.Add(24 * time.Hour)
		if e.Timestamp.Before(earliestTimestamp) || e.Timestamp.After(latest) {
			p.Add("timestamp", "range", "must be unix seconds between 946684800 (2000-01-01) and now + 24 hours")
		}
	}
	e.checkIntent(p)
}

// NewEventID returns a fresh event ID: a UUIDv7, unique and increasing with the time
// the server accepts the event (within one process, strictly increasing).
func NewEventID() (string, error) {
	id, err := uuid.NewV7()
	return id.String(), err
}

// EventIDFloor is the smallest event ID of time t: every event accepted at t or later
// has a larger ID. A live feed starts its stream there.
func EventIDFloor(t time.Time) string {
	ms := t.UnixMilli()
	return fmt.Sprintf("%08x-%04x-7000-8000-000000000000", uint64(ms)>>16, uint64(ms)&0xffff)
}

// EventIDTime is the time encoded in an event ID (a UUIDv7's milliseconds); ok is false
// for a string that is not such an ID.
func EventIDTime(id string) (t time.Time, ok bool) {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 {
		return time.Time{}, false
	}
	sec, nsec := u.Time().UnixTime()
	return time.Unix(sec, nsec).UTC(), true
}

// Event is a stored log event.
type Event struct {
	ID          string // unique, sorts by the time the server accepted the event
	Project     string
	Channel     string
	Event       string
	Description string
	Icon        string
	Notify      bool
	Tags        Tags
	Parser      string
	UserID      string
	Timestamp   time.Time // when it happened: the client's timestamp or the acceptance time
	CreatedAt   time.Time // when the server accepted it

	Priority  Priority // never 0 once stored: PriorityDefault when none was sent
	URL       string
	Actions   []Action
	ThreadKey string // the "key" field
	Ack       *Ack   // nil until acknowledged
}

// EventJSON is an event as the API answers it, and as webhooks send it.
type EventJSON struct {
	ID          string    `json:"id"`
	Project     string    `json:"project"`
	Channel     string    `json:"channel"`
	Event       string    `json:"event"`
	Description string    `json:"description"`
	Icon        string    `json:"icon"`
	Notify      bool      `json:"notify"`
	Tags        Tags      `json:"tags"`
	Parser      string    `json:"parser"`
	UserID      string    `json:"user_id,omitempty"`
	Timestamp   int64     `json:"timestamp"` // unix seconds
	CreatedAt   time.Time `json:"created_at"`
	Priority    string    `json:"priority"`
	URL         string    `json:"url,omitempty"`
	Actions     []Action  `json:"actions,omitempty"`
	Key         string    `json:"key,omitempty"`
	Ack         *AckJSON  `json:"acknowledged,omitempty"`
}

// JSON returns the event in its API shape.
func (e *Event) JSON() EventJSON {
	tags := e.Tags
	if tags == nil {
		tags = Tags{}
	}
	j := EventJSON{ID: e.ID, Project: e.Project, Channel: e.Channel, Event: e.Event, Description: e.Description,
		Icon: e.Icon, Notify: e.Notify, Tags: tags, Parser: e.Parser, UserID: e.UserID,
		Timestamp: e.Timestamp.Unix(), CreatedAt: e.CreatedAt,
		Priority: e.Priority.String(), URL: e.URL, Actions: e.Actions, Key: e.ThreadKey}
	if e.Ack != nil {
		j.Ack = &AckJSON{By: e.Ack.By, At: e.Ack.At}
	}
	return j
}

// ShouldPush reports whether the event asks for a push notification and is recent
// enough to send one: a backfilled event must not wake anyone.
func (e *Event) ShouldPush(now time.Time) bool {
	return e.Notify && now.Sub(e.Timestamp) <= BackfillAge
}

// EventQuery selects a page of a project's events, newest first.
type EventQuery struct {
	Project string
	Channel string // "" for all channels
	// Event keeps only the events of this exact name (case-sensitive); "" is any.
	Event string
	Tags  []Tag // all must match (Key and Value compared exactly)
	// Terms are words and phrases to find in the name, description or tag values
	// (folded: any case, with or without accents); all must match. See Search.
	Terms []Term
	// Since and Until bound the timestamp: Since <= ts < Until; zero is open.
	Since, Until time.Time
	// Users keeps only the events sent with one of these user_ids: a user's journey,
	// or a group's (its members'). Like a word search, such a page lists events by
	// arrival. At most MaxQueryUsers.
	Users []string
	// MinPriority and MaxPriority keep only the events of priorities between them
	// (0: unbounded): priority:urgent, priority:>=high.
	MinPriority, MaxPriority Priority
	Before                   string // an event ID: only events older than it
	Limit                    int    // 1 to 100
}

// AddSearch narrows q by a parsed search. It returns false when the two cannot both
// match any event (the search names another channel, event name or user than q):
// the answer is then empty.
func (q *EventQuery) AddSearch(s Search) bool {
	ok := true
	if s.Channel != "" {
		ok = ok && (q.Channel == "" || q.Channel == s.Channel)
		q.Channel = s.Channel
	}
	if s.Event != "" {
		ok = ok && (q.Event == "" || q.Event == s.Event)
		q.Event = s.Event
	}
	if s.User != "" {
		ok = ok && (len(q.Users) == 0 || slices.Contains(q.Users, s.User))
		q.Users = []string{s.User}
	}
	if s.MinPriority > q.MinPriority {
		q.MinPriority = s.MinPriority
	}
	if s.MaxPriority != 0 && (q.MaxPriority == 0 || s.MaxPriority < q.MaxPriority) {
		q.MaxPriority = s.MaxPriority
	}
	if q.MaxPriority != 0 && q.MinPriority > q.MaxPriority {
		ok = false
	}
	q.Tags = append(q.Tags, s.Tags...)
	q.Terms = append(q.Terms, s.Terms...)
	if !s.Since.IsZero() {
		q.Since = s.Since
	}
	if !s.Until.IsZero() {
		q.Until = s.Until
	}
	return ok
}

// MaxQueryUsers is how many user IDs one EventQuery may name: a group's journey reads
// the events of its this many most recently seen members. Each costs an index lookup
// per page (SQLite: 100 take about 15 ms at 1 million events).
const MaxQueryUsers = 100

// CheckUsers refuses (EValidation) a query naming more than MaxQueryUsers user IDs.
func (q EventQuery) CheckUsers() error {
	if len(q.Users) <= MaxQueryUsers {
		return nil
	}
	var p Problems
	p.Add("user", "too_many", "at most %d user IDs at once (got %d)", MaxQueryUsers, len(q.Users))
	return p.Err()
}

// EventPage is one page of events; Next is the cursor of the following page, "" on the last.
type EventPage struct {
	Events []*Event
	Next   string
}

// EventStore records and reads events. Every method is scoped to one account.
type EventStore interface {
	// PublishEvent durably records e in the account's project and channel and returns
	// the stored event; it returns only once the event is committed.
	// Errors: EProjectNotFound, EChannelNotFound (unless the project creates channels on
	// first event), EUnavailable when the store is closing.
	PublishEvent(ctx context.Context, accountID int64, e *NewEvent) (*Event, error)

	// PublishEvents records a batch's events in one transaction and returns each one's
	// outcome, in order: the stored event, or its error (EProjectNotFound,
	// EChannelNotFound) when nothing was written for it. The batch's key and answer are
	// kept only when at least one event was stored. Errors of the whole batch:
	// EUnavailable, ErrKeyTaken.
	PublishEvents(ctx context.Context, accountID int64, b *NewBatch) ([]Published, error)

	// ListEvents returns a page of the project's events, newest first (by timestamp,
	// then ID). Pages are stable while new events arrive.
	// Errors: EProjectNotFound, EChannelNotFound, ENotFound for an unknown Before cursor.
	ListEvents(ctx context.Context, accountID int64, q EventQuery) (*EventPage, error)

	// FindEvent returns one event of the account's project. Errors: EProjectNotFound, ENotFound.
	FindEvent(ctx context.Context, accountID int64, project, id string) (*Event, error)

	// DeleteEvent deletes one event of the account's project, with its place in the
	// tag and search indexes and in the counts. Errors: EProjectNotFound, ENotFound.
	DeleteEvent(ctx context.Context, accountID int64, project, id string) error

	// EventsAfter returns up to limit events of the project accepted after the event
	// with ID after, oldest first: what a live feed missed while it was disconnected.
	// Errors: EProjectNotFound.
	EventsAfter(ctx context.Context, accountID int64, project, after string, limit int) ([]*Event, error)

	// CountEventsAfter counts the project's events accepted after the event with ID
	// after, counting no further than max: enough to decide whether a reconnecting
	// feed can catch up, at bounded cost. Errors: EProjectNotFound.
	CountEventsAfter(ctx context.Context, accountID int64, project, after string, max int) (int, error)

	// CountEventsBy counts the project's events (one channel's when channel is not "")
	// per bucket of the given width, from since on, keyed by the bucket's start.
	// Errors: EProjectNotFound, EChannelNotFound.
	CountEventsBy(ctx context.Context, accountID int64, project, channel string, since time.Time, bucket time.Duration) (map[time.Time]int, error)
}

// Matches reports whether ev belongs in a feed filtered by q (its project is assumed):
// the live feed applies the same filter to new events as the store applies to pages.
func (q EventQuery) Matches(ev *Event) bool {
	if q.Channel != "" && ev.Channel != q.Channel || len(q.Users) > 0 && !slices.Contains(q.Users, ev.UserID) ||
		q.Event != "" && ev.Event != q.Event || !q.PriorityMatches(ev.Priority) {
		return false
	}
	for _, want := range q.Tags {
		got, ok := ev.Tags.Get(want.Key)
		if !ok || got.Value != want.Value {
			return false
		}
	}
	if !q.Since.IsZero() && ev.Timestamp.Before(q.Since) || !q.Until.IsZero() && !ev.Timestamp.Before(q.Until) {
		return false
	}
	return len(q.Terms) == 0 || matchesTerms(q.Terms, SearchWords(ev.SearchText()))
}

// Accept makes the stored event of e: a new ID, accepted at now (which also stands in
// for a missing timestamp), tags never nil. Every backend stores what it returns.
func (e *NewEvent) Accept(now time.Time) (*Event, error) {
	id, err := NewEventID()
	if err != nil {
		return nil, err
	}
	ev := &Event{
		ID: id, Project: e.Project, Channel: e.Channel, Event: e.Event, Description: e.Description,
		Icon: e.Icon, Notify: e.Notify, Tags: e.Tags, Parser: e.Parser, UserID: e.UserID,
		Timestamp: e.Timestamp.UTC(), CreatedAt: now,
		URL: e.URL, Actions: e.Actions, ThreadKey: e.ThreadKey,
	}
	ev.Priority, _ = ParsePriority(e.Priority)
	if ev.Priority == 0 {
		ev.Priority = PriorityDefault
	}
	if len(ev.Actions) == 0 {
		ev.Actions = nil
	}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = now
	}
	if ev.Tags == nil {
		ev.Tags = Tags{}
	}
	return ev, nil
}

// PriorityMatches reports whether an event of priority p passes the query's priority
// bounds.
func (q EventQuery) PriorityMatches(p Priority) bool {
	return (q.MinPriority == 0 || p >= q.MinPriority) && (q.MaxPriority == 0 || p <= q.MaxPriority)
}
