package tidings

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Push delivery kinds, statuses and limits.
const (
	DeliverPush         = "push"          // one event to one device
	DeliverPushTest     = "push-test"     // "send a test notification"
	DeliverQuietSummary = "quiet-summary" // the summary at the end of a user's quiet hours

	PushSent      = "sent"      // the push service accepted it
	PushPending   = "pending"   // queued or being retried
	PushMuted     = "muted"     // the user muted the project or channel
	PushQuiet     = "quiet"     // during the user's quiet hours: counted in the summary
	PushCollapsed = "collapsed" // over the device's flood limit: counted in a collapsed notification
	PushFailed    = "failed"    // the push service refused it for good, or 24 hours passed
	PushGone      = "gone"      // the subscription expired (404/410) and was removed
	PushUnsent    = "unsent"    // not sent, for a reason that is no failure (PushRecord.Detail says which)

	// MaxDevicesPerUser bounds a user's push subscriptions.
	MaxDevicesPerUser = 20
	// PushesPerMinute is how many notifications one device gets per minute; the rest
	// are collapsed into one.
	PushesPerMinute = 10
)

// PushSubscription is one device (browser profile) of a user that receives Web Push.
type PushSubscription struct {
	ID            string
	AccountID     int64
	UserID        int64
	Endpoint      string
	P256dh        string // the device's public key, base64url
	Auth          string // its authentication secret, base64url
	Name          string // "Pixel 8", chosen by the user
	Browser       string // from the User-Agent when it subscribed
	CreatedAt     time.Time
	LastSuccessAt time.Time
}

// EndpointHost is the push service's host, shown instead of the secret endpoint URL.
func (s *PushSubscription) EndpointHost() string {
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		return ""
	}
	return u.Host
}

// NotifyPrefs are one user's choices about notifications.
type NotifyPrefs struct {
	Muted []string // "project" for a whole project, "project/channel" for one channel
	// UrgentOnly: "project" or "project/channel" of which only urgent events are pushed.
	UrgentOnly []string
	QuietStart int // minutes after midnight; QuietStart == QuietEnd: no quiet hours
	QuietEnd   int
	TimeZone   string // IANA name; "" is UTC
}

// Mutes reports whether the user muted the project or the channel.
func (p *NotifyPrefs) Mutes(project, channel string) bool {
	for _, m := range p.Muted {
		if m == project || m == project+"/"+channel {
			return true
		}
	}
	return false
}

// Holds reports whether the user's choices keep ev from being pushed to them: a mute
// holds every event, "urgent only" all but urgent ones. (Quiet hours and flood control
// are decided when sending; they hold everything but urgent events.)
func (p *NotifyPrefs) Holds(ev *Event) bool {
	if p.Mutes(ev.Project, ev.Channel) {
		return true
	}
	if ev.Priority == PriorityUrgent {
		return false
	}
	for _, m := range p.UrgentOnly {
		if m == ev.Project || m == ev.Project+"/"+ev.Channel {
			return true
		}
	}
	return false
}

