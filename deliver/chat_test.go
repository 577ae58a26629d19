package deliver_test

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
)

// Tokens of the chat services, in the shapes they have.
const (
	botPath       = "/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage"
	chatID        = "-1001234567890"
	pushoverApp   = "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
	pushoverApp2  = "bzGDORePK8gMaC0QOYAMyEEuzJnyUi"
	pushoverUser  = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"
	gotifyToken   = "AvbXL6kKsVq.Tdq"
	hostileEvent  = "Deploy <b>failed</b> & @everyone"
	hostileDesc   = "Ping <users/all> and <!channel> & @here: `rm -rf` [click](https://evil.example.com) *bold* <script>x</script>"
	grafanaURL    = "https://grafana.example.com/d/1?a=1&b=2"
	tidingsPublic = "https://tidings.example.com"
)

// chatHook stores a webhook of a chat service with its extra fields, checked as the
// API and the CLI check them.
func (e *env) chatHook(w tidings.NewWebhook) *tidings.Webhook {
	e.t.Helper()
	w.Project = "my-saas"
	if w.Events == "" {
		w.Events = tidings.WebhookAll
	}
	var p tidings.Problems
	w.Check(&p)
	e.must(p.Err())
	hook := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: w.Project, URL: w.URL, Format: w.Format, Events: w.Events,
		Secret: w.Secret, ChatID: w.ChatID, UserKey: w.UserKey}
	e.must(e.store.CreateWebhook(context.Background(), e.account.ID, hook))
	return hook
}

// chatReceivers is one local receiver per chat format, each with its webhook.
type chatReceivers struct {
	telegram, teams, gchat, mattermost, pushover, gotify *receiver
	hooks                                                map[string]*tidings.Webhook
}

func (e *env) chatServices(statuses ...int) *chatReceivers {
	e.t.Helper()
	c := &chatReceivers{hooks: map[string]*tidings.Webhook{}}
	for _, r := range []**receiver{&c.telegram, &c.teams, &c.gchat, &c.mattermost, &c.pushover, &c.gotify} {
		*r = newReceiver(e.t, statuses...)
	}
	c.hooks[tidings.FormatTelegram] = e.chatHook(tidings.NewWebhook{URL: c.telegram.URL + botPath, Format: tidings.FormatTelegram, ChatID: chatID})
	c.hooks[tidings.FormatTeams] = e.chatHook(tidings.NewWebhook{URL: c.teams.URL + "/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=SECRETSIG", Format: tidings.FormatTeams})
	c.hooks[tidings.FormatGoogleChat] = e.chatHook(tidings.NewWebhook{URL: c.gchat.URL + "/v1/spaces/AAA/messages?key=KEY&token=TOK", Format: tidings.FormatGoogleChat})
	c.hooks[tidings.FormatMattermost] = e.chatHook(tidings.NewWebhook{URL: c.mattermost.URL + "/hooks/xxxgeneratedkeyxxx", Format: tidings.FormatMattermost})
	c.hooks[tidings.FormatPushover] = e.chatHook(tidings.NewWebhook{URL: c.pushover.URL + "/1/messages.json?token=" + pushoverApp, Format: tidings.FormatPushover, UserKey: pushoverUser})
	c.hooks[tidings.FormatGotify] = e.chatHook(tidings.NewWebhook{URL: c.gotify.URL + "/message?token=" + gotifyToken, Format: tidings.FormatGotify})
	return c
}

func (c *chatReceivers) all() map[string]*receiver {
	return map[string]*receiver{tidings.FormatTelegram: c.telegram, tidings.FormatTeams: c.teams, tidings.FormatGoogleChat: c.gchat,
		tidings.FormatMattermost: c.mattermost, tidings.FormatPushover: c.pushover, tidings.FormatGotify: c.gotify}
}

func decode(t *testing.T, rec *recorded, v any) {
	t.Helper()
	if rec.method != "POST" || rec.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s with Content-Type %q", rec.method, rec.header.Get("Content-Type"))
	}
	if err := json.Unmarshal(rec.body, v); err != nil {
		t.Fatalf("body %s: %v", rec.body, err)
	}
}

// telegramVisible is a Telegram HTML text as it shows: tags removed, entities read;
// it also checks that only <b> and <a href="…"> are used.
func telegramVisible(t *testing.T, text string) string {
	t.Helper()
	for _, tag := range regexp.MustCompile(`<[^>]*>`).FindAllString(text, -1) {
		if tag != "<b>" && tag != "</b>" && tag != "</a>" && !regexp.MustCompile(`^<a href="[^"<>]*">$`).MatchString(tag) {
			t.Fatalf("tag %q in %q", tag, text)
		}
	}
	return html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(text, ""))
}

