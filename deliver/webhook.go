package deliver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// maxTextLen bounds the description in chat messages (Discord takes 2,000 characters).
const maxTextLen = 1000

// maxChatText bounds the description in the chat services that take more.
const maxChatText = 4000

// eventURL is the event's page in the dashboard, or "" when the public URL is not set.
func eventURL(publicURL string, ev *tidings.Event) string {
	if publicURL == "" {
		return ""
	}
	return strings.TrimRight(publicURL, "/") + "/p/" + ev.Project + "/events/" + ev.ID
}

// title is "💰 New Subscription", or the name alone without an icon.
func title(ev *tidings.Event) string {
	if ev.Icon == "" {
		return ev.Event
	}
	return ev.Icon + " " + ev.Event
}

// Sign is the Standard Webhooks signature of a message: "v1," and the base64
// HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the secret after "whsec_".
func Sign(secret, msgID string, ts int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", msgID, ts)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// webhookRequest builds the request of one delivery in the webhook's format: one
// small file per chat service (chat_*.go) builds its body.
func webhookRequest(w *tidings.Webhook, ev *tidings.Event, msgID, publicURL string, now time.Time) (*http.Request, error) {
	page := eventURL(publicURL, ev)
	switch w.Format {
	case tidings.FormatSlack, tidings.FormatMattermost:
		return slackRequest(w, ev, page)
	case tidings.FormatDiscord:
		return discordRequest(w, ev, page)
	case tidings.FormatNtfy:
		return ntfyRequest(w, ev, page)
	case tidings.FormatTelegram:
		return telegramRequest(w, ev, page)
	case tidings.FormatTeams:
		return teamsRequest(w, ev, page)
	case tidings.FormatGoogleChat:
		return googleChatRequest(w, ev, page)
	case tidings.FormatPushover:
		return pushoverRequest(w, ev, page)
	case tidings.FormatGotify:
		return gotifyRequest(w, ev, page)
	default: // tidings.FormatStandard
		return standardRequest(w, msgID, tidings.WebhookPublished, ev.JSON(), now)
	}
}

// standardRequest is a Standard Webhooks message of type typ: its JSON body
// {"type","timestamp","data"}, signed.
func standardRequest(w *tidings.Webhook, msgID, typ string, data any, now time.Time) (*http.Request, error) {
	body, err := json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{typ, now.UTC().Format(time.RFC3339), data})
	if err != nil {
		return nil, err
	}
	ts := now.Unix()
	sig, err := Sign(w.Secret, msgID, ts, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "Tidings-Webhooks/1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", msgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	return req, nil
}

// testEvent is what "send a test" delivers.
func testEvent(w *tidings.Webhook, now time.Time) *tidings.Event {
	return &tidings.Event{ID: "test", Project: w.Project, Channel: w.Channel, Event: "Test from Tidings", Icon: "🔔",
		Description: "This is a test message: the webhook works.", Parser: tidings.ParserText, Notify: true,
		Tags: tidings.Tags{}, Timestamp: now, CreatedAt: now}
}

// sendWebhook sends one event to one webhook and records the attempt.
func (r *Runner) sendWebhook(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	w, err := st.FindWebhook(ctx, j.AccountID, j.Target)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return st.FinishDelivery(ctx, j.ID)
	}
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	var ev *tidings.Event
	if j.Kind == tidings.DeliverTest {
		ev = testEvent(w, now)
	} else if ev, err = st.FindEventByID(ctx, j.AccountID, j.EventID); tidings.ErrorCode(err) == tidings.ENotFound {
		return st.FinishDelivery(ctx, j.ID)
	} else if err != nil {
		return err
	}
	var req *http.Request
	switch j.Kind {
	case tidings.DeliverWebhookAck, tidings.DeliverWebhookPress:
		if w.Format != tidings.FormatStandard {
			return st.FinishDelivery(ctx, j.ID) // only standard webhooks carry them
		}
		typ, data, ierr := r.intentData(ctx, j, ev)
		if tidings.ErrorCode(ierr) == tidings.ENotFound {
			return st.FinishDelivery(ctx, j.ID)
		} else if ierr != nil {
			return ierr
		}
		req, err = standardRequest(w, j.MessageID, typ, data, now)
	default:
		req, err = webhookRequest(w, ev, j.MessageID, r.cfg.PublicURL, now)
	}
	if err != nil {
		r.log.Error("building a webhook request", "webhook", w.ID, "err", PublicError(err))
		return st.FinishDelivery(ctx, j.ID)
	}
	out := r.send(ctx, req.WithContext(ctx))
	attempt := &tidings.WebhookAttempt{WebhookID: w.ID, MessageID: j.MessageID, EventID: ev.ID, Attempt: j.Attempts + 1,
		Status: out.status, Error: out.err, Duration: out.took, At: now}
	if err := st.RecordWebhookAttempt(ctx, attempt); err != nil {
		return err
	}
	return r.settle(ctx, "webhook", j, out)
}

