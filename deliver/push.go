package deliver

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/tidings-dev/tidings"
)

// Web Push parameters (RFC 8030, 8291, 8292).
const (
	pushTTL = 86400 // seconds a push service keeps an undelivered message
	// recordSize pads every message to this many bytes: the encrypted body stays under
	// 3,000 bytes (Firefox on Android refuses 4,096) and hides the payload's length.
	recordSize = 2900
	maxBodyLen = 300 // characters of description in a notification
	// collapseEvery is how often an over-limit device gets an updated collapsed notification.
	collapseEvery = 10 * time.Second
	settingVAPID  = "vapid_private_key"
)

// VAPID is the server's application-server key pair (base64url, as browsers and
// webpush-go take them) and the contact in its JWTs.
type VAPID struct {
	Public, Private string
	Subject         string // mailto:… or https://…
}

// LoadVAPID reads the key pair from file when one is named, or from the store, making
// one on the first start.
func LoadVAPID(ctx context.Context, st tidings.Store, file, subject string) (*VAPID, error) {
	var private string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("VAPID key file: %w", err)
		}
		private = strings.TrimSpace(string(b))
	} else {
		made, _, err := webpush.GenerateVAPIDKeys()
		if err != nil {
			return nil, err
		}
		if private, err = st.SetSettingOnce(ctx, settingVAPID, made); err != nil {
			return nil, err
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(private)
	if err != nil {
		return nil, fmt.Errorf("VAPID private key: not base64url: %w", err)
	}
	key, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("VAPID private key: %w", err)
	}
	if subject == "" {
		subject = "mailto:admin@localhost"
	}
	if !strings.HasPrefix(subject, "mailto:") && !strings.HasPrefix(subject, "https://") {
		return nil, fmt.Errorf("the VAPID subject must start with mailto: or https:// (got %q)", subject)
	}
	return &VAPID{Public: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), Private: private, Subject: subject}, nil
}

// Message is the JSON a notification carries to the service worker (api-contract.md,
// "Push notifications" and "Priority, links, actions, keys and acknowledgement").
type Message struct {
	Title    string           `json:"title"`
	Body     string           `json:"body"`
	URL      string           `json:"url"`                 // where a tap goes: the event's url, else its page
	EventURL string           `json:"event_url,omitempty"` // the event's page, always
	Project  string           `json:"project,omitempty"`
	Channel  string           `json:"channel,omitempty"`
	EventID  string           `json:"event_id,omitempty"`
	Tag      string           `json:"tag"` // a notification with the same tag replaces the shown one
	Priority string           `json:"priority,omitempty"`
	Actions  []tidings.Action `json:"actions,omitempty"`
	Key      string           `json:"key,omitempty"`
	// Renotify buzzes again when the notification replaces one with its tag (a repeat,
	// a new version of a key).
	Renotify           bool   `json:"renotify,omitempty"`
	Silent             bool   `json:"silent,omitempty"`              // min and low, and "Acknowledged by"
	RequireInteraction bool   `json:"require_interaction,omitempty"` // urgent: stays until dismissed
	Ack                bool   `json:"ack,omitempty"`                 // show "Acknowledge"
	Press              *Press `json:"press,omitempty"`               // how the buttons call POST /push/press
}

// Press authorises a notification's buttons (an id action, "Acknowledge") to call
// POST /push/press without a session: Token is tidings.PressToken(key, Sub, event).
type Press struct {
	Sub   string `json:"sub"`
	Token string `json:"token"`
}

// eventPath is the event's page in the dashboard.
func eventPath(ev *tidings.Event) string { return "/p/" + ev.Project + "/events/" + ev.ID }

