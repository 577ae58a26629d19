package tidings

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Mail (api-contract.md, "Recipients, email and chat services"): notification mail,
// quiet-hours summaries, digests and account mail (invitations, password resets),
// sent through an SMTP server the operator names with --smtp-url.

// Kinds of delivery job of mail and escalation.
const (
	// DeliverMail mails one event to one member (Target: MailTarget(user); MessageID:
	// the mail's Message-ID, the same on every retry; Count: a collapsed mail's
	// number of events of the channel it stands for).
	DeliverMail = "mail"
	// DeliverMailSummary mails a member the events held by their quiet hours, at
	// their end (Target: MailTarget(user)).
	DeliverMailSummary = "mail-summary"
	// DeliverDigest mails a member the digest of one project (Target:
	// MailTarget(user); Ref: the project's name; NextAt: the period's end; Count: the
	// period's length in hours, 24 or 168).
	DeliverDigest = "digest"
	// DeliverEscalate widens an unacknowledged urgent event to every member, its
	// project's EscalateAfter after it was accepted (api-contract: escalation order).
	DeliverEscalate = "escalate"
)

// mailTargetPrefix marks the Target of mail jobs, and the SubscriptionID of the
// PushRecord of a member's mail: "mail:42".
const mailTargetPrefix = "mail:"

// MailTarget is the Target of a member's mail jobs and the SubscriptionID of the
// record of what became of an event's mail to them.
func MailTarget(userID int64) string { return mailTargetPrefix + strconv.FormatInt(userID, 10) }

// MailTargetUser returns the user of a MailTarget; false for anything else (a
// device's subscription ID).
func MailTargetUser(target string) (int64, bool) {
	s, ok := strings.CutPrefix(target, mailTargetPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// MailMessage is one message to send.
type MailMessage struct {
	To      string // one address
	Subject string
	Text    string // the text/plain part (required)
	HTML    string // the text/html part: "" sends text only
	// MessageID is the Message-ID header, "<…@…>": the same on every retry of one
	// delivery. "" lets the sender make one.
	MessageID string
	// ListUnsubscribe is the one-click unsubscribe URL (RFC 8058): the sender adds
	// List-Unsubscribe and List-Unsubscribe-Post: List-Unsubscribe=One-Click.
	ListUnsubscribe string
}

// Mailer sends mail. A refusal by the server is a *MailError; any other error (no
// connection, a connection cut mid-send) is temporary.
type Mailer interface {
	Send(ctx context.Context, m *MailMessage) error
}

// MailError is an SMTP server's refusal: its reply code and text.
type MailError struct {
	Code  int    // 4xx temporary, 5xx permanent
	Reply string // the server's words
}

func (e *MailError) Error() string {
	return fmt.Sprintf("the mail server refused it: %d %s", e.Code, e.Reply)
}

// Temporary reports whether trying again later may work (4xx).
func (e *MailError) Temporary() bool { return e.Code >= 400 && e.Code < 500 }

// Member routes: how a member is notified of a project's (or a channel's) events.
const (
	RoutePush  = "push"
	RouteEmail = "email"
	RouteNone  = "none"
)

// Routes are a member's routes for a project or a channel.
type Routes struct{ Push, Email bool }

// DefaultRoutes are a member's routes where they chose none: push.
var DefaultRoutes = Routes{Push: true}

// ParseRoutes reads push, email, push,email (either order) or none.
func ParseRoutes(s string) (Routes, error) {
	var r Routes
	s = strings.ToLower(strings.TrimSpace(s))
	if s == RouteNone {
		return r, nil
	}
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case RoutePush:
			r.Push = true
		case RouteEmail:
			r.Email = true
		default:
			var p Problems
			p.Add("by", "enum", `must be push, email, push,email or none (got %q)`, s)
			return Routes{}, p.Err()
		}
	}
	return r, nil
}

// String is the routes as ParseRoutes reads them.
func (r Routes) String() string {
	switch {
	case r.Push && r.Email:
		return "push,email"
	case r.Push:
		return RoutePush
	case r.Email:
		return RouteEmail
	}
	return RouteNone
}

// MemberRoute is one saved choice of a member: their routes for a project (Channel
// "") or for one of its channels.
type MemberRoute struct {
	UserID           int64
	Project, Channel string
	Routes           Routes
}

// RoutesFor resolves a member's routes for a channel: the channel's own choice, else
// the project's, else DefaultRoutes.
func RoutesFor(saved []*MemberRoute, userID int64, project, channel string) Routes {
	r, found := DefaultRoutes, false
	for _, m := range saved {
		if m.UserID != userID || m.Project != project {
			continue
		}
		if m.Channel == channel && channel != "" {
			return m.Routes
		}
		if m.Channel == "" && !found {
			r, found = m.Routes, true
		}
	}
	return r
}

// Digest frequencies, chosen per member and project.
const (
	DigestOff    = "off"
	DigestDaily  = "daily"
	DigestWeekly = "weekly"
)

// DigestHour is the local hour at which digests are sent: daily ones each day, weekly
// ones on Mondays, for the period that ended then.
const DigestHour = 8

// ParseDigest reads off (or ""), daily or weekly.
func ParseDigest(s string) (string, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "", DigestOff:
		return DigestOff, nil
	case DigestDaily, DigestWeekly:
		return s, nil
	}
	var p Problems
	p.Add("digest", "enum", `must be off, daily or weekly (got %q)`, s)
	return "", p.Err()
}

