package tidings

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// What an event means to the people it notifies: its priority, where a tap goes, its
// action buttons, the key that makes it a version of one thing, and its
// acknowledgement (api-contract.md, "Priority, links, actions, keys and acknowledgement").

// Priority is how much an event matters, from PriorityMin to PriorityUrgent.
type Priority int8

// The priorities; an event without one is PriorityDefault.
const (
	PriorityMin     Priority = 1
	PriorityLow     Priority = 2
	PriorityDefault Priority = 3
	PriorityHigh    Priority = 4
	PriorityUrgent  Priority = 5
)

var priorityNames = [...]string{"", "min", "low", "default", "high", "urgent"}

// String is the priority's word ("urgent"); an unset priority is "default".
func (p Priority) String() string {
	if p < PriorityMin || p > PriorityUrgent {
		return "default"
	}
	return priorityNames[p]
}

// ParsePriority reads a priority's word or its number "1" to "5".
func ParsePriority(s string) (Priority, bool) {
	for i := PriorityMin; i <= PriorityUrgent; i++ {
		if s == priorityNames[i] || s == strconv.Itoa(int(i)) {
			return i, true
		}
	}
	return 0, false
}

// Urgency is the Web Push Urgency header of the priority (RFC 8030, section 5.3).
func (p Priority) Urgency() string {
	switch p {
	case PriorityMin:
		return "very-low"
	case PriorityLow:
		return "low"
	case PriorityHigh, PriorityUrgent:
		return "high"
	}
	return "normal"
}

// Limits of the intent fields.
const (
	MaxURLLen         = 2048
	MaxActions        = 3
	MaxActionLabelLen = 40
	MaxKeyLen         = 128
	// RepeatUrgentEvery and RepeatUrgentTimes are a project's defaults: an urgent
	// event is pushed again every 5 minutes, at most 12 times, until acknowledged.
	RepeatUrgentEvery    = 5 * time.Minute
	RepeatUrgentTimes    = 12
	MinRepeatUrgentEvery = time.Minute
	MaxRepeatUrgentEvery = 24 * time.Hour
	MaxRepeatUrgentTimes = 100
	// MaxPresses is how many presses of an event's actions are kept and listed.
	MaxPresses = 100
)

// Action is a button of an event: it opens URL, or, with ID, is recorded when a
// member presses it and sent to the project's webhooks.
type Action struct {
	Label string `json:"label"`
	URL   string `json:"url,omitempty"`
	ID    string `json:"id,omitempty"`
}

// Ack is an event's acknowledgement: the first member (or token) to acknowledge it.
type Ack struct {
	By string    // the member's email, or the token's name
	At time.Time // when
}

// AckJSON is an acknowledgement as the API answers it.
type AckJSON struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// ActionPress is one press of an event's id action.
type ActionPress struct {
	ID        string // "press_…"
	AccountID int64
	EventID   string
	ActionID  string
	Label     string // the action's label when pressed
	By        string // the member's email, or the token's name
	Via       string // where: a device's name, "dashboard", or "API"
	At        time.Time
}

