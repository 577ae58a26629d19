package deliver

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tidings-dev/tidings"
)

// Pushover's limits: a message of 1,024 characters, a title of 250, a supplementary
// URL of 512 and its title of 100.
const (
	pushoverMessage  = 1024
	pushoverTitle    = 250
	pushoverURL      = 512
	pushoverURLTitle = 100
)

// pushoverPriority maps our priorities to Pushover's -2 to 2. Urgent is 1, not
// Pushover's emergency 2: Tidings repeats urgent events itself (escalation) until one
// is acknowledged in Tidings, which Pushover's own receipts would not know of.
func pushoverPriority(p tidings.Priority) int {
	switch p {
	case tidings.PriorityMin:
		return -2
	case tidings.PriorityLow:
		return -1
	case tidings.PriorityHigh, tidings.PriorityUrgent:
		return 1
	}
	return 0
}

// pushoverRequest is Pushover's messages API: a form POST of token, user, title,
// message, priority, timestamp and url/url_title, in plain text (html is not set).
// The app token goes in the form, never in the URL (it comes from the URL's token= or
// the webhook's secret).
func pushoverRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	u, err := url.Parse(w.URL)
	if err != nil {
		return nil, errBadURL
	}
	q := u.Query()
	token := q.Get("token")
	if token == "" {
		token = w.Secret
	}
	q.Del("token")
	u.RawQuery = q.Encode()
	msg := description(ev)
	if msg == "" {
		msg = ev.Event
	}
	form := url.Values{
		"token":     {token},
		"user":      {w.UserKey},
		"title":     {clip(title(ev)+" in "+where(ev), pushoverTitle)},
		"message":   {clip(msg, pushoverMessage)},
		"priority":  {strconv.Itoa(pushoverPriority(ev.Priority))},
		"timestamp": {strconv.FormatInt(ev.Timestamp.Unix(), 10)},
	}
	if label, link := firstLink(ev, page); link != "" && len(link) <= pushoverURL {
		form.Set("url", link)
		form.Set("url_title", clip(label, pushoverURLTitle))
	}
	return postBody(u.String(), []byte(form.Encode()), "application/x-www-form-urlencoded")
}

// errBadURL is a webhook URL that does not parse (never the URL itself: it holds secrets).
var errBadURL = errors.New("the webhook's URL does not parse")
