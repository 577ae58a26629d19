package tidings

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"time"
)

// Webhook formats and event selections.
const (
	FormatStandard = "standard" // Standard Webhooks: signed JSON
	FormatSlack    = "slack"
	FormatDiscord  = "discord"
	FormatNtfy     = "ntfy"
	// Chat services (chatformats.go).
	FormatTelegram   = "telegram"
	FormatTeams      = "teams"
	FormatGoogleChat = "google-chat"
	FormatMattermost = "mattermost"
	FormatPushover   = "pushover"
	FormatGotify     = "gotify"

	WebhookNotify = "notify" // only events published with notify: true
	WebhookAll    = "all"    // every event
)

// Webhook sends the events of a project (optionally one channel) to a URL.
type Webhook struct {
	ID        string
	AccountID int64
	Project   string
	Channel   string // "" for every channel
	URL       string
	Format    string
	Events    string // WebhookNotify or WebhookAll
	Name      string
	Secret    string // whsec_…, for FormatStandard; Pushover's app token when not in the URL; shown once
	ChatID    string // FormatTelegram: the chat to post to
	UserKey   string // FormatPushover: the user or group key
	CreatedAt time.Time
}

// NewWebhook is a webhook as a person asks for it, before it is stored.
type NewWebhook struct {
	Project, Channel, URL, Format, Events, Name string
	// ChatID (telegram), UserKey and Secret (pushover's app token, when not in the
	// URL's token= parameter) are the chat services' (chatformats.go).
	ChatID, UserKey, Secret string
}

// Check validates w, filling in defaults (standard, notify), and records every problem.
// Whether the URL's address is private is decided when connecting, not here.
func (w *NewWebhook) Check(p *Problems) {
	CheckName(p, "project", w.Project)
	if w.Channel != "" {
		CheckName(p, "channel", w.Channel)
	}
	u, err := url.Parse(w.URL)
	switch {
	case w.URL == "":
		p.Add("url", "required", "is required")
	case len(w.URL) > 2048:
		p.Add("url", "too_long", "must be at most 2048 characters")
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil:
		p.Add("url", "format", "must be an http:// or https:// address without user name or password")
	}
	switch w.Format {
	case "":
		w.Format = FormatStandard
	case FormatStandard, FormatSlack, FormatDiscord, FormatNtfy:
	case FormatTelegram, FormatTeams, FormatGoogleChat, FormatMattermost, FormatPushover, FormatGotify:
		if !p.Has("url") {
			w.checkChat(p, u)
		}
	default:
		p.Add("format", "enum", "must be standard, slack, discord, ntfy, telegram, teams, google-chat, mattermost, pushover or gotify")
	}
	if w.ChatID != "" && w.Format != FormatTelegram {
		p.Add("chat_id", "unexpected", "is for telegram webhooks only")
	}
	if w.UserKey != "" && w.Format != FormatPushover {
		p.Add("user_key", "unexpected", "is for pushover webhooks only")
	}
	if w.Secret != "" && w.Format != FormatPushover {
		p.Add("secret", "unexpected", "is for pushover webhooks only (a standard webhook's signing secret is made by Tidings)")
	}
	switch w.Events {
	case "":
		w.Events = WebhookNotify
	case WebhookNotify, WebhookAll:
	default:
		p.Add("events", "enum", "must be notify or all")
	}
	if len(w.Name) > 100 {
		p.Add("name", "too_long", "must be at most 100 characters")
	}
	checkText(p, "name", w.Name, ruleLine)
}

// Wants reports whether the webhook sends ev.
func (w *Webhook) Wants(ev *Event) bool {
	if w.Project != ev.Project || w.Channel != "" && w.Channel != ev.Channel {
		return false
	}
	return w.Events == WebhookAll || ev.Notify
}

// WantsIntent reports whether the webhook sends the acknowledgements and action
// presses of ev: standard webhooks of its project and channel do, whatever their
// Events setting.
func (w *Webhook) WantsIntent(ev *Event) bool {
	return w.Format == FormatStandard && w.Project == ev.Project && (w.Channel == "" || w.Channel == ev.Channel)
}