// checkIntent validates the intent fields of e (priority, url, actions, key),
// normalising the priority to its word.
func (e *NewEvent) checkIntent(p *Problems) {
	switch pr, ok := ParsePriority(e.Priority); {
	case e.Priority == "":
		e.Priority = PriorityDefault.String()
	case !ok:
		p.Add("priority", "enum", `must be "min", "low", "default", "high" or "urgent" (or 1 to 5)`)
	default:
		e.Priority = pr.String()
	}
	if e.URL != "" {
		CheckLink(p, "url", e.URL)
	}
	if len(e.Actions) > MaxActions {
		p.Add("actions", "too_many", "at most %d actions (got %d)", MaxActions, len(e.Actions))
	}
	seen := map[string]bool{}
	for i, a := range e.Actions {
		if i >= MaxActions {
			break
		}
		path := "actions." + strconv.Itoa(i)
		switch n := utf8.RuneCountInString(strings.TrimSpace(a.Label)); {
		case n == 0:
			p.Add(path+".label", "required", "is required")
		case n > MaxActionLabelLen:
			p.Add(path+".label", "too_long", "must be at most %d characters (got %d)", MaxActionLabelLen, n)
		default:
			checkText(p, path+".label", a.Label, ruleLabel)
			checkVisible(p, path+".label", a.Label)
		}
		switch {
		case a.URL != "" && a.ID != "":
			p.Add(path, "one_of", `has either "url" (a button that opens it) or "id" (a button that is recorded), not both`)
		case a.URL != "":
			CheckLink(p, path+".url", a.URL)
		case a.ID != "":
			CheckName(p, path+".id", a.ID)
			if seen[a.ID] {
				p.Add(path+".id", "duplicate", "%q is the id of another action of this event: ids are unique in an event", a.ID)
			}
			seen[a.ID] = true
		default:
			p.Add(path, "one_of", `needs "url" (a button that opens it) or "id" (a button that is recorded)`)
		}
	}
	if e.ThreadKey != "" {
		switch n := utf8.RuneCountInString(e.ThreadKey); {
		case n > MaxKeyLen:
			p.Add("key", "too_long", "must be at most %d characters (got %d)", MaxKeyLen, n)
		default:
			checkText(p, "key", e.ThreadKey, ruleLabel)
			checkVisible(p, "key", e.ThreadKey)
		}
	}
}

