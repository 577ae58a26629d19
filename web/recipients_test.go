package web_test

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// recipientsOf reads a setting from the store, failing the test on an error.
func recipientsOf(t *testing.T, e *env, channel string) (string, bool) {
	t.Helper()
	r, own, err := e.store.RecipientsOf(context.Background(), e.account("acme").ID, "my-saas", channel)
	if err != nil {
		t.Fatal(err)
	}
	return r.String(), own
}

// TestRecipientsSettings: owners choose who is notified of a project and of each
// channel (everyone, nobody, chosen members, or for a channel as the project); every
// bad input says what is wrong and saves nothing; members only read the setting.
func TestRecipientsSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	bob, _ := e.member(acme, "bob@example.com")
	ada.get("/settings/projects").want(t, 200, "Notify: everyone")
	ada.get("/settings/projects/my-saas").want(t, 200, `<a class="row" href="/settings/projects/my-saas/notify"><span class="row-main"><span class="row-title">Who is notified</span><span class="row-meta">everyone</span>`)
	page := ada.get("/settings/projects/my-saas/notify")
	page.want(t, 200, "Who is notified: my-saas", `name="notify" value="everyone" checked`, `name="member" value="bob@example.com"`,
		`name="channel" value="payments"`, `name="notify" value="project" checked`, "As the project (everyone)")

	// The project: chosen members.
	ada.post("/settings/projects/my-saas/notify", "notify", "members", "member", "bob@example.com", "member", "ada@example.com").
		redirects(t, "/settings/projects/my-saas/notify#notify-project")
	if got, _ := recipientsOf(t, e, ""); got != "ada@example.com,bob@example.com" {
		t.Fatalf("the project notifies %q", got)
	}
	ada.get("/settings/projects/my-saas/notify").want(t, 200, "Notify the project my-saas: ada@example.com, bob@example.com.",
		`name="notify" value="members" checked`, `value="bob@example.com" checked`, "As the project (ada@example.com, bob@example.com)")
	ada.get("/settings/projects").want(t, 200, "Notify: ada@example.com, bob@example.com")

	// A channel: its own, then the project's again.
	ada.post("/settings/projects/my-saas/notify", "channel", "payments", "notify", "nobody").
		redirects(t, "/settings/projects/my-saas/notify#notify-c-payments")
	if got, own := recipientsOf(t, e, "payments"); got != "nobody" || !own {
		t.Fatalf("#payments notifies %q (own %v)", got, own)
	}
	ada.get("/settings/projects/my-saas/notify").want(t, 200, "#payments</strong> <span class=\"muted\">· nobody")
	ada.post("/settings/projects/my-saas/notify", "channel", "payments", "notify", "members", "member", "ada@example.com").
		redirects(t, "/settings/projects/my-saas/notify#notify-c-payments")
	if got, own := recipientsOf(t, e, "payments"); got != "ada@example.com" || !own {
		t.Fatalf("#payments notifies %q (own %v)", got, own)
	}

	// Bad input: an error on the page, and nothing saved.
	for _, bad := range []struct {
		form []string
		says string
	}{
		{[]string{"notify", "members", "member", "eve@elsewhere.example"}, "eve@elsewhere.example"},
		{[]string{"channel", "payments", "notify", "members", "member", "eve@elsewhere.example"}, "eve@elsewhere.example"},
		{[]string{"notify", "members", "member", "not-an-email"}, "not-an-email"},
		{[]string{"notify", "members"}, "choose at least one member"},
		{[]string{"channel", "payments", "notify", "members"}, "choose at least one member"},
		{[]string{"notify", "someone"}, "choose everyone, nobody or chosen members"},
		{[]string{"notify", ""}, "choose everyone, nobody or chosen members"},
		{[]string{"notify", "project"}, "cannot follow itself"},
		{[]string{"channel", "nope", "notify", "nobody"}, "nope"},
	} {
		p := ada.post("/settings/projects/my-saas/notify", bad.form...)
		p.want(t, 400, `class="error" role="alert"`)
		if !strings.Contains(html.UnescapeString(p.body), bad.says) {
			t.Fatalf("%v: the error does not say %q: %s", bad.form, bad.says, excerpt(p.body))
		}
		if strings.Contains(p.body, "notify:") {
			t.Fatalf("%v: the error names the API's field: %s", bad.form, excerpt(p.body))
		}
		if got, _ := recipientsOf(t, e, ""); got != "ada@example.com,bob@example.com" {
			t.Fatalf("%v: the project now notifies %q", bad.form, got)
		}
		if got, own := recipientsOf(t, e, "payments"); got != "ada@example.com" || !own {
			t.Fatalf("%v: #payments now notifies %q (own %v)", bad.form, got, own)
		}
	}

	ada.post("/settings/projects/my-saas/notify", "channel", "payments", "notify", "project").
		redirects(t, "/settings/projects/my-saas/notify#notify-c-payments")
	if got, own := recipientsOf(t, e, "payments"); got != "ada@example.com,bob@example.com" || own {
		t.Fatalf("#payments notifies %q (own %v), want the project's", got, own)
	}
	ada.post("/settings/projects/my-saas/notify", "notify", "everyone").redirects(t, "/settings/projects/my-saas/notify#notify-project")
	if got, _ := recipientsOf(t, e, ""); got != "everyone" {
		t.Fatalf("the project notifies %q", got)
	}
	ada.post("/settings/projects/nope/notify", "notify", "nobody").want(t, 404)
	ada.get("/settings/projects/nope/notify").want(t, 404)

	// Members read it, and cannot change it.
	view := bob.get("/settings/projects/my-saas/notify")
	view.want(t, 200, "<dt>The project</dt><dd>everyone</dd>", "<dt>#payments</dt><dd>as the project (everyone)</dd>", "Owners change who is notified.")
	if strings.Contains(view.body, `name="notify"`) {
		t.Fatal("a member is offered the form")
	}
	bob.post("/settings/projects/my-saas/notify", "notify", "nobody").want(t, 403)
	bob.get("/settings/projects").want(t, 200, "Notify: everyone")
	if got, _ := recipientsOf(t, e, ""); got != "everyone" {
		t.Fatalf("after a member's try the project notifies %q", got)
	}

	// Another account's owner cannot reach it.
	other := newEnvOtherAccount(t, e)
	other.post("/settings/projects/my-saas/notify", "notify", "nobody").want(t, 404)
	other.get("/settings/projects/my-saas/notify").want(t, 404)
}

