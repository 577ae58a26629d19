package deliver

import (
	"net/http"

	"github.com/tidings-dev/tidings"
)

// teamsText bounds the description in a Teams card (a message takes about 28 KB).
const teamsText = 4000

// teamsRequest is a Teams Workflows webhook's message: one Adaptive Card 1.4 with the
// title, where the event is, its description as TextBlocks (plain text: a TextBlock
// renders no HTML, and Teams mentions need entities the card does not have), and an
// Action.OpenUrl per link.
func teamsRequest(w *tidings.Webhook, ev *tidings.Event, page string) (*http.Request, error) {
	body := []any{
		map[string]any{"type": "TextBlock", "text": title(ev), "weight": "Bolder", "size": "Medium", "wrap": true},
		map[string]any{"type": "TextBlock", "text": "in " + where(ev), "isSubtle": true, "spacing": "None", "wrap": true},
	}
	if desc := description(ev); desc != "" {
		body = append(body, map[string]any{"type": "TextBlock", "text": clip(desc, teamsText), "wrap": true})
	}
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body":    body,
	}
	var actions []any
	for _, l := range chatLinks(ev, page) {
		actions = append(actions, map[string]any{"type": "Action.OpenUrl", "title": l.Label, "url": l.URL})
	}
	if actions != nil {
		card["actions"] = actions
	}
	return postJSON(w.URL, map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content":     card,
		}},
	})
}