// eventMessage is the notification of ev for the device sub; renotify for a repeat.
func eventMessage(ev *tidings.Event, sub string, pressKey []byte, renotify bool) Message {
	page := eventPath(ev)
	m := Message{Title: title(ev), Body: PlainText(ev, maxBodyLen), URL: page, EventURL: page,
		Project: ev.Project, Channel: ev.Channel, EventID: ev.ID, Tag: Tag(ev),
		Priority: ev.Priority.String(), Actions: ev.Actions, Key: ev.ThreadKey,
		Renotify:           renotify || ev.ThreadKey != "",
		Silent:             ev.Priority == tidings.PriorityMin || ev.Priority == tidings.PriorityLow,
		RequireInteraction: ev.Priority == tidings.PriorityUrgent,
		Ack:                ev.AsksForAck()}
	if ev.URL != "" {
		m.URL = ev.URL
	}
	pressed := m.Ack
	for _, a := range ev.Actions {
		pressed = pressed || a.ID != ""
	}
	if pressed {
		m.Press = &Press{Sub: sub, Token: tidings.PressToken(pressKey, sub, ev.ID)}
	}
	return m
}

// ackMessage replaces an acknowledged event's notification on a device, silently.
func ackMessage(ev *tidings.Event) Message {
	page := eventPath(ev)
	return Message{Title: "✓ Acknowledged by " + ev.Ack.By, Body: title(ev), URL: page, EventURL: page,
		Project: ev.Project, Channel: ev.Channel, EventID: ev.ID, Tag: Tag(ev), Priority: ev.Priority.String(),
		Key: ev.ThreadKey, Silent: true}
}

// Tag is the notification tag of an event: one per key in a channel, so that a new
// version replaces the shown one ("k-" and 24 hex digits), else the event's ID.
func Tag(ev *tidings.Event) string {
	if ev.ThreadKey == "" {
		return ev.ID
	}
	sum := sha256.Sum256([]byte(ev.Project + "/" + ev.Channel + "/" + ev.ThreadKey))
	return "k-" + hex.EncodeToString(sum[:])[:24]
}

// Topic is the Web Push Topic of an event (at most 32 URL-safe characters): the push
// service replaces a pending message with the same Topic. A keyed event's is its key
// when that fits, else "k" and 31 characters of its hash; an urgent event without a
// key has one of its own, so that its pending repeats and its "Acknowledged by"
// replace each other; other events have none.
func Topic(ev *tidings.Event) string {
	if ev.ThreadKey == "" {
		if ev.Priority != tidings.PriorityUrgent {
			return ""
		}
		sum := sha256.Sum256([]byte(ev.ID))
		return "e" + base64.RawURLEncoding.EncodeToString(sum[:])[:31]
	}
	if len(ev.ThreadKey) <= 32 && !strings.ContainsFunc(ev.ThreadKey, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		return ev.ThreadKey
	}
	sum := sha256.Sum256([]byte(ev.Project + "/" + ev.Channel + "/" + ev.ThreadKey))
	return "k" + base64.RawURLEncoding.EncodeToString(sum[:])[:31]
}

// topic names a collapsed notification: the push service replaces a pending message
// with the same Topic (at most 32 URL-safe characters).
func topic(project, channel string) string {
	sum := sha256.Sum256([]byte(project + "/" + channel))
	return "c" + hex.EncodeToString(sum[:12])
}

// maxPayload is the largest message that fits one padded record of recordSize bytes:
// less the AEAD tag (16), the aes128gcm header (86) and the padding delimiter (1).
const maxPayload = recordSize - 16 - 86 - 1

// errTooLarge is a message that does not fit even without its optional parts.
var errTooLarge = errors.New("the notification does not fit in a Web Push message")

// encodeMessage is m as JSON of at most maxPayload bytes: what does not fit is
// dropped in this order — the body text, the action URLs (the service worker then
// opens the event page), the url (the event page instead), the key.
func encodeMessage(m Message) ([]byte, error) {
	for step := 0; ; step++ {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // "<" as \u003c would cost 6 bytes
		if err := enc.Encode(m); err != nil {
			return nil, err
		}
		if out := bytes.TrimSuffix(b.Bytes(), []byte("\n")); len(out) <= maxPayload {
			return out, nil
		}
		switch step {
		case 0:
			m.Body = ""
		case 1:
			actions := make([]tidings.Action, len(m.Actions))
			for i, a := range m.Actions {
				actions[i] = tidings.Action{Label: a.Label, ID: a.ID}
			}
			m.Actions = actions
		case 2:
			m.URL = m.EventURL
		case 3:
			m.Key = ""
		default:
			return nil, errTooLarge
		}
	}
}

