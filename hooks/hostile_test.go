package hooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// hostileStrings are what a provider's strings may hold: each must still make events
// that pass NewEvent.Check (deliver checks every event).
var hostileStrings = []string{
	"", " ", "\x00", "\r\n\t", "\u200b\u200d\ufeff", "\u202egnp.exe", "\u2066x\u2069", "\x1b[31mred", "\x7f\u0085",
	"ä\u0301\u0301\u0301", "👩\u200d👩\u200d👧", "\xff\xfe invalid", "<script>alert(1)</script>", "line1\nline2",
	strings.Repeat("a", 100000), strings.Repeat("\u202e", 2000), strings.Repeat("🎉", 30000), strings.Repeat("x ", 50000),
}

func TestHostileStrings(t *testing.T) {
	for i, s := range hostileStrings {
		// Stripe: the type, the customer, the currency, the plan, the status.
		stripeBody, _ := json.Marshal(map[string]any{"id": "evt_" + s, "type": "customer.subscription.created", "created": 1680064028,
			"data": map[string]any{"object": map[string]any{"id": s, "customer": s, "currency": s, "status": s,
				"plan": map[string]any{"nickname": s, "id": s, "interval": s, "amount": 100, "currency": s}}}})
		if _, err := deliver(t, stripeHook(), stripeSigned(stripeBody, stripeSecret, now), stripeBody); err != nil {
			t.Errorf("stripe %d: %v", i, err)
		}
		unknown, _ := json.Marshal(map[string]any{"id": "evt_1", "type": s + "x", "data": map[string]any{"object": map[string]any{"customer": s}}})
		if _, err := deliver(t, stripeHook(), stripeSigned(unknown, stripeSecret, now), unknown); err != nil {
			t.Errorf("stripe unknown %d: %v", i, err)
		}
		// GitHub: every mapped event with the strings everywhere.
		for _, ev := range []string{"push", "release", "workflow_run", "pull_request", "issues", "star", "ping", s + "x"} {
			body, _ := json.Marshal(map[string]any{"action": map[string]string{"release": "published", "workflow_run": "completed",
				"pull_request": "opened", "issues": "opened", "star": "created"}[ev], "zen": s, "ref": "refs/heads/" + s,
				"compare": s, "commits": []any{map[string]any{"message": s}}, "head_commit": map[string]any{"message": s},
				"pusher":       map[string]any{"name": s},
				"release":      map[string]any{"tag_name": s, "name": s, "body": s, "html_url": s},
				"workflow_run": map[string]any{"name": s, "head_branch": s, "display_title": s, "conclusion": "failure", "html_url": s, "event": s},
				"pull_request": map[string]any{"title": s, "html_url": s, "head": map[string]any{"ref": s}, "base": map[string]any{"ref": s}},
				"issue":        map[string]any{"title": s, "labels": []any{map[string]any{"name": s}}},
				"repository":   map[string]any{"full_name": s, "html_url": s}, "sender": map[string]any{"login": s}})
			if _, err := deliver(t, githubHook(), githubSigned(ev, s, body, githubSecret), body); err != nil {
				t.Errorf("github %s %d: %v", ev, i, err)
			}
		}
		// Alerts: names, label keys and values, annotations, fingerprints, URLs.
		for _, source := range []string{tidings.HookAlertmanager, tidings.HookGrafana} {
			body, _ := json.Marshal(map[string]any{"groupKey": s, "alerts": []any{
				map[string]any{"status": "firing", "labels": map[string]string{"alertname": s, s: s, "severity": "critical"}, "fingerprint": s,
					"annotations": map[string]string{"summary": s, "description": s}, "generatorURL": s, "panelURL": s, "valueString": s, "startsAt": s},
				map[string]any{"status": s, "labels": map[string]string{}},
			}})
			if _, err := deliver(t, alertHook(source, ""), http.Header{}, body); err != nil {
				t.Errorf("%s %d: %v", source, i, err)
			}
		}
		// JSON: every field rendered from the string (the event's name has a prefix, so
		// that it is never empty).
		body, _ := json.Marshal(map[string]any{"s": s})
		tmpl := &tidings.HookTemplate{Event: `event {{.s}}`, Description: `{{.s}}`, Icon: `{{.s}}`, UserID: `{{.s}}`,
			Tags: `{"a": {{json .s}}, {{json .s}}: "b"}`}
		_, err := deliver(t, jsonHook(tmpl), http.Header{"Authorization": {"Bearer tok"}, "Idempotency-Key": {s}}, body)
		if len(s) > MaxTemplateOutput {
			if err == nil || !strings.Contains(err.Error(), "renders more than") {
				t.Errorf("json %d: %v", i, err) // the field's bound, a clear 400
			}
		} else if err != nil {
			t.Errorf("json %d: %v", i, err)
		}
	}
}
