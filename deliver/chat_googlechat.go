package deliver

import (
	"net/http"
	"strings"

	"github.com/tidings-dev/tidings"
)

// googleChatText bounds the description in a Google Chat message (its text takes
// 4,096 characters).
const googleChatText = 3500

// googleChatRequest is a Google Chat incoming webhook's simple text message: {"text":
// …} with *bold*, event text with &, < and > escaped (so that it cannot write a link or
// <users/all>), and the links as <url|label>.
func googleChatRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	text := "*" + markupEscape.Replace(title(ev)) + "* in " + where(ev)
	if desc := description(ev); desc != "" {
		text += "\n" + markupEscape.Replace(clip(desc, googleChatText))
	}
	for _, l := range chatLinks(ev, page) {
		text += "\n<" + chatURL.Replace(l.URL) + "|" + l.Label + ">"
	}
	return postJSON(w.URL, map[string]any{"text": text})
}

// chatURL is a URL inside <url|label>: the characters that would end it percent-encoded.
var chatURL = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20")