// NewWebhookSecret returns a Standard Webhooks signing secret: "whsec_" and 32 random
// bytes in base64.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// NewID returns a random identifier with a prefix, like "wh_3f2a…".
func NewID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// WebhookAttempt is one try of sending an event to a webhook: what the UI lists.
type WebhookAttempt struct {
	WebhookID string
	MessageID string // the webhook-id header: the same on every retry
	EventID   string
	Attempt   int
	Status    int    // HTTP status; 0 when no answer came
	Error     string // why it failed, for people
	Duration  time.Duration
	At        time.Time
}

// OK reports whether the receiver accepted it.
func (a *WebhookAttempt) OK() bool { return a.Status >= 200 && a.Status < 300 }

// Kinds of delivery job.
const (
	// DeliverEvent is written with the event, in its transaction: it becomes one job
	// per target (device, webhook) when it is expanded.
	DeliverEvent   = "event"
	DeliverWebhook = "webhook"
	DeliverTest    = "webhook-test"
)

// DeliveryMaxAge is how long a delivery is retried before it is given up.
const DeliveryMaxAge = 24 * time.Hour

// Delivery is one job of the outbox.
type Delivery struct {
	ID        int64
	Kind      string
	AccountID int64
	EventID   string
	Target    string // the webhook's ID
	MessageID string // stable across retries (webhook-id)
	Attempts  int
	Count     int    // a collapsed push: how many events of the channel it stands for; a repeat: its number
	Ref       string // DeliverPress, DeliverWebhookPress: the press's ID
	NextAt    time.Time
	CreatedAt time.Time
}

// DeliveryStore keeps webhooks and the outbox of deliveries.
type DeliveryStore interface {
	// CreateWebhook stores a webhook of the account. Errors: EProjectNotFound, EChannelNotFound.
	CreateWebhook(ctx context.Context, accountID int64, w *Webhook) error
	// ListWebhooks returns the account's webhooks, oldest first.
	ListWebhooks(ctx context.Context, accountID int64) ([]*Webhook, error)
	// FindWebhook returns one of the account's webhooks. Errors: ENotFound.
	FindWebhook(ctx context.Context, accountID int64, id string) (*Webhook, error)
	// DeleteWebhook deletes it with its pending deliveries. Errors: ENotFound.
	DeleteWebhook(ctx context.Context, accountID int64, id string) error
	// WebhooksFor returns the webhooks of a project that may want its events (every
	// channel's, and those of the given channel).
	WebhooksFor(ctx context.Context, accountID int64, project, channel string) ([]*Webhook, error)
	// RecordWebhookAttempt keeps an attempt; only the latest 20 of a webhook are kept.
	RecordWebhookAttempt(ctx context.Context, a *WebhookAttempt) error
	// ListWebhookAttempts returns the latest attempts of the account's webhook, newest first.
	ListWebhookAttempts(ctx context.Context, accountID int64, webhookID string) ([]*WebhookAttempt, error)
	// WebhookRetries says when the deliveries of the account's webhook still in the
	// outbox are tried next, by message ID (an attempt's MessageID): the delivery log
	// tells a failure that is retried from one given up. Another account's: none.
	WebhookRetries(ctx context.Context, accountID int64, webhookID string) (map[string]time.Time, error)

	// FindEventByID returns an event of the account by ID alone. Errors: ENotFound.
	FindEventByID(ctx context.Context, accountID int64, id string) (*Event, error)
	// EnqueueDelivery adds a job to the outbox (events add theirs in their own transaction).
	EnqueueDelivery(ctx context.Context, d *Delivery) error
	// ClaimDeliveries leases up to limit due jobs of the given kinds (none given: any
	// kind), oldest due first, for lease; a job whose lease runs out (its claimer died)
	// is due again.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, kinds ...string) ([]*Delivery, error)
	// ReplaceDelivery deletes job id and adds jobs (a job whose MessageID exists
	// already is skipped) and push records, in one transaction: an expanded event is
	// never lost between the two. When job id is gone (its event was deleted meanwhile,
	// or another claimer replaced it), or its event is, it adds nothing.
	ReplaceDelivery(ctx context.Context, id int64, jobs []*Delivery, records []*PushRecord) error
	// FinishDelivery deletes a job that is done (delivered or given up).
	FinishDelivery(ctx context.Context, id int64) error
	// RetryDelivery schedules a job again.
	RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time) error
	// PendingDeliveries counts the outbox and the creation time of its oldest job.
	PendingDeliveries(ctx context.Context) (n int, oldest time.Time, err error)
}
