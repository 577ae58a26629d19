package deliver

import (
	"net/http"
	"strings"

	"github.com/tidings-dev/tidings"
)

// mattermostRequest is Slack's shape at a Mattermost incoming webhook's URL: {"text":
// …} in Markdown. Event text has its Markdown escaped, &, < and > as entities, and "@"
// followed by a word joiner, so that it cannot mention @channel, @all, @here or anyone.
func mattermostRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	text := "**" + mattermostText(title(ev)) + "** in " + mattermostText(where(ev))
	if desc := PlainText(ev, maxChatText); desc != "" {
		text += "\n" + mattermostText(desc)
	}
	for _, l := range chatLinks(ev, page) {
		text += "\n[" + l.Label + "](" + markdownURL(l.URL) + ")"
	}
	return postJSON(w.URL, map[string]any{"text": text})
}

// mattermostText is event text made inert for Mattermost.
func mattermostText(s string) string {
	return strings.ReplaceAll(markupEscape.Replace(mattermostEscape.Replace(s)), "@", "@\u2060")
}

// markdownURL is a URL as a Markdown link's destination: the characters that would end
// it percent-encoded.
func markdownURL(u string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(u)
}
