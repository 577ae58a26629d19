package tidings

import (
	"context"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"
)

// Inbound hooks (api-contract.md, "Inbound hooks and the live stream"): a secret URL,
// POST /hooks/{id}, that turns a provider's webhook (Stripe, GitHub, Alertmanager,
// Grafana, or any JSON through templates) into events of one project and channel.
// The path's secret and the provider's signature are the credentials; the provider's
// delivery id is the idempotency key. Package hooks has one file per source.

// Hook sources.
const (
	HookStripe       = "stripe"
	HookGitHub       = "github"
	HookAlertmanager = "alertmanager"
	HookGrafana      = "grafana"
	HookJSON         = "json"
)

// Hook bounds.
const (
	MaxHookBody        = 1 << 20 // bytes of one delivery
	MaxHookTemplate    = 4096    // bytes of one field's template
	MaxHookAttempts    = 20      // deliveries kept in a hook's log
	MaxHooksPerAccount = 100
	// HookPathPrefix starts the secret of a hook's path: /hooks/hk_….
	HookPathPrefix = "hk_"
	// MinHookSecret is the fewest characters of a secret an owner chooses for a hook
	// (GitHub's webhook secret, a bearer token): a short one could be guessed.
	MinHookSecret = 16
)

// HookTemplate is a json hook's mapping: one Go text/template per field, run on the
// delivery's decoded JSON body (as map[string]any / []any). Tags renders a JSON object
// of tags ({"plan":"pro"}); Notify renders "true" or "false"; empty fields are left
// out of the event (Event is required).
type HookTemplate struct {
	Event, Description, Icon, Tags, UserID, Notify string
}

// Fields returns the template's fields by their names in the contract, in order.
func (t *HookTemplate) Fields() []struct{ Name, Text string } {
	return []struct{ Name, Text string }{{"event", t.Event}, {"description", t.Description}, {"icon", t.Icon},
		{"tags", t.Tags}, {"user_id", t.UserID}, {"notify", t.Notify}}
}

// Hook is one inbound hook of an account.
type Hook struct {
	ID        string // names the hook in lists and commands: HookID(PathHash); reveals nothing of the path
	PathHash  []byte // HashSecret of the path's secret ("hk_…"), shown once
	AccountID int64
	Project   string
	Channel   string
	Source    string
	Name      string
	// Secret checks signatures: Stripe's endpoint signing secret (whsec_…), GitHub's
	// webhook secret; for alertmanager, grafana and json, when set, requests must
	// carry "Authorization: Bearer SECRET". Kept like webhook secrets.
	Secret string
	// UserIDFrom (stripe): which object id becomes the events' user_id: "customer"
	// (the default) or "" for none.
	UserIDFrom string
	Template   *HookTemplate // json only
	CreatedAt  time.Time
}

// HookID is the public id of a hook whose path hashes to pathHash: "hook_" and 12 hex
// characters of a second hash, so that a listed id cannot be turned into the path.
func HookID(pathHash []byte) string {
	h := HashSecret(hex.EncodeToString(pathHash))
	return "hook_" + hex.EncodeToString(h[:6])
}

// NewHookPath returns a new hook path secret ("hk_" and 256 random bits) and its hash.
func NewHookPath() (secret string, hash []byte) {
	s, _ := NewSecret()
	secret = HookPathPrefix + s
	return secret, HashSecret(secret)
}

// NewHook is a hook as an owner asks for it.
type NewHook struct {
	Project, Channel, Source, Name, Secret, UserIDFrom string
	Template                                           *HookTemplate
}

