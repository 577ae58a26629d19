package deliver

import (
	"net/http"
	"net/url"

	"github.com/tidings-dev/tidings"
)

// Bounds of a Gotify message (Gotify sets none; these keep it readable on a phone).
const (
	gotifyTitle   = 250
	gotifyMessage = 4000
)

// gotifyPriority maps our priorities to Gotify's 0 to 10.
func gotifyPriority(p tidings.Priority) int {
	switch p {
	case tidings.PriorityMin:
		return 0
	case tidings.PriorityLow:
		return 2
	case tidings.PriorityHigh:
		return 7
	case tidings.PriorityUrgent:
		return 9
	}
	return 5
}

// gotifyRequest is Gotify's POST /message: {"title","message","priority","extras"} with
// the message in Markdown (event text escaped, the links after it) and a tap opening
// the event's url or page. The app token moves from the URL's token= to the
// X-Gotify-Key header, so that it never appears in an error about the request.
func gotifyRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	u, err := url.Parse(w.URL)
	if err != nil {
		return nil, errBadURL
	}
	q := u.Query()
	token := q.Get("token")
	q.Del("token")
	u.RawQuery = q.Encode()
	msg := description(ev)
	if msg == "" {
		msg = ev.Event
	}
	msg = markdownEscape.Replace(clip(msg, gotifyMessage))
	for _, l := range chatLinks(ev, page) {
		msg += "\n\n[" + l.Label + "](" + markdownURL(l.URL) + ")"
	}
	extras := map[string]any{"client::display": map[string]any{"contentType": "text/markdown"}}
	if _, link := firstLink(ev, page); link != "" {
		extras["client::notification"] = map[string]any{"click": map[string]any{"url": link}}
	}
	req, err := postJSON(u.String(), map[string]any{
		"title":    clip(title(ev)+" in "+where(ev), gotifyTitle),
		"message":  msg,
		"priority": gotifyPriority(ev.Priority),
		"extras":   extras,
	})
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Gotify-Key", token)
	return req, nil
}
