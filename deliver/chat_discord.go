package deliver

import (
	"fmt"
	"net/http"

	"github.com/tidings-dev/tidings"
)

// discordRequest is a Discord webhook's message: {"content": …} with
// allowed_mentions empty, so that event text pings no @everyone, role or user.
func discordRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	text := fmt.Sprintf("**%s** in %s", title(ev), where(ev))
	if desc := PlainText(ev, maxTextLen); desc != "" {
		text += "\n" + desc
	}
	if page != "" {
		text += "\n" + page
	}
	return postJSON(w.URL, map[string]any{"content": text, "allowed_mentions": map[string]any{"parse": []string{}}})
}