// Check validates h, filling in defaults (UserIDFrom "customer" for stripe), and
// records every problem. Templates are measured here; parsing them (with the
// functions they may call) and bounding their cost is hooks.CheckTemplate's, which
// every caller runs after Check.
func (h *NewHook) Check(p *Problems) {
	CheckName(p, "project", h.Project)
	CheckName(p, "channel", h.Channel)
	switch h.Source {
	case HookStripe, HookGitHub, HookAlertmanager, HookGrafana, HookJSON:
	case "":
		p.Add("source", "required", "is required: stripe, github, alertmanager, grafana or json")
	default:
		p.Add("source", "enum", "must be stripe, github, alertmanager, grafana or json")
	}
	switch {
	case h.Secret == "":
	case h.Source == HookStripe && !stripeSecret(h.Secret):
		p.Add("secret", "format", "must be the endpoint's signing secret from Stripe's dashboard: whsec_ and at least 16 letters and digits")
	case h.Source != HookStripe && utf8.RuneCountInString(h.Secret) < MinHookSecret:
		p.Add("secret", "too_short", "must be at least %d characters (leave it out to have a long random one made)", MinHookSecret)
	}
	if len(h.Secret) > 256 || strings.ContainsFunc(h.Secret, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		p.Add("secret", "format", "must be at most 256 characters without spaces or control characters")
	}
	switch {
	case h.Source == HookStripe && h.UserIDFrom == "":
		h.UserIDFrom = "customer"
	case h.UserIDFrom != "" && h.Source != HookStripe:
		p.Add("user_id_from", "unexpected", "is for stripe hooks only")
	case h.UserIDFrom != "" && h.UserIDFrom != "customer" && h.UserIDFrom != "none":
		p.Add("user_id_from", "enum", `must be "customer" or "none"`)
	}
	if h.Source == HookJSON {
		if h.Template == nil || strings.TrimSpace(h.Template.Event) == "" {
			p.Add("template.event", "required", "a json hook needs a template for the event's name")
		}
		if h.Template != nil {
			for _, f := range h.Template.Fields() {
				if len(f.Text) > MaxHookTemplate {
					p.Add("template."+f.Name, "too_long", "must be at most %d bytes", MaxHookTemplate)
				}
			}
		}
	} else if h.Template != nil {
		p.Add("template", "unexpected", "is for json hooks only")
	}
	if len(h.Name) > 100 {
		p.Add("name", "too_long", "must be at most 100 characters")
	}
	checkText(p, "name", h.Name, ruleLine)
}

// stripeSecret reports whether s has the shape of a Stripe endpoint's signing secret:
// whsec_ and at least 16 letters and digits (a cut-off paste does not).
func stripeSecret(s string) bool {
	rest, ok := strings.CutPrefix(s, "whsec_")
	return ok && len(rest) >= 16 && !strings.ContainsFunc(rest, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
}

// HookAttempt is one delivery to a hook, as its log shows it.
type HookAttempt struct {
	HookID     string
	DeliveryID string // the provider's (Stripe event id, X-GitHub-Delivery), "" when none
	Status     int    // our answer: 200, 400, 401, 413, 429
	Events     int    // events stored (0 for a retried delivery answered from its key)
	Error      string // why it was refused, for people; never the body
	At         time.Time
}

// HookStore keeps inbound hooks and their delivery logs.
type HookStore interface {
	// CreateHook stores h (ID, PathHash, Project, Channel, … filled in) for the
	// account. Errors: EProjectNotFound, EChannelNotFound, ELimitReached (MaxHooksPerAccount).
	CreateHook(ctx context.Context, h *Hook) error
	// ListHooks returns the account's hooks, oldest first.
	ListHooks(ctx context.Context, accountID int64) ([]*Hook, error)
	// FindHook returns one of the account's hooks by ID. Errors: ENotFound.
	FindHook(ctx context.Context, accountID int64, id string) (*Hook, error)
	// FindHookByPath returns the hook whose path secret hashes to pathHash, whatever
	// its account. Errors: ENotFound.
	FindHookByPath(ctx context.Context, pathHash []byte) (*Hook, error)
	// DeleteHook deletes one of the account's hooks with its log. Errors: ENotFound.
	DeleteHook(ctx context.Context, accountID int64, id string) error
	// RecordHookAttempt keeps a delivery in the hook's log; only the latest
	// MaxHookAttempts are kept.
	RecordHookAttempt(ctx context.Context, accountID int64, a *HookAttempt) error
	// ListHookAttempts returns the hook's log, newest first.
	ListHookAttempts(ctx context.Context, accountID int64, hookID string) ([]*HookAttempt, error)
}