// QuietUntil reports whether now falls in the quiet hours, and when they end.
func (p *NotifyPrefs) QuietUntil(now time.Time) (time.Time, bool) {
	if p.QuietStart == p.QuietEnd {
		return time.Time{}, false
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	minute := local.Hour()*60 + local.Minute()
	at := func(dayOffset, minutes int) time.Time {
		d := midnight.AddDate(0, 0, dayOffset)
		return time.Date(d.Year(), d.Month(), d.Day(), minutes/60, minutes%60, 0, 0, loc)
	}
	if p.QuietStart < p.QuietEnd { // 13:00–15:00
		if minute >= p.QuietStart && minute < p.QuietEnd {
			return at(0, p.QuietEnd), true
		}
		return time.Time{}, false
	}
	switch { // across midnight: 22:00–07:00
	case minute >= p.QuietStart:
		return at(1, p.QuietEnd), true
	case minute < p.QuietEnd:
		return at(0, p.QuietEnd), true
	}
	return time.Time{}, false
}

// CheckPrefs validates preferences.
func (p *NotifyPrefs) Check(pr *Problems) {
	if p.QuietStart < 0 || p.QuietStart >= 24*60 || p.QuietEnd < 0 || p.QuietEnd >= 24*60 {
		pr.Add("quiet", "range", "quiet hours must be times of the day")
	}
	if _, err := time.LoadLocation(p.TimeZone); err != nil || strings.ContainsAny(p.TimeZone, " ") {
		pr.Add("time_zone", "unknown", "is not a time zone this server knows (like Europe/Berlin)")
	}
	if len(p.Muted) > 1000 {
		pr.Add("muted", "too_many", "at most 1000 mutes")
	}
	if len(p.UrgentOnly) > 1000 {
		pr.Add("urgent_only", "too_many", "at most 1000 urgent-only choices")
	}
}

// PushRecord is what became of one event for one device, or for a member's mail
// (SubscriptionID MailTarget(user)).
type PushRecord struct {
	EventID        string
	SubscriptionID string
	UserID         int64
	Status         string
	At             time.Time
	// Detail says more, for people: the mail server's last reply to a mail being
	// retried or refused, or why a mail was not sent. At most MaxRecordDetail
	// characters (RecordDetail); "" for most records.
	Detail string
}

// MaxRecordDetail bounds PushRecord.Detail.
const MaxRecordDetail = 300

// RecordDetail makes s fit PushRecord.Detail: one line of printable characters, at
// most MaxRecordDetail of them (an ellipsis marks a cut).
func RecordDetail(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if r := []rune(s); len(r) > MaxRecordDetail {
		s = string(r[:MaxRecordDetail-1]) + "…"
	}
	return s
}

// PushStore keeps push subscriptions, notification preferences and what was pushed.
type PushStore interface {
	// SavePushSubscription stores s; an endpoint the user has already is updated
	// (keys, name), and created is false then. An endpoint belongs to one user: another
	// user's is refused, never moved. Errors: EConflict when the endpoint is another
	// user's or the user has MaxDevicesPerUser devices.
	SavePushSubscription(ctx context.Context, s *PushSubscription) (created bool, err error)
	// ListPushSubscriptions returns the user's devices, oldest first.
	ListPushSubscriptions(ctx context.Context, userID int64) ([]*PushSubscription, error)
	// AccountPushSubscriptions returns the devices of every member of the account.
	AccountPushSubscriptions(ctx context.Context, accountID int64) ([]*PushSubscription, error)
	// FindPushSubscription returns a device by ID. Errors: ENotFound.
	FindPushSubscription(ctx context.Context, id string) (*PushSubscription, error)
	// RenamePushSubscription renames one of the user's devices. Errors: ENotFound.
	RenamePushSubscription(ctx context.Context, userID int64, id, name string) error
	// DeletePushSubscription removes one of the user's devices (userID 0: whoever's,
	// for subscriptions the push service says are gone). Errors: ENotFound.
	DeletePushSubscription(ctx context.Context, userID int64, id string) error
	// PushDelivered records a successful delivery to the device.
	PushDelivered(ctx context.Context, id string, at time.Time) error

	// NotifyPrefs returns the user's preferences (defaults when none were saved).
	NotifyPrefs(ctx context.Context, userID int64) (*NotifyPrefs, error)
	// AccountNotifyPrefs returns the saved preferences of the account's users, by user.
	AccountNotifyPrefs(ctx context.Context, accountID int64) (map[int64]*NotifyPrefs, error)
	// SetNotifyPrefs saves them.
	SetNotifyPrefs(ctx context.Context, userID int64, p *NotifyPrefs) error

	// RecordPushes keeps what became of events for devices (the latest status wins).
	RecordPushes(ctx context.Context, records []*PushRecord) error
	// EventPushes returns what became of one event of the account.
	EventPushes(ctx context.Context, accountID int64, eventID string) ([]*PushRecord, error)
	// CountPushes counts the user's records of a status since a time (quiet summaries).
	CountPushes(ctx context.Context, userID int64, status string, since time.Time) (int, error)
	// RecordedEvents returns the events of the user's records of one target (a
	// device's ID, or MailTarget(userID)) with a status since a time: their IDs, oldest
	// record first, at most limit of them, and how many there are in all (a
	// quiet-hours summary mail lists what arrived).
	RecordedEvents(ctx context.Context, userID int64, target, status string, since time.Time, limit int) ([]string, int, error)

	// Setting returns a server setting (such as the VAPID key). Errors: ENotFound.
	Setting(ctx context.Context, key string) (string, error)
	// SetSettingOnce stores a setting unless it exists, and returns the stored value:
	// servers starting together agree on one.
	SetSettingOnce(ctx context.Context, key, value string) (string, error)
}

// EndpointTaken is the error of every backend for a push endpoint that another user
// subscribed: it stays theirs (moving it would hand their notifications over).
func EndpointTaken() error {
	return Errorf(EConflict, "this browser already receives notifications for another user of Tidings: they remove it in Settings → Notifications first")
}

// pushHosts are the push services of Chrome/Android, Firefox, Safari/iOS and Edge.
var pushHosts = []string{"fcm.googleapis.com", "android.googleapis.com", ".push.services.mozilla.com",
	"web.push.apple.com", ".push.apple.com", ".notify.windows.com"}

// CheckPushEndpoint refuses endpoints that are not https:// URLs of a known push service,
// unless allowPrivate (tests, closed networks), which allows any http(s) URL.
func CheckPushEndpoint(endpoint string, allowPrivate bool) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || len(endpoint) > 2048 {
		return errors.New("endpoint: not a URL")
	}
	if allowPrivate && (u.Scheme == "https" || u.Scheme == "http") {
		return nil
	}
	if u.Scheme != "https" {
		return errors.New("endpoint: must be an https:// URL of a push service")
	}
	if p := u.Port(); p != "" && p != "443" {
		return errors.New("endpoint: a push service listens on port 443; other ports are refused")
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range pushHosts {
		if host == h || strings.HasPrefix(h, ".") && strings.HasSuffix(host, h) {
			return nil
		}
	}
	return fmt.Errorf("endpoint: %s is not a known push service (Chrome, Firefox, Safari or Edge)", host)
}

// CheckPushKeys checks a subscription's keys: a P-256 public point and a 16-byte secret.
func CheckPushKeys(p256dh, auth string) error {
	pub, err1 := base64.RawURLEncoding.DecodeString(strings.TrimRight(p256dh, "="))
	sec, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(auth, "="))
	if err1 != nil || err2 != nil || len(sec) != 16 {
		return errors.New("keys: p256dh and auth must be the base64url keys of the subscription")
	}
	if _, err := ecdh.P256().NewPublicKey(pub); err != nil {
		return errors.New("keys: p256dh is not a P-256 public key")
	}
	return nil
}