// outcome is what one attempt came to.
type outcome struct {
	status     int
	err        string
	took       time.Duration
	retryAfter time.Duration
	retry      bool // worth trying again
}

// send makes one request and classifies the answer: 2xx done; 408, 425, 429, 5xx and
// network errors retried (429 and 503 after their Retry-After); other 4xx final.
func (r *Runner) send(ctx context.Context, req *http.Request) outcome {
	start := time.Now()
	res, err := r.cfg.Client.Do(req)
	out := outcome{took: time.Since(start)}
	if err != nil {
		out.err, out.retry = PublicError(err), !errors.Is(err, ErrPrivateTarget)
		return out
	}
	return classify(res, out)
}

// classify reads an answer into an outcome (and closes its body): 2xx done; 429 and
// 503 retried after their Retry-After; 408, 425 and other 5xx retried; any other
// status final.
func classify(res *http.Response, out outcome) outcome {
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	out.status = res.StatusCode
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return out
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
		out.retryAfter = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
		out.retry = true
	case res.StatusCode >= 500, res.StatusCode == http.StatusRequestTimeout, res.StatusCode == http.StatusTooEarly:
		out.retry = true
	}
	out.err = res.Status
	return out
}

// parseRetryAfter reads seconds or an HTTP date; at most a day.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, tidings.DeliveryMaxAge)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), tidings.DeliveryMaxAge)
	}
	return 0
}

// settle writes an attempt's outcome to the outbox: done, retried later, or given up
// after 24 hours or a final answer.
func (r *Runner) settle(ctx context.Context, channel string, j *tidings.Delivery, out outcome) error {
	_, err := r.settleAs(ctx, channel, j, out)
	return err
}

// settleAs is settle, saying what it made of the attempt: "ok", "failed" (a final
// answer), "expired" (24 hours of retries) or "retry".
func (r *Runner) settleAs(ctx context.Context, channel string, j *tidings.Delivery, out outcome) (string, error) {
	st := r.cfg.Store
	now := r.cfg.Now()
	switch {
	case out.err == "":
		r.cfg.Observe(channel, "ok")
		return "ok", st.FinishDelivery(ctx, j.ID)
	case !out.retry:
		r.cfg.Observe(channel, "failed")
		r.log.Info("delivery failed", "channel", channel, "target", j.Target, "event", j.EventID, "err", out.err)
		return "failed", st.FinishDelivery(ctx, j.ID)
	}
	next := now.Add(max(r.cfg.Backoff(j.Attempts), out.retryAfter))
	if next.Sub(j.CreatedAt) > tidings.DeliveryMaxAge {
		r.cfg.Observe(channel, "expired")
		r.log.Warn("delivery given up after 24 hours", "channel", channel, "target", j.Target, "event", j.EventID, "err", out.err)
		return "expired", st.FinishDelivery(ctx, j.ID)
	}
	r.cfg.Observe(channel, "retry")
	return "retry", st.RetryDelivery(ctx, j.ID, j.Attempts+1, next)
}
