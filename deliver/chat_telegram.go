package deliver

import (
	"net/http"
	"strings"

	"github.com/tidings-dev/tidings"
)

// telegramMax is the most a Telegram message's text holds: 4,096 characters (UTF-16
// code units) once its entities are parsed.
const telegramMax = 4096

// telegramEscape escapes text and attribute values for Telegram's HTML parse mode.
var telegramEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// telegramRequest is the Bot API's sendMessage, posted to the webhook's URL:
// {"chat_id","text","parse_mode":"HTML","link_preview_options":{"is_disabled":true}}.
// The text uses only <b> and <a href>; event text is escaped; the description is cut
// so that the whole text fits in telegramMax.
func telegramRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	head := title(ev) + " in " + where(ev)
	links := chatLinks(ev, page)
	visible := len16(head) // what the text shows once its tags are parsed
	var tail strings.Builder
	for i, l := range links {
		if i > 0 {
			tail.WriteString(" · ")
			visible += 3
		}
		tail.WriteString(`<a href="` + telegramEscape.Replace(l.URL) + `">` + l.Label + "</a>")
		visible += len16(l.Label)
	}
	text := "<b>" + telegramEscape.Replace(title(ev)) + "</b> in " + telegramEscape.Replace(where(ev))
	if len(links) > 0 {
		visible++ // its line break
	}
	if desc := description(ev); desc != "" {
		text += "\n" + telegramEscape.Replace(clip16(desc, telegramMax-visible-1))
	}
	if tail.Len() > 0 {
		text += "\n" + tail.String()
	}
	return postJSON(w.URL, map[string]any{
		"chat_id":              w.ChatID,
		"text":                 text,
		"parse_mode":           "HTML",
		"link_preview_options": map[string]any{"is_disabled": true},
	})
}
