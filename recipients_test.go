package tidings

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseRecipients(t *testing.T) {
	for in, want := range map[string]string{
		"everyone": "everyone", "": "everyone", "nobody": "nobody",
		"Ada@Example.com, bob@example.com,ada@example.com": "ada@example.com,bob@example.com",
	} {
		r, err := ParseRecipients(in)
		if err != nil || r.String() != want {
			t.Errorf("%q: %q %v", in, r.String(), err)
		}
	}
	for _, in := range []string{"ada", "ada@x.io,bob", ",", "a b@x.io", "everyone,ada@x.io", strings.Repeat("a", 250) + "@x.io"} {
		if _, err := ParseRecipients(in); ErrorCode(err) != EValidation {
			t.Errorf("%q: %v", in, err)
		}
	}
	r, _ := ParseRecipients("ada@x.io,bob@x.io")
	if !r.Includes("ADA@x.io") || r.Includes("eve@x.io") || !Everyone.Includes("eve@x.io") || (Recipients{Mode: NotifyNobody}).Includes("ada@x.io") {
		t.Error("Includes")
	}
}

func TestChatWebhookChecks(t *testing.T) {
	const tg = "https://api.telegram.org/bot123456:AAH-abcdefghijklmnopqrstuvwxyz012/sendMessage"
	const key = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"
	good := []NewWebhook{
		{Format: FormatTelegram, URL: tg, ChatID: "-1001234567890"},
		{Format: FormatTelegram, URL: tg, ChatID: "@ops_alerts"},
		{Format: FormatPushover, URL: "https://api.pushover.net/1/messages.json?token=" + key, UserKey: key},
		{Format: FormatPushover, URL: "https://api.pushover.net/1/messages.json", UserKey: key, Secret: key},
		{Format: FormatGotify, URL: "https://gotify.example.com/message?token=AbC.dEf"},
		{Format: FormatTeams, URL: "https://prod-01.westus.logic.azure.com/workflows/1/triggers/manual/paths/invoke?sig=x"},
		{Format: FormatGoogleChat, URL: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t"},
		{Format: FormatMattermost, URL: "https://mm.example.com/hooks/xyz"},
	}
	for _, w := range good {
		w.Project = "p"
		var p Problems
		w.Check(&p)
		if len(p) != 0 {
			t.Errorf("%s: %v", w.Format, p)
		}
	}
	bad := []struct {
		w    NewWebhook
		path string
	}{
		{NewWebhook{Format: FormatTelegram, URL: "https://api.telegram.org/sendMessage", ChatID: "1"}, "url"},
		{NewWebhook{Format: FormatTelegram, URL: tg, ChatID: "ops"}, "chat_id"},
		{NewWebhook{Format: FormatTelegram, URL: tg}, "chat_id"},
		{NewWebhook{Format: FormatPushover, URL: "https://api.pushover.net/1/messages.json", UserKey: key}, "secret"},
		{NewWebhook{Format: FormatPushover, URL: "https://api.pushover.net/1/messages.json", UserKey: "short", Secret: key}, "user_key"},
		{NewWebhook{Format: FormatPushover, URL: "https://api.pushover.net/1/messages.json", UserKey: key, Secret: "x"}, "secret"},
		{NewWebhook{Format: FormatGotify, URL: "https://gotify.example.com/message"}, "url"},
		{NewWebhook{Format: FormatSlack, URL: "https://hooks.slack.com/x", ChatID: "1"}, "chat_id"},
		{NewWebhook{Format: FormatTeams, URL: "https://x.example.com/", Secret: key}, "secret"},
		{NewWebhook{Format: "matrix", URL: "https://x.example.com/"}, "format"},
	}
	for _, c := range bad {
		c.w.Project = "p"
		var p Problems
		c.w.Check(&p)
		if !p.Has(c.path) {
			t.Errorf("%+v: want a problem at %s, got %v", c.w, c.path, p)
		}
	}
	for _, c := range []struct{ w Webhook }{
		{Webhook{Format: FormatTelegram, URL: tg}},
		{Webhook{Format: FormatGotify, URL: "https://gotify.example.com/message?token=AbC.dEf"}},
		{Webhook{Format: FormatGoogleChat, URL: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t"}},
	} {
		d := c.w.DisplayURL()
		u, _ := url.Parse(d)
		if strings.Contains(d, "AAH-abc") || strings.Contains(d, "AbC.dEf") || u.Query().Get("token") == "t" || u.Query().Get("key") == "k" {
			t.Errorf("DisplayURL shows a secret: %s", d)
		}
	}
	for _, c := range []struct{ format, in, want string }{
		{FormatTelegram, "https://api.telegram.org/bot1:AAAAAAAAAAAAAAAAAAAAAAAAA/sendMessage", "https://api.telegram.org/bot…/sendMessage"},
		{FormatSlack, "https://hooks.slack.com/services/T0/B0/XXXX", "https://hooks.slack.com/services/T0/B0/…"},
		{FormatDiscord, "https://discord.com/api/webhooks/123/TOKEN", "https://discord.com/api/webhooks/123/…"},
		{FormatMattermost, "https://mm.example.com/hooks/abc", "https://mm.example.com/hooks/…"},
		{FormatGotify, "https://g.example.com/message?token=AbC", "https://g.example.com/message?token=…"},
		{FormatGoogleChat, "https://chat.googleapis.com/v1/spaces/A/messages?key=k&token=t", "https://chat.googleapis.com/v1/spaces/A/messages?key=…&token=…"},
		{FormatStandard, "https://example.com/hooks/tidings", "https://example.com/hooks/tidings"},
	} {
		if got := (&Webhook{Format: c.format, URL: c.in}).DisplayURL(); got != c.want {
			t.Errorf("%s: DisplayURL %q, want %q", c.format, got, c.want)
		}
	}
	for _, f := range []string{FormatStandard, FormatSlack, FormatTeams} {
		w := NewWebhook{Project: "p", Format: f, URL: "https://x.example.com/", Secret: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"}
		var p Problems
		w.Check(&p)
		if !p.Has("secret") {
			t.Errorf("%s with a secret: %v", f, p)
		}
	}
}