// TestChatServices: each chat service gets the request its API documents: method,
// content type, required fields, the mapped priority, the event's url and page as
// links, hostile event text escaped as that service needs.
func TestChatServices(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.chatServices()
	e.run(deliver.Config{PublicURL: tidingsPublic + "/"})
	ev := e.publish(tidings.NewEvent{Event: hostileEvent, Icon: "🚨", Description: hostileDesc, Priority: "high", URL: grafanaURL})
	page := tidingsPublic + "/p/my-saas/events/" + ev.ID

	t.Run("telegram", func(t *testing.T) {
		rec := c.telegram.next(t, 30*time.Second)
		if rec.url.Path != botPath {
			t.Fatalf("path %q", rec.url.Path)
		}
		var m struct {
			ChatID             string `json:"chat_id"`
			Text               string
			ParseMode          string `json:"parse_mode"`
			LinkPreviewOptions struct {
				IsDisabled bool `json:"is_disabled"`
			} `json:"link_preview_options"`
		}
		decode(t, rec, &m)
		if m.ChatID != chatID || m.ParseMode != "HTML" || !m.LinkPreviewOptions.IsDisabled {
			t.Fatalf("message %s", rec.body)
		}
		if !strings.HasPrefix(m.Text, "<b>🚨 Deploy &lt;b&gt;failed&lt;/b&gt; &amp; @everyone</b> in #payments (my-saas)\n") ||
			!strings.Contains(m.Text, "&lt;script&gt;x&lt;/script&gt;") ||
			!strings.Contains(m.Text, `<a href="https://grafana.example.com/d/1?a=1&amp;b=2">Open</a>`) ||
			!strings.Contains(m.Text, `<a href="`+page+`">Open in Tidings</a>`) {
			t.Fatalf("text %q", m.Text)
		}
		if v := telegramVisible(t, m.Text); !strings.Contains(v, hostileDesc) {
			t.Fatalf("visible text %q", v)
		}
	})
	t.Run("teams", func(t *testing.T) {
		rec := c.teams.next(t, 30*time.Second)
		if rec.url.Query().Get("sig") != "SECRETSIG" {
			t.Fatalf("the workflow's signature did not reach it: %v", rec.url)
		}
		var m struct {
			Type        string
			Attachments []struct {
				ContentType string
				ContentURL  *string `json:"contentUrl"`
				Content     struct {
					Schema  string `json:"$schema"`
					Type    string
					Version string
					Body    []struct{ Type, Text, Weight string }
					Actions []struct{ Type, Title, URL string }
				}
			}
		}
		decode(t, rec, &m)
		if m.Type != "message" || len(m.Attachments) != 1 || m.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" {
			t.Fatalf("message %s", rec.body)
		}
		card := m.Attachments[0].Content
		if card.Type != "AdaptiveCard" || card.Version != "1.4" || len(card.Body) != 3 || card.Body[0].Type != "TextBlock" ||
			card.Body[0].Text != "🚨 "+hostileEvent || card.Body[0].Weight != "Bolder" || card.Body[2].Text != hostileDesc {
			t.Fatalf("card %s", rec.body)
		}
		if len(card.Actions) != 2 || card.Actions[0].Type != "Action.OpenUrl" || card.Actions[0].URL != grafanaURL || card.Actions[1].URL != page {
			t.Fatalf("actions %+v", card.Actions)
		}
	})
	t.Run("google-chat", func(t *testing.T) {
		var m map[string]string
		decode(t, c.gchat.next(t, 30*time.Second), &m)
		text := m["text"]
		if len(m) != 1 || !strings.HasPrefix(text, "*🚨 Deploy &lt;b&gt;failed&lt;/b&gt; &amp; @everyone* in #payments (my-saas)\n") ||
			!strings.Contains(text, "Ping &lt;users/all&gt; and &lt;!channel&gt; &amp; @here") ||
			!strings.Contains(text, "\n<https://grafana.example.com/d/1?a=1&b=2|Open>") || !strings.Contains(text, "\n<"+page+"|Open in Tidings>") {
			t.Fatalf("text %q", text)
		}
		if strings.Contains(text, "<users/all>") {
			t.Fatal("event text can mention everyone")
		}
	})
	t.Run("mattermost", func(t *testing.T) {
		var m map[string]string
		decode(t, c.mattermost.next(t, 30*time.Second), &m)
		text := m["text"]
		if len(m) != 1 || !strings.HasPrefix(text, "**🚨 Deploy &lt;b&gt;failed&lt;/b&gt; &amp; @\u2060everyone** in \\#payments (my-saas)\n") ||
			!strings.Contains(text, "@\u2060here") || !strings.Contains(text, `\[click\](https://evil.example.com)`) ||
			!strings.Contains(text, "\n[Open](https://grafana.example.com/d/1?a=1&b=2)") || !strings.Contains(text, "\n[Open in Tidings]("+page+")") {
			t.Fatalf("text %q", text)
		}
		if regexp.MustCompile(`@(here|channel|all|everyone)`).MatchString(text) {
			t.Fatalf("event text can mention: %q", text)
		}
	})
	t.Run("pushover", func(t *testing.T) {
		rec := c.pushover.next(t, 30*time.Second)
		if rec.method != "POST" || rec.header.Get("Content-Type") != "application/x-www-form-urlencoded" || rec.url.Path != "/1/messages.json" {
			t.Fatalf("%s %s %q", rec.method, rec.url, rec.header.Get("Content-Type"))
		}
		if rec.url.RawQuery != "" {
			t.Fatalf("the app token stays in the URL: %v", rec.url)
		}
		f, err := url.ParseQuery(string(rec.body))
		if err != nil {
			t.Fatal(err)
		}
		if f.Get("token") != pushoverApp || f.Get("user") != pushoverUser || f.Get("title") != "🚨 "+hostileEvent+" in #payments (my-saas)" ||
			f.Get("message") != hostileDesc || f.Get("priority") != "1" || f.Get("url") != grafanaURL || f.Get("url_title") != "Open" ||
			f.Has("html") || f.Get("timestamp") != strconv.FormatInt(ev.Timestamp.Unix(), 10) {
			t.Fatalf("form %v", f)
		}
	})
	t.Run("gotify", func(t *testing.T) {
		rec := c.gotify.next(t, 30*time.Second)
		if rec.url.Path != "/message" || rec.url.Query().Has("token") || rec.header.Get("X-Gotify-Key") != gotifyToken {
			t.Fatalf("%v with X-Gotify-Key %q", rec.url, rec.header.Get("X-Gotify-Key"))
		}
		var m struct {
			Title, Message string
			Priority       *int
			Extras         map[string]map[string]any
		}
		decode(t, rec, &m)
		if m.Title != "🚨 "+hostileEvent+" in #payments (my-saas)" || m.Priority == nil || *m.Priority != 7 ||
			m.Extras["client::display"]["contentType"] != "text/markdown" {
			t.Fatalf("message %s", rec.body)
		}
		click, _ := m.Extras["client::notification"]["click"].(map[string]any)
		if click["url"] != grafanaURL {
			t.Fatalf("click %s", rec.body)
		}
		if !strings.HasPrefix(m.Message, `Ping \<users/all\> and \<!channel\> & @here: \`+"`"+`rm -rf\`+"`"+` \[click\](https://evil.example.com) \*bold\* \<script\>x\</script\>`) ||
			!strings.Contains(m.Message, "\n\n[Open](https://grafana.example.com/d/1?a=1&b=2)") || !strings.Contains(m.Message, "\n\n[Open in Tidings]("+page+")") {
			t.Fatalf("message %q", m.Message)
		}
	})
}

// TestChatServicesBounded: a description of 10,000 characters is cut to what each
// service takes; without --public-url and without a url there is no link.
func TestChatServicesBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.chatServices()
	e.run(deliver.Config{})
	long := strings.Repeat("é😀<&", tidings.MaxDescriptionLen/4)
	e.publish(tidings.NewEvent{Event: strings.Repeat("Long name ", 16), Icon: "🚨", Description: long, Priority: "urgent"})

	var tg struct{ Text string }
	decode(t, c.telegram.next(t, 30*time.Second), &tg)
	if v := telegramVisible(t, tg.Text); len(utf16.Encode([]rune(v))) > 4096 || len(utf16.Encode([]rune(v))) < 4000 || !strings.HasSuffix(v, "…") {
		t.Fatalf("telegram text of %d UTF-16 units: %q…", len(utf16.Encode([]rune(v))), v[:40])
	}
	if strings.Contains(tg.Text, "<a ") {
		t.Fatal("a link without --public-url or url")
	}
	rec := c.pushover.next(t, 30*time.Second)
	f, _ := url.ParseQuery(string(rec.body))
	if n := utf8.RuneCountInString(f.Get("message")); n != 1024 || f.Get("priority") != "1" || f.Has("url") {
		t.Fatalf("pushover message of %d characters, form %v", n, f)
	}
	if n := utf8.RuneCountInString(f.Get("title")); n > 250 {
		t.Fatalf("pushover title of %d characters", n)
	}
	var gotify struct {
		Title, Message string
		Priority       int
		Extras         map[string]any
	}
	decode(t, c.gotify.next(t, 30*time.Second), &gotify)
	if utf8.RuneCountInString(gotify.Message) > 9000 || gotify.Priority != 9 || gotify.Extras["client::notification"] != nil {
		t.Fatalf("gotify message of %d characters, priority %d, extras %v", utf8.RuneCountInString(gotify.Message), gotify.Priority, gotify.Extras)
	}
	for _, r := range []*receiver{c.teams, c.gchat, c.mattermost} {
		if b := r.next(t, 30*time.Second).body; len(b) > 28<<10 {
			t.Fatalf("%d bytes", len(b))
		}
	}
}