// TestChatWebhooks: the chat services' webhooks are made in the form with their own
// fields, listed without their tokens, and tested like the others; a chat id or key of
// the wrong shape says so, names the form's field and saves nothing.
func TestChatWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	const botToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	const userKey, appToken = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
	ada.get("/settings/webhooks").want(t, 200, `value="telegram"`, `value="teams"`, `value="google-chat"`, `value="mattermost"`,
		`value="pushover"`, `value="gotify"`, `name="chat_id"`, `name="user_key"`, `name="secret"`, `<label for="wh-chat-id">`)

	count := func() int {
		hooks, err := e.store.ListWebhooks(context.Background(), acme.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(hooks)
	}
	telegramURL := "https://api.telegram.org/bot" + botToken + "/sendMessage"
	for _, bad := range []struct {
		form []string
		says string
	}{
		{[]string{"format", "telegram", "url", telegramURL, "chat_id", "general"}, "Chat id:"},
		{[]string{"format", "telegram", "url", telegramURL}, "Chat id:"},
		{[]string{"format", "telegram", "url", "https://api.telegram.org/sendMessage", "chat_id", "-100123"}, "sendMessage URL"},
		{[]string{"format", "pushover", "url", "https://api.pushover.net/1/messages.json", "user_key", "short", "secret", appToken}, "User key:"},
		{[]string{"format", "pushover", "url", "https://api.pushover.net/1/messages.json", "user_key", userKey}, "App token:"},
		{[]string{"format", "pushover", "url", "https://api.pushover.net/1/messages.json", "user_key", userKey, "secret", "tooshort"}, "App token:"},
		{[]string{"format", "gotify", "url", "https://gotify.example.com/message"}, "/message?token="},
		{[]string{"format", "signal", "url", "https://example.com/x"}, "must be standard"},
	} {
		p := ada.post("/settings/webhooks", append([]string{"project", "my-saas", "events", "notify"}, bad.form...)...)
		p.want(t, 400, bad.says)
		if strings.Contains(p.body, appToken) {
			t.Fatalf("%v: the typed app token is sent back", bad.form)
		}
		if n := count(); n != 0 {
			t.Fatalf("%v: %d webhooks saved", bad.form, n)
		}
	}
	// A chat id typed before another format was picked is not that format's problem.
	ada.post("/settings/webhooks", "project", "my-saas", "format", "mattermost", "url", "https://chat.example.com/hooks/abc", "chat_id", "-100123").
		want(t, 303)

	made := func(form ...string) *tidings.Webhook {
		t.Helper()
		before := count()
		p := ada.post("/settings/webhooks", append([]string{"project", "my-saas", "events", "notify"}, form...)...)
		if p.status != 303 || !strings.HasPrefix(p.location, "/settings/webhooks/wh_") {
			t.Fatalf("%v: %d to %q: %s", form, p.status, p.location, excerpt(p.body))
		}
		if count() != before+1 {
			t.Fatalf("%v: not saved", form)
		}
		h, err := e.store.FindWebhook(context.Background(), acme.ID, strings.TrimSuffix(strings.TrimPrefix(p.location, "/settings/webhooks/"), "#webhook-created"))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tg := made("name", "ops chat", "format", "telegram", "url", telegramURL, "chat_id", "-1001234567890")
	if tg.ChatID != "-1001234567890" || tg.URL != telegramURL {
		t.Fatalf("stored %+v", tg)
	}
	created := ada.get("/settings/webhooks/" + tg.ID)
	created.want(t, 200, "Webhook “ops chat” created", "not shown again", "api.telegram.org/bot…/sendMessage", "chat -1001234567890")
	if strings.Contains(created.body, "whsec_") {
		t.Fatal("a telegram webhook is shown a signing secret")
	}
	po := made("format", "pushover", "url", "https://api.pushover.net/1/messages.json", "user_key", userKey, "secret", appToken)
	if po.UserKey != userKey || po.Secret != appToken {
		t.Fatalf("stored %+v", po)
	}
	made("format", "gotify", "url", "https://gotify.example.com/message?token=AbCdEf123")
	made("format", "teams", "url", "https://prod-01.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=1&sig=SeCrEtSig")
	made("format", "google-chat", "url", "https://chat.googleapis.com/v1/spaces/AAA/messages?key=KeY&token=ToKeN")
	list := html.UnescapeString(ada.get("/settings/webhooks").body)
	for _, secret := range []string{botToken, appToken, "AbCdEf123", "SeCrEtSig", "ToKeN"} {
		if strings.Contains(list, secret) {
			t.Fatalf("the list shows the secret %q", secret)
		}
	}
	for _, shown := range []string{"gotify.example.com/message?token=…", "sig=…", "pushover"} {
		if !strings.Contains(list, shown) {
			t.Fatalf("the list lacks %q", shown)
		}
	}
	// Nor does a webhook's own page, once its creation was shown.
	hooks, _ := e.store.ListWebhooks(context.Background(), acme.ID)
	for _, h := range hooks {
		page := html.UnescapeString(ada.get("/settings/webhooks/" + h.ID).body)
		for _, secret := range []string{botToken, appToken, "AbCdEf123", "SeCrEtSig", "ToKeN"} {
			if strings.Contains(page, secret) {
				t.Fatalf("the page of %s shows the secret %q", h.Format, secret)
			}
		}
	}

	// "Send a test" queues a test delivery for a chat service too.
	ada.post("/settings/webhooks/"+tg.ID+"/test").redirects(t, "/settings/webhooks/"+tg.ID+"#deliveries")
	ada.post("/settings/webhooks/"+po.ID+"/test").redirects(t, "/settings/webhooks/"+po.ID+"#deliveries")
	if n, _, _ := e.store.PendingDeliveries(context.Background()); n != 2 {
		t.Fatalf("the tests queued %d deliveries", n)
	}
}

// TestEventPageSaysNotARecipient: a device whose user is not among the event's
// recipients is counted as such on the event page.
func TestEventPageSaysNotARecipient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ada := e.owner()
	acme := e.account("acme")
	ev := e.publish(acme, tidings.NewEvent{Event: "paid", Notify: true})
	u, _ := e.store.FindUserByEmail(context.Background(), "ada@example.com")
	subs := []*tidings.PushSubscription{
		{AccountID: acme.ID, UserID: u.ID, Endpoint: "https://fcm.googleapis.com/fcm/send/a", P256dh: "k", Auth: "a"},
		{AccountID: acme.ID, UserID: u.ID, Endpoint: "https://fcm.googleapis.com/fcm/send/b", P256dh: "k", Auth: "a"},
	}
	for _, sub := range subs {
		if _, err := e.store.SavePushSubscription(context.Background(), sub); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.RecordPushes(context.Background(), []*tidings.PushRecord{
		{EventID: ev.ID, SubscriptionID: subs[0].ID, Status: tidings.PushSent, At: time.Now()},
		{EventID: ev.ID, SubscriptionID: subs[1].ID, Status: tidings.PushNotRecipient, At: time.Now()},
	}); err != nil {
		t.Fatal(err)
	}
	ada.get("/p/my-saas/events/"+ev.ID).want(t, 200, "Pushed to 1 device; 1 not a recipient.")
}
