package deliver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// maxTextLen bounds the description in chat messages (Discord takes 2,000 characters).
const maxTextLen = 1000

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

// webhookRequest builds the request of one delivery in the webhook's format.
func webhookRequest(w *tidings.Webhook, ev *tidings.Event, msgID, publicURL string, now time.Time) (*http.Request, error) {
	var body []byte
	header := http.Header{}
	header.Set("User-Agent", "Tidings-Webhooks/1")
	link := eventURL(publicURL, ev)
	desc := PlainText(ev, maxTextLen)
	switch w.Format {
	case tidings.FormatSlack:
		// Slack's mrkdwn: escape &, < and > in text; links are <url|label>.
		esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
		text := fmt.Sprintf("*%s* in #%s (%s)", esc.Replace(title(ev)), ev.Channel, ev.Project)
		if desc != "" {
			text += "\n" + esc.Replace(desc)
		}
		if link != "" {
			text += "\n<" + link + "|Open in Tidings>"
		}
		body, _ = json.Marshal(map[string]any{"text": text})
		header.Set("Content-Type", "application/json")
	case tidings.FormatDiscord:
		text := fmt.Sprintf("**%s** in #%s (%s)", title(ev), ev.Channel, ev.Project)
		if desc != "" {
			text += "\n" + desc
		}
		if link != "" {
			text += "\n" + link
		}
		// No @everyone or role pings from event text.
		body, _ = json.Marshal(map[string]any{"content": text, "allowed_mentions": map[string]any{"parse": []string{}}})
		header.Set("Content-Type", "application/json")
	case tidings.FormatNtfy:
		text := desc
		if text == "" {
			text = ev.Event
		}
		body = []byte(text)
		header.Set("Content-Type", "text/plain; charset=utf-8")
		header.Set("Title", title(ev))
		header.Set("Tags", ev.Project+","+ev.Channel)
		if link != "" {
			header.Set("Click", link)
		}
		if ev.Parser == tidings.ParserMarkdown {
			header.Set("Markdown", "yes")
			body = []byte(ev.Description)
		}
	default: // tidings.FormatStandard
		var err error
		body, err = json.Marshal(map[string]any{"type": "event.published", "timestamp": now.UTC().Format(time.RFC3339),
			"data": ev.JSON()})
		if err != nil {
			return nil, err
		}
		ts := now.Unix()
		sig, err := Sign(w.Secret, msgID, ts, body)
		if err != nil {
			return nil, err
		}
		header.Set("Content-Type", "application/json")
		header.Set("webhook-id", msgID)
		header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		header.Set("webhook-signature", sig)
	}
	req, err := http.NewRequest(http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}
