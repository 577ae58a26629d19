package deliver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// What the chat formats (chat_*.go) share: the event's links, its text bounded to what
// each service takes, and the request.

// chatLink is one link of a chat message.
type chatLink struct{ Label, URL string }

// chatLinks are the event's links: its url, where the sender wants a tap to go, then
// its page in the dashboard (with --public-url). The first is the message's link.
func chatLinks(ev *tidings.Event, page string) []chatLink {
	var links []chatLink
	if ev.URL != "" {
		links = append(links, chatLink{"Open", ev.URL})
	}
	if page != "" {
		links = append(links, chatLink{"Open in Tidings", page})
	}
	return links
}

// firstLink is the message's link, or "".
func firstLink(ev *tidings.Event, page string) (label, url string) {
	if links := chatLinks(ev, page); len(links) > 0 {
		return links[0].Label, links[0].URL
	}
	return "", ""
}

// where is "#payments (my-saas)", or
// "my-saas" for a test message of a webhook of every channel.
func where(ev *tidings.Event) string {
	if ev.Channel == "" {
		return ev.Project
	}
	return "#" + ev.Channel + " (" + ev.Project + ")"
}

// description is the event's description as one line of plain text, whole (each
// format bounds it).
func description(ev *tidings.Event) string { return PlainText(ev, tidings.MaxDescriptionLen+1) }

// clip shortens s to at most max characters (runes), ending it with "…".
func clip(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// clip16 shortens s to at most max UTF-16 code units (how Telegram counts), ending it
// with "…".
func clip16(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if len(utf16.Encode([]rune(s))) <= max {
		return s
	}
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > max-1 {
			return strings.TrimSpace(s[:i]) + "…"
		}
		n += w
	}
	return s
}

// len16 is the length of s in UTF-16 code units.
func len16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// markupEscape escapes &, < and > as entities (Slack, Mattermost, Google Chat: "<"
// starts a link or a mention such as <!everyone> or <users/all>).
var markupEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// markdownEscape escapes what Markdown (Gotify) would read as markup in event text:
// emphasis, links, headings, code, HTML.
var markdownEscape = strings.NewReplacer(markdownPairs("<", ">")...)

// mattermostEscape is markdownEscape but for < and >, which Mattermost's text takes
// as entities (markupEscape) as Slack's does.
var mattermostEscape = strings.NewReplacer(markdownPairs()...)

func markdownPairs(more ...string) []string {
	var pairs []string
	for _, c := range append([]string{`\`, "*", "_", "`", "[", "]", "#", "~", "|"}, more...) {
		pairs = append(pairs, c, `\`+c)
	}
	return pairs
}

// postBody is a POST of body to u.
func postBody(u string, body []byte, contentType string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "Tidings-Webhooks/1")
	req.Header.Set("Content-Type", contentType)
	return req, nil
}

// postJSON is a POST of v as JSON to u.
func postJSON(u string, v any) (*http.Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return postBody(u, body, "application/json")
}