// flood limits one device to PushesPerMinute notifications a minute; past that it
// gets a collapsed "N more events in #channel" at most every collapseEvery.
type flood struct {
	every   time.Duration // between collapsed ones (0: collapseEvery)
	mu      sync.Mutex
	windows map[string]*window
	swept   time.Time
}

type window struct {
	start        time.Time
	sent         int
	more         map[string]int // channel → events beyond the limit
	lastCollapse time.Time
}

// admit decides for one event to one device: send it (normal), send a collapsed
// notification counting n events of the channel, or neither (counted for the next one).
func (f *flood) admit(device, channel string, now time.Time) (normal bool, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.windows == nil {
		f.windows = map[string]*window{}
	}
	if now.Sub(f.swept) > time.Minute {
		for k, w := range f.windows {
			if now.Sub(w.start) > 2*time.Minute {
				delete(f.windows, k)
			}
		}
		f.swept = now
	}
	w := f.windows[device]
	if w == nil || now.Sub(w.start) >= time.Minute {
		w = &window{start: now, more: map[string]int{}}
		f.windows[device] = w
	}
	if w.sent < tidings.PushesPerMinute {
		w.sent++
		return true, 0
	}
	w.more[channel]++
	every := f.every
	if every == 0 {
		every = collapseEvery
	}
	if now.Sub(w.lastCollapse) < every {
		return false, 0
	}
	w.lastCollapse = now
	return false, w.more[channel]
}

// sendPush delivers one event (or test, or summary) to one device.
func (r *Runner) sendPush(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	now := r.cfg.Now()
	sub, err := r.targets.sub(ctx, st, j.AccountID, j.Target, now)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return st.FinishDelivery(ctx, j.ID) // removed meanwhile
	}
	if err != nil {
		return err
	}
	var msg Message
	var opts webpush.Options
	var ev *tidings.Event
	switch j.Kind {
	case tidings.DeliverPushTest:
		msg = Message{Title: "🔔 Test notification", Body: "Notifications work on this device.", URL: "/settings/devices", Tag: "test"}
	default:
		if ev, err = r.events.get(ctx, st, j.AccountID, j.EventID, now); err == nil &&
			(j.Kind == tidings.DeliverPushAck || isRepeatPush(j) || ev.Priority == tidings.PriorityUrgent) {
			// Read fresh: an acknowledgement since the cache's read must be seen.
			ev, err = st.FindEventByID(ctx, j.AccountID, j.EventID)
		}
		if tidings.ErrorCode(err) == tidings.ENotFound {
			return st.FinishDelivery(ctx, j.ID)
		} else if err != nil {
			return err
		}
		switch {
		case j.Kind == tidings.DeliverPushAck:
			if ev.Ack == nil {
				return st.FinishDelivery(ctx, j.ID)
			}
			msg = ackMessage(ev)
			opts.Topic, opts.Urgency = Topic(ev), webpush.UrgencyNormal
		case j.Count > 0:
			msg = Message{Title: fmt.Sprintf("%d more events in #%s", j.Count, ev.Channel), Body: "Open Tidings to see them all.",
				URL: "/p/" + ev.Project + "/c/" + ev.Channel, Project: ev.Project, Channel: ev.Channel, Tag: "more-" + ev.Project + "-" + ev.Channel}
			opts.Topic = topic(ev.Project, ev.Channel)
		case ev.Ack != nil && ev.Priority == tidings.PriorityUrgent:
			// Acknowledged since this push was queued: the acknowledgement deleted the
			// jobs still waiting; this one was already claimed. No repeat after an ack.
			return st.FinishDelivery(ctx, j.ID)
		default:
			key, err := r.pressKey(ctx)
			if err != nil {
				return err
			}
			msg = eventMessage(ev, sub.ID, key, isRepeatPush(j))
			opts.Topic, opts.Urgency = Topic(ev), webpush.Urgency(ev.Priority.Urgency())
		}
	}
	out := r.push(ctx, sub, msg, opts)
	if ev != nil && j.Kind == tidings.DeliverPush && j.Count == 0 {
		switch {
		case out.err == "":
			r.record(ctx, ev.ID, sub.ID, tidings.PushSent, now)
		case out.status == http.StatusNotFound || out.status == http.StatusGone:
			r.record(ctx, ev.ID, sub.ID, tidings.PushGone, now)
		case !out.retry:
			r.record(ctx, ev.ID, sub.ID, tidings.PushFailed, now)
		}
	}
	switch {
	case out.err == "":
		if err := st.PushDelivered(ctx, sub.ID, now); err != nil {
			return err
		}
	case out.status == http.StatusNotFound || out.status == http.StatusGone:
		// The subscription expired or was withdrawn: it will never work again.
		r.cfg.Observe("push", "gone")
		if err := st.DeletePushSubscription(ctx, 0, sub.ID); err != nil && tidings.ErrorCode(err) != tidings.ENotFound {
			return err
		}
		return st.FinishDelivery(ctx, j.ID)
	}
	return r.settle(ctx, "push", j, out)
}