// CheckLink records a problem unless s is an absolute http:// or https:// URL of at
// most MaxURLLen characters (a javascript: or relative URL is refused).
func CheckLink(p *Problems, path, s string) {
	if len(s) > MaxURLLen {
		p.Add(path, "too_long", "must be at most %d characters", MaxURLLen)
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsFunc(s, isControl) {
		p.Add(path, "format", "must be an absolute http:// or https:// URL")
	}
}

// Thread names the versions of one thing in a project: its channel and key.
type Thread struct {
	Channel string
	Key     string
}

// Thread is the event's thread; ok is false for an event without a key.
func (e *Event) Thread() (Thread, bool) {
	return Thread{Channel: e.Channel, Key: e.ThreadKey}, e.ThreadKey != ""
}

// ActionByID returns the event's id action with that id.
func (e *Event) ActionByID(id string) (Action, bool) {
	for _, a := range e.Actions {
		if a.ID != "" && a.ID == id {
			return a, true
		}
	}
	return Action{}, false
}

// AsksForAck reports whether the event asks to be acknowledged: it is urgent and
// nobody has acknowledged it yet.
func (e *Event) AsksForAck() bool { return e.Priority == PriorityUrgent && e.Ack == nil }

// CheckRepeatUrgent validates a project's escalation: every at least a minute (at
// most a day), 0 to MaxRepeatUrgentTimes repeats (0: none).
func CheckRepeatUrgent(every time.Duration, times int) error {
	var p Problems
	if every < MinRepeatUrgentEvery || every > MaxRepeatUrgentEvery {
		p.Add("repeat_urgent_every", "range", "must be between 1m and 24h")
	}
	if times < 0 || times > MaxRepeatUrgentTimes {
		p.Add("repeat_urgent_times", "range", "must be between 0 and %d", MaxRepeatUrgentTimes)
	}
	return p.Err()
}

// Kinds of delivery job of acknowledgements, presses and escalation.
const (
	// DeliverRepeat pushes an urgent event again (Count: which repeat, from 1); written
	// when the event is expanded, and by each repeat for the next. An acknowledgement
	// deletes it in its own transaction.
	DeliverRepeat = "repeat"
	// DeliverAck is written with an acknowledgement: it becomes the event.acknowledged
	// webhooks and the "Acknowledged by" notifications.
	DeliverAck = "ack"
	// DeliverPress is written with a press (Ref: the press's ID): it becomes the
	// event.action webhooks.
	DeliverPress = "press"
	// DeliverWebhookAck and DeliverWebhookPress send event.acknowledged and
	// event.action to one webhook (Ref: the press's ID).
	DeliverWebhookAck   = "webhook-ack"
	DeliverWebhookPress = "webhook-press"
	// DeliverPushAck replaces an event's notification on one device with
	// "Acknowledged by …".
	DeliverPushAck = "push-ack"
)

// Webhook event types.
const (
	WebhookPublished    = "event.published"
	WebhookAction       = "event.action"
	WebhookAcknowledged = "event.acknowledged"
)

// IntentStore keeps acknowledgements, presses, escalation settings and the versions
// of a key.
type IntentStore interface {
	// AcknowledgeEvent records the first acknowledgement of an event of the account
	// and, in the same transaction, deletes the event's pending DeliverRepeat,
	// DeliverPush and DeliverEscalate jobs and queues one DeliverAck job: no repeat
	// is pushed and nobody more is told after it.
	// Acknowledging again changes nothing: it returns the event with its first Ack and
	// first=false. Errors: ENotFound (also for another account's event).
	AcknowledgeEvent(ctx context.Context, accountID int64, eventID, by string, at time.Time) (ev *Event, first bool, err error)
	// PressAction records a press of one of the event's id actions (p.ID is set when
	// empty; Label is taken from the event) and queues a DeliverPress job (Ref: p.ID)
	// in the same transaction. Only the latest MaxPresses of an event are kept.
	// Errors: ENotFound (no such event in the account, or no id action p.ActionID).
	PressAction(ctx context.Context, p *ActionPress) (*Event, error)
	// ListPresses returns the presses of an event of the account, oldest first.
	ListPresses(ctx context.Context, accountID int64, eventID string) ([]*ActionPress, error)
	// FindPress returns a press of the account. Errors: ENotFound.
	FindPress(ctx context.Context, accountID int64, id string) (*ActionPress, error)
	// Versions returns the events of the project's channel with the key, newest
	// first (by acceptance), at most limit of them, and how many there are in all.
	// Errors: EProjectNotFound.
	Versions(ctx context.Context, accountID int64, project string, t Thread, limit int) ([]*Event, int, error)
	// SetRepeatUrgent sets a project's escalation (CheckRepeatUrgent's rules).
	// Errors: EProjectNotFound, EValidation.
	SetRepeatUrgent(ctx context.Context, accountID int64, project string, every time.Duration, times int) error
}

// SettingPressKey names the server setting that holds the key of press tokens.
const SettingPressKey = "press_key"

// PressKey returns the server's key for press tokens, making it on the first call
// (servers starting together agree on one).
func PressKey(ctx context.Context, st PushStore) ([]byte, error) {
	return serverKey(ctx, st, SettingPressKey)
}

// serverKey returns the 32-byte key kept in a server setting, making it on the first
// call (servers starting together agree on one).
func serverKey(ctx context.Context, st PushStore, setting string) ([]byte, error) {
	b := make([]byte, 32)
	rand.Read(b)
	v, err := st.SetSettingOnce(ctx, setting, base64.RawURLEncoding.EncodeToString(b))
	if err != nil {
		return nil, err
	}
	return base64.RawURLEncoding.DecodeString(v)
}

// PressToken is what a notification carries so that its buttons (an id action,
// "Acknowledge") work from the device without a dashboard session: it names the
// device and the event, and only this server can make it.
func PressToken(key []byte, subscriptionID, eventID string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(subscriptionID + "\n" + eventID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// CheckPressToken reports whether token is PressToken's for the device and event.
func CheckPressToken(key []byte, subscriptionID, eventID, token string) bool {
	return hmac.Equal([]byte(PressToken(key, subscriptionID, eventID)), []byte(token))
}