// DigestPeriod returns the period a digest sent at or before now covers: the latest
// [from, to) that ended at DigestHour in loc (daily: one day; weekly: Monday to Monday).
func DigestPeriod(every string, now time.Time, loc *time.Location) (from, to time.Time) {
	local := now.In(loc)
	to = time.Date(local.Year(), local.Month(), local.Day(), DigestHour, 0, 0, 0, loc)
	if to.After(local) {
		to = to.AddDate(0, 0, -1)
	}
	if every == DigestWeekly {
		for to.Weekday() != time.Monday {
			to = to.AddDate(0, 0, -1)
		}
		return to.AddDate(0, 0, -7), to
	}
	return to.AddDate(0, 0, -1), to
}

// DigestPref is one member's digest of one project, as the scheduler reads it.
type DigestPref struct {
	AccountID int64
	UserID    int64
	Email     string
	Project   string
	Every     string // DigestDaily or DigestWeekly
	TimeZone  string // the member's (NotifyPrefs.TimeZone; "" is UTC)
	// LastPeriod is the end of the last period whose digest was queued (zero: none).
	LastPeriod time.Time
}

// DigestContent is what a digest says of a project's period.
type DigestContent struct {
	Project  string
	From, To time.Time
	Events   int           // every event of the period
	Channels []DigestCount // events per channel, most first
	// TopEvents are the most frequent events by name (with an icon one of them had),
	// at most 5, most first.
	TopEvents []DigestCount
	// Insights are those updated in the period, at most 10, latest first.
	Insights []*Insight
	// NewUsers counts the people first seen in the period; NewUserIDs names at most
	// 10 of them, latest first.
	NewUsers   int
	NewUserIDs []string
}

// DigestCount is a name and how many events it had.
type DigestCount struct {
	Name  string
	Icon  string
	Count int
}

// MaxEscalateAfter bounds a project's escalation delay.
const MaxEscalateAfter = 24 * time.Hour

// CheckEscalateAfter validates a project's escalation delay: 0 (none) or 1m–24h.
func CheckEscalateAfter(after time.Duration) error {
	if after != 0 && (after < time.Minute || after > MaxEscalateAfter) {
		var p Problems
		p.Add("escalate_after", "range", "must be 0 (never) or between 1m and 24h")
		return p.Err()
	}
	return nil
}

// RouteStore keeps members' routes and digests and projects' escalation.
type RouteStore interface {
	// SetRoutes saves a member's routes for a project (channel "") or one channel;
	// r nil forgets the choice (the channel follows the project; the project:
	// DefaultRoutes). Errors: ENotFound (no such user in the account),
	// EProjectNotFound, EChannelNotFound.
	SetRoutes(ctx context.Context, accountID, userID int64, project, channel string, r *Routes) error
	// AccountRoutes returns every saved choice of the account's members.
	AccountRoutes(ctx context.Context, accountID int64) ([]*MemberRoute, error)
	// SetDigest saves a member's digest of a project (DigestOff forgets it).
	// Errors: ENotFound (no such user), EProjectNotFound, EValidation.
	SetDigest(ctx context.Context, accountID, userID int64, project, every string) error
	// MemberDigests returns a member's digests, by project name (DigestOff left out).
	MemberDigests(ctx context.Context, accountID, userID int64) (map[string]string, error)
	// ListDigests returns every digest of every account, for the scheduler.
	ListDigests(ctx context.Context) ([]*DigestPref, error)
	// ClaimDigest records that the digest of the period ending at periodEnd is queued
	// for p's member and project, and adds job, in one transaction; false (and no
	// job) when that period or a later one was claimed already, or the digest is
	// gone.
	ClaimDigest(ctx context.Context, p *DigestPref, periodEnd time.Time, job *Delivery) (bool, error)
	// DigestOf returns what the digest of a project's [from, to) says.
	// Errors: EProjectNotFound.
	DigestOf(ctx context.Context, accountID int64, project string, from, to time.Time) (*DigestContent, error)
	// SetEscalation sets the project's EscalateAfter (CheckEscalateAfter's rules).
	// Errors: EProjectNotFound, EValidation.
	SetEscalation(ctx context.Context, accountID int64, project string, after time.Duration) error
}

// SettingMailKey names the server setting that holds the key of unsubscribe links.
const SettingMailKey = "mail_key"

// MailKey returns the server's key for unsubscribe links, making it on the first call.
func MailKey(ctx context.Context, st PushStore) ([]byte, error) {
	return serverKey(ctx, st, SettingMailKey)
}

// UnsubscribeToken signs "switch this project's email off for this member" (project
// UnsubscribeAll: every project's): the credential of the unsubscribe link and of its
// one-click POST (RFC 8058).
func UnsubscribeToken(key []byte, userID int64, project string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("unsubscribe\n" + strconv.FormatInt(userID, 10) + "\n" + project))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// CheckUnsubscribeToken reports whether token is UnsubscribeToken's.
func CheckUnsubscribeToken(key []byte, userID int64, project, token string) bool {
	return hmac.Equal([]byte(UnsubscribeToken(key, userID, project)), []byte(token))
}

// UnsubscribeAll is the project of an unsubscribe link that switches off the member's
// email of every project, and their digests: the quiet-hours summary's, which stands
// for events of several projects.
const UnsubscribeAll = "*"

// UnsubscribeURL is the link of a member's mail of a project: base is the public URL.
func UnsubscribeURL(base string, key []byte, userID int64, project string) string {
	return strings.TrimRight(base, "/") + "/unsubscribe?u=" + strconv.FormatInt(userID, 10) +
		"&p=" + url.QueryEscape(project) + "&t=" + UnsubscribeToken(key, userID, project)
}
