package tidings

import (
	"net/url"
	"regexp"
	"strings"
)

// The chat services a webhook can post to besides standard, Slack, Discord and ntfy:
// what each needs besides its URL, and which part of the URL is a secret that is
// never shown again.

var (
	telegramChatID = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$`)
	telegramPath   = regexp.MustCompile(`^/bot[0-9]{1,20}:[A-Za-z0-9_-]{20,100}/sendMessage$`)
	pushoverKey    = regexp.MustCompile(`^[A-Za-z0-9]{30}$`)
)

// checkChat checks what a chat service's webhook needs (u is its parsed URL).
func (w *NewWebhook) checkChat(p *Problems, u *url.URL) {
	switch w.Format {
	case FormatTelegram:
		if !telegramPath.MatchString(u.Path) {
			p.Add("url", "format", "a telegram webhook's URL is the Bot API's sendMessage URL: https://api.telegram.org/bot<TOKEN>/sendMessage")
		}
		if !telegramChatID.MatchString(w.ChatID) {
			p.Add("chat_id", "format", "a telegram webhook needs the chat id: a number like -1001234567890, or @channelname")
		}
	case FormatPushover:
		if !pushoverKey.MatchString(w.UserKey) {
			p.Add("user_key", "format", "a pushover webhook needs the user or group key: 30 letters and digits")
		}
		token := u.Query().Get("token")
		switch {
		case token != "" && w.Secret != "":
			p.Add("secret", "unexpected", "the app token is in the URL's token= already")
		case token == "" && w.Secret == "":
			p.Add("secret", "required", "a pushover webhook needs the application's API token (in the URL's token= or as the secret)")
		case !pushoverKey.MatchString(token + w.Secret):
			p.Add("secret", "format", "a Pushover application token is 30 letters and digits")
		}
	case FormatGotify:
		if !strings.HasSuffix(u.Path, "/message") || u.Query().Get("token") == "" {
			p.Add("url", "format", "a gotify webhook's URL is the server's /message?token=APP_TOKEN")
		}
	}
}

// DisplayURL is the webhook's URL as lists show it, its secrets replaced by "…": a
// Telegram bot token, the last part of a Slack, Discord or Mattermost hook's path (its
// key), and token=, key=, sig=, signature= and code= parameters (Gotify, Pushover,
// Google Chat, Teams). They are shown once, when the webhook is made.
func (w *Webhook) DisplayURL() string {
	u, err := url.Parse(w.URL)
	if err != nil {
		return ""
	}
	path := u.EscapedPath()
	switch w.Format {
	case FormatTelegram:
		path = "/bot…/sendMessage"
	case FormatSlack, FormatDiscord, FormatMattermost:
		if i := strings.LastIndexByte(strings.TrimSuffix(path, "/"), '/'); i >= 0 {
			path = path[:i+1] + "…"
		}
	}
	out := u.Scheme + "://" + u.Host + path
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, part := range parts {
			k, _, _ := strings.Cut(part, "=")
			switch strings.ToLower(k) {
			case "token", "key", "sig", "signature", "code":
				parts[i] = k + "=…"
			}
		}
		out += "?" + strings.Join(parts, "&")
	}
	return out
}
