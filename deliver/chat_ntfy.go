package deliver

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings"
)

// ntfyRequest is a POST to an ntfy topic URL: the description as the body, with
// Title, Tags, Click (the event's url, else its page), Priority (ntfy's 1 to 5 are
// ours), Actions and Markdown headers.
func ntfyRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	text := PlainText(ev, maxTextLen)
	if text == "" {
		text = ev.Event
	}
	ctype := "text/plain; charset=utf-8"
	if ev.Parser == tidings.ParserMarkdown {
		text = ev.Description
	}
	req, err := postBody(w.URL, []byte(text), ctype)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Title", title(ev))
	req.Header.Set("Tags", ev.Project+","+ev.Channel)
	if _, link := firstLink(ev, page); link != "" {
		req.Header.Set("Click", link)
	}
	if ev.Priority != 0 && ev.Priority != tidings.PriorityDefault {
		req.Header.Set("Priority", strconv.Itoa(int(ev.Priority)))
	}
	if a := ntfyActions(ev.Actions); a != "" {
		req.Header.Set("Actions", a)
	}
	if ev.Parser == tidings.ParserMarkdown {
		req.Header.Set("Markdown", "yes")
	}
	return req, nil
}

// ntfyActions is ntfy's Actions header for the event's URL actions ("view, Label, URL;
// …"): a button that opens its URL in the ntfy app. Id actions are left out: pressing
// one must be recorded by Tidings as a member, which an ntfy subscriber is not.
func ntfyActions(actions []tidings.Action) string {
	var parts []string
	for _, a := range actions {
		if a.URL == "" {
			continue
		}
		label, ok1 := ntfyQuote(a.Label)
		u, ok2 := ntfyQuote(a.URL)
		if ok1 && ok2 {
			parts = append(parts, "view, "+label+", "+u)
		}
	}
	return strings.Join(parts, "; ")
}

// ntfyQuote quotes a value of ntfy's simple action format when it holds a separator
// (ntfy takes double or single quotes); ok is false for one that no quote can hold.
func ntfyQuote(v string) (string, bool) {
	if !strings.ContainsAny(v, ",;\"'") {
		return v, true
	}
	if !strings.Contains(v, `"`) {
		return `"` + v + `"`, true
	}
	if !strings.Contains(v, "'") {
		return "'" + v + "'", true
	}
	return "", false
}
