package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// Who is notified (issue 39): a project's and a channel's recipients, a channel
// following its project, owning a setting and following again; members only, nothing
// saved otherwise; tenancy; deletions; and the chat services' webhook fields.

// wantRecipients fails unless RecipientsOf answers r and own.
func wantRecipients(t *testing.T, f fixture, project, channel string, want tidings.Recipients, wantOwn bool) {
	t.Helper()
	got, own, err := f.s.RecipientsOf(context.Background(), f.account.ID, project, channel)
	must(t, err)
	if got.Mode != want.Mode || !reflect.DeepEqual(got.Emails, want.Emails) || own != wantOwn {
		t.Fatalf("RecipientsOf(%q, %q) = %+v own %v, want %+v own %v", project, channel, got, own, want, wantOwn)
	}
}

// wantNotify fails unless err is a validation error of the field "notify" saying all of says.
func wantNotify(t *testing.T, err error, says ...string) {
	t.Helper()
	wantCode(t, err, tidings.EValidation)
	var e *tidings.Error
	if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Path != "notify" {
		t.Fatalf("error %v: want one problem of the field notify", err)
	}
	for _, s := range says {
		if !strings.Contains(e.Message, s) {
			t.Fatalf("error %q does not name %q", e.Message, s)
		}
	}
}

func members(emails ...string) *tidings.Recipients {
	return &tidings.Recipients{Mode: tidings.NotifyMembers, Emails: emails}
}

func testRecipients(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	ada := &tidings.User{AccountID: acct, Email: "Ada@Example.com", PasswordHash: "x", Role: tidings.UserOwner}
	bob := &tidings.User{AccountID: acct, Email: "bob@example.com", PasswordHash: "x", Role: tidings.UserMember}
	must(t, f.s.CreateUser(ctx, ada))
	must(t, f.s.CreateUser(ctx, bob))
	_, err := f.s.CreateChannel(ctx, acct, "my-saas", "deploys")
	must(t, err)
	nobody := tidings.Recipients{Mode: tidings.NotifyNobody}
	adaBob := tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"ada@example.com", "bob@example.com"}}
	onlyBob := tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"bob@example.com"}}

	// The defaults: the project notifies everyone, its channels follow it.
	wantRecipients(t, f, "my-saas", "", tidings.Everyone, true)
	wantRecipients(t, f, "my-saas", "payments", tidings.Everyone, false)

	// A project's chosen members, whatever their case, order and repeats; its
	// channels follow.
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "", members("BOB@example.com", " ada@example.com", "ada@EXAMPLE.com")))
	wantRecipients(t, f, "my-saas", "", adaBob, true)
	wantRecipients(t, f, "my-saas", "payments", adaBob, false)
	wantRecipients(t, f, "my-saas", "deploys", adaBob, false)

	// A channel owns a setting, follows again, owns another.
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", &nobody))
	wantRecipients(t, f, "my-saas", "payments", nobody, true)
	wantRecipients(t, f, "my-saas", "deploys", adaBob, false)
	wantRecipients(t, f, "my-saas", "", adaBob, true)
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", nil))
	wantRecipients(t, f, "my-saas", "payments", adaBob, false)
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", members("bob@example.com")))
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)
	// Everyone set on a channel is its own setting, not following.
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "deploys", &tidings.Everyone))
	wantRecipients(t, f, "my-saas", "deploys", tidings.Everyone, true)
	// A project's change shows in the channels that follow it only.
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "", &nobody))
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "deploys", nil))
	wantRecipients(t, f, "my-saas", "deploys", nobody, false)
	// nil on a project: everyone again.
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "", nil))
	wantRecipients(t, f, "my-saas", "", tidings.Everyone, true)
	wantRecipients(t, f, "my-saas", "deploys", tidings.Everyone, false)
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "", members("ada@example.com", "bob@example.com")))

	// Not a member: refused, naming the address, nothing saved.
	other := newAccount(t, f.s, "globex")
	eve := &tidings.User{AccountID: other.ID, Email: "eve@globex.example", PasswordHash: "x", Role: tidings.UserOwner}
	must(t, f.s.CreateUser(ctx, eve))
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", members("ada@example.com", "eve@globex.example")), "eve@globex.example")
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "", members("nobody@nowhere.example", "ada@example.com", "zed@nowhere.example")),
		"nobody@nowhere.example", "zed@nowhere.example")
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)
	wantRecipients(t, f, "my-saas", "", adaBob, true)
	// Not a setting at all.
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", members()))
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", members(" ", "")))
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", &tidings.Recipients{Mode: "some"}))
	many := make([]string, tidings.MaxRecipients+1)
	for i := range many {
		many[i] = strings.Repeat("x", i+1) + "@example.com"
	}
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", members(many...)))
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)

	// Unknown projects and channels.
	wantCode(t, f.s.SetRecipients(ctx, acct, "nope", "", &nobody), tidings.EProjectNotFound)
	wantCode(t, f.s.SetRecipients(ctx, acct, "nope", "payments", &nobody), tidings.EProjectNotFound)
	wantCode(t, f.s.SetRecipients(ctx, acct, "my-saas", "nope", &nobody), tidings.EChannelNotFound)
	wantCode(t, f.s.SetRecipients(ctx, acct, "my-saas", "nope", nil), tidings.EChannelNotFound)
	for _, pc := range [][2]string{{"nope", ""}, {"nope", "payments"}, {"my-saas", "nope"}} {
		_, _, err := f.s.RecipientsOf(ctx, acct, pc[0], pc[1])
		wantCode(t, err, map[bool]string{true: tidings.EProjectNotFound, false: tidings.EChannelNotFound}[pc[0] == "nope"])
	}

	// Another account: its project of the same name keeps its own setting; a project
	// of this account is not found from there; its members are its own.
	_, err = f.s.CreateProject(ctx, acct, "acme-only")
	must(t, err)
	g := fixture{s: f.s, account: other}
	wantRecipients(t, g, "my-saas", "", tidings.Everyone, true)
	wantRecipients(t, g, "my-saas", "payments", tidings.Everyone, false)
	wantCode(t, f.s.SetRecipients(ctx, other.ID, "acme-only", "", &nobody), tidings.EProjectNotFound)
	_, _, err = f.s.RecipientsOf(ctx, other.ID, "acme-only", "")
	wantCode(t, err, tidings.EProjectNotFound)
	wantNotify(t, f.s.SetRecipients(ctx, other.ID, "my-saas", "", members("ada@example.com")), "ada@example.com")
	must(t, f.s.SetRecipients(ctx, other.ID, "my-saas", "payments", members("EVE@globex.example")))
	wantRecipients(t, g, "my-saas", "payments", tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"eve@globex.example"}}, true)
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)
	wantRecipients(t, f, "my-saas", "", adaBob, true)

	// A member deleted after being chosen stays in the list as saved (Includes matches
	// account members only, so they are not notified); saving the list again names them.
	must(t, f.s.DeleteUser(ctx, acct, bob.ID))
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)
	wantNotify(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", members("bob@example.com")), "bob@example.com")
	wantRecipients(t, f, "my-saas", "payments", onlyBob, true)

	// A deleted channel's setting goes with it: one made again follows its project.
	must(t, f.s.DeleteChannel(ctx, acct, "my-saas", "payments"))
	_, _, err = f.s.RecipientsOf(ctx, acct, "my-saas", "payments")
	wantCode(t, err, tidings.EChannelNotFound)
	_, err = f.s.CreateChannel(ctx, acct, "my-saas", "payments")
	must(t, err)
	wantRecipients(t, f, "my-saas", "payments", adaBob, false)
	// So does a deleted project's, and its channels'.
	must(t, f.s.SetRecipients(ctx, acct, "my-saas", "payments", &nobody))
	must(t, f.s.DeleteProject(ctx, acct, "my-saas"))
	_, _, err = f.s.RecipientsOf(ctx, acct, "my-saas", "")
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.CreateProject(ctx, acct, "my-saas")
	must(t, err)
	_, err = f.s.CreateChannel(ctx, acct, "my-saas", "payments")
	must(t, err)
	wantRecipients(t, f, "my-saas", "", tidings.Everyone, true)
	wantRecipients(t, f, "my-saas", "payments", tidings.Everyone, false)
	// The other account's settings are untouched by all this.
	wantRecipients(t, g, "my-saas", "payments", tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"eve@globex.example"}}, true)
}