// TestChatServicesRetried: as other webhooks, a 5xx is tried again and a 4xx is the
// service's final answer; the attempts never show a token.
func TestChatServicesRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	retried, final := e.chatServices(502), e.chatServices(400)
	e.run(deliver.Config{})
	e.publish(tidings.NewEvent{Event: "x", Notify: true})
	for format, r := range retried.all() {
		first, second := r.next(t, 30*time.Second), r.next(t, 30*time.Second)
		if string(first.body) != string(second.body) {
			t.Fatalf("%s: the retry differs", format)
		}
	}
	for _, r := range final.all() {
		r.next(t, 30*time.Second)
	}
	for format, r := range final.all() {
		r.quiet(t, 100*time.Millisecond)
		waitFor(t, func() bool {
			a, _ := e.store.ListWebhookAttempts(context.Background(), e.account.ID, final.hooks[format].ID)
			return len(a) == 1 && a[0].Status == 400 && a[0].Error == "400 Bad Request"
		})
	}
}

// TestChatServicesTest: "send a test" reaches each chat service.
func TestChatServicesTest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.chatServices()
	e.run(deliver.Config{})
	// A Pushover app token given as the secret, not in the URL.
	po := newReceiver(t)
	c.hooks["pushover-secret"] = e.chatHook(tidings.NewWebhook{URL: po.URL + "/1/messages.json", Format: tidings.FormatPushover,
		UserKey: pushoverUser, Secret: pushoverApp2})
	for _, w := range c.hooks {
		e.must(e.store.EnqueueDelivery(context.Background(), &tidings.Delivery{Kind: tidings.DeliverTest, AccountID: e.account.ID,
			EventID: "test", Target: w.ID, MessageID: tidings.NewID("msg_")}))
	}
	all := c.all()
	all["pushover-secret"] = po
	for format, r := range all {
		rec := r.next(t, 30*time.Second)
		if format == "pushover-secret" {
			if f, _ := url.ParseQuery(string(rec.body)); f.Get("token") != pushoverApp2 || f.Get("user") != pushoverUser {
				t.Fatalf("pushover form %v", f)
			}
		}
		if b := string(rec.body); !strings.Contains(b, "Test from Tidings") && !strings.Contains(b, "Test+from+Tidings") {
			t.Fatalf("%s: %s", format, rec.body)
		}
	}
}

// TestChatErrorsHideTokens: a service that cannot be reached is recorded without the
// URL's token (a Telegram bot's is in the path, a Gotify app's in the query).
func TestChatErrorsHideTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gone := newReceiver(t)
	gone.Close() // connection refused
	tg := e.chatHook(tidings.NewWebhook{URL: gone.URL + botPath, Format: tidings.FormatTelegram, ChatID: "@tidings_ops"})
	gf := e.chatHook(tidings.NewWebhook{URL: "http://no-such-host.invalid/message?token=" + gotifyToken, Format: tidings.FormatGotify})
	e.run(deliver.Config{})
	e.publish(tidings.NewEvent{Event: "x"})
	for _, w := range []*tidings.Webhook{tg, gf} {
		var a []*tidings.WebhookAttempt
		waitFor(t, func() bool {
			a, _ = e.store.ListWebhookAttempts(context.Background(), e.account.ID, w.ID)
			return len(a) > 0
		})
		if a[0].Error == "" || strings.Contains(a[0].Error, "AAHdq") || strings.Contains(a[0].Error, gotifyToken) || strings.Contains(a[0].Error, "http") {
			t.Fatalf("attempt error %q", a[0].Error)
		}
	}
}