// record keeps what became of an event for a device; a failure to record is logged
// only: the delivery itself is what matters.
func (r *Runner) record(ctx context.Context, eventID, subID, status string, at time.Time) {
	if err := r.cfg.Store.RecordPushes(ctx, []*tidings.PushRecord{{EventID: eventID, SubscriptionID: subID, Status: status, At: at}}); err != nil {
		r.log.Warn("recording a push", "err", err)
	}
}

// push encrypts and sends one message to one device.
func (r *Runner) push(ctx context.Context, sub *tidings.PushSubscription, msg Message, opts webpush.Options) outcome {
	if r.cfg.VAPID == nil {
		return outcome{err: "push is not configured on this server"}
	}
	payload, err := encodeMessage(msg)
	if err != nil {
		return outcome{err: err.Error()}
	}
	opts.HTTPClient = r.cfg.Client
	opts.RecordSize = recordSize
	opts.TTL = pushTTL
	if opts.Urgency == "" {
		opts.Urgency = webpush.UrgencyHigh
	}
	opts.VAPIDPublicKey, opts.VAPIDPrivateKey = r.cfg.VAPID.Public, r.cfg.VAPID.Private
	// webpush-go prefixes "mailto:" to any subject that is not an https: URL.
	opts.Subscriber = strings.TrimPrefix(r.cfg.VAPID.Subject, "mailto:")
	start := time.Now()
	// The library appends to the payload: give it no room to share.
	res, err := webpush.SendNotificationWithContext(ctx, payload[:len(payload):len(payload)],
		&webpush.Subscription{Endpoint: sub.Endpoint, Keys: webpush.Keys{P256dh: sub.P256dh, Auth: sub.Auth}}, &opts)
	out := outcome{took: time.Since(start)}
	if err != nil {
		out.err, out.retry = PublicError(err), !errors.Is(err, ErrPrivateTarget) && !errors.Is(err, webpush.ErrMaxPadExceeded)
		return out
	}
	return classify(res, out)
}

// summarise sends the summary of a user's quiet hours to each of the user's devices.
func (r *Runner) summarise(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	userID, err := strconv.ParseInt(j.Target, 10, 64)
	if err != nil {
		return st.FinishDelivery(ctx, j.ID)
	}
	n, err := st.CountPushes(ctx, userID, tidings.PushQuiet, j.CreatedAt)
	if err != nil {
		return err
	}
	subs, err := st.ListPushSubscriptions(ctx, userID)
	if err != nil {
		return err
	}
	if n > 0 {
		msg := Message{Title: fmt.Sprintf("%d events arrived during your quiet hours", n), Body: "Open Tidings to see them.",
			URL: "/", Tag: "quiet-summary"}
		for _, sub := range subs {
			out := r.push(ctx, sub, msg, webpush.Options{})
			r.cfg.Observe("push", map[bool]string{true: "ok", false: "failed"}[out.err == ""])
		}
	}
	return st.FinishDelivery(ctx, j.ID)
}