// The chat services' webhooks keep their chat id, user key and app token.
func testChatWebhooks(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	telegram := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Channel: "payments",
		URL: "https://api.telegram.org/bot123456:AAbbCCddEEffGGhhIIjjKKll/sendMessage", Format: tidings.FormatTelegram,
		Events: tidings.WebhookNotify, Name: "on call", ChatID: "-1001234567890"}
	pushover := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: "https://api.pushover.net/1/messages.json",
		Format: tidings.FormatPushover, Events: tidings.WebhookAll, UserKey: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
		Secret: "azGDORePK8gMaC0QOYAMyEEuzJnyUi"}
	gotify := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: "https://gotify.example/message?token=AbCdEf",
		Format: tidings.FormatGotify, Events: tidings.WebhookNotify}
	for _, w := range []*tidings.Webhook{telegram, pushover, gotify} {
		must(t, f.s.CreateWebhook(ctx, f.account.ID, w))
	}
	same := func(where string, got, want *tidings.Webhook) {
		t.Helper()
		if got.ID != want.ID || got.URL != want.URL || got.Format != want.Format || got.ChatID != want.ChatID ||
			got.UserKey != want.UserKey || got.Secret != want.Secret || got.Channel != want.Channel || got.Name != want.Name {
			t.Fatalf("%s = %+v, want %+v", where, got, want)
		}
	}
	list, err := f.s.ListWebhooks(ctx, f.account.ID)
	must(t, err)
	if len(list) != 3 {
		t.Fatalf("ListWebhooks: %d webhooks", len(list))
	}
	for i, want := range []*tidings.Webhook{telegram, pushover, gotify} {
		same("ListWebhooks", list[i], want)
		got, err := f.s.FindWebhook(ctx, f.account.ID, want.ID)
		must(t, err)
		same("FindWebhook", got, want)
	}
	ws, err := f.s.WebhooksFor(ctx, f.account.ID, "my-saas", "payments")
	must(t, err)
	if len(ws) != 3 {
		t.Fatalf("WebhooksFor: %d webhooks", len(ws))
	}
	for i, want := range []*tidings.Webhook{telegram, pushover, gotify} {
		same("WebhooksFor", ws[i], want)
	}
	if got := list[0].DisplayURL(); strings.Contains(got, "AAbbCC") {
		t.Fatalf("DisplayURL shows the bot token: %s", got)
	}
}
