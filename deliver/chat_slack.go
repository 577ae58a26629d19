package deliver

import (
	"fmt"
	"net/http"

	"github.com/tidings-dev/tidings"
)

// slackRequest is a Slack incoming webhook's message: {"text": …} in mrkdwn, with &, <
// and > escaped (so event text cannot write <!everyone> or a link) and the event's page
// as <url|label>.
func slackRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	if w.Format == tidings.FormatMattermost {
		return mattermostRequest(w, ev, page)
	}
	text := fmt.Sprintf("*%s* in %s", markupEscape.Replace(title(ev)), where(ev))
	if desc := PlainText(ev, maxTextLen); desc != "" {
		text += "\n" + markupEscape.Replace(desc)
	}
	if page != "" {
		text += "\n<" + page + "|Open in Tidings>"
	}
	return postJSON(w.URL, map[string]any{"text": text})
}
