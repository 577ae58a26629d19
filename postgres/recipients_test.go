package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// recipientsFixture is an account acme (owner ada, member bob, project my-saas with
// channels payments and deploys) and an account globex (member eve, its own my-saas).
type recipientsFixture struct {
	db           *postgres.DB
	acme, globex int64
}

func newRecipientsFixture(t *testing.T) recipientsFixture {
	t.Helper()
	ctx := context.Background()
	db := open(t)
	f := recipientsFixture{db: db}
	for _, acc := range []struct {
		name     string
		id       *int64
		emails   []string
		channels []string
	}{
		{"acme", &f.acme, []string{"Ada@Example.com", "bob@example.com"}, []string{"payments", "deploys"}},
		{"globex", &f.globex, []string{"eve@example.com"}, []string{"payments"}},
	} {
		a, err := db.CreateAccount(ctx, acc.name)
		noErr(t, err)
		*acc.id = a.ID
		for i, e := range acc.emails {
			role := tidings.UserMember
			if i == 0 {
				role = tidings.UserOwner
			}
			noErr(t, db.CreateUser(ctx, &tidings.User{AccountID: a.ID, Email: e, PasswordHash: "$argon2id$x", Role: role}))
		}
		_, err = db.CreateProject(ctx, a.ID, "my-saas")
		noErr(t, err)
		for _, c := range acc.channels {
			_, err := db.CreateChannel(ctx, a.ID, "my-saas", c)
			noErr(t, err)
		}
	}
	return f
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f recipientsFixture) want(t *testing.T, account int64, project, channel, setting string, own bool) {
	t.Helper()
	r, gotOwn, err := f.db.RecipientsOf(context.Background(), account, project, channel)
	noErr(t, err)
	if r.String() != setting || gotOwn != own {
		t.Fatalf("RecipientsOf(%q, %q) = %q own %v, want %q own %v", project, channel, r.String(), gotOwn, setting, own)
	}
	want, _ := tidings.ParseRecipients(setting)
	if r.Mode != want.Mode || !slices.Equal(r.Emails, want.Emails) {
		t.Fatalf("RecipientsOf(%q, %q) = %+v, want %+v", project, channel, r, want)
	}
}

func recipients(t *testing.T, s string) *tidings.Recipients {
	t.Helper()
	r, err := tidings.ParseRecipients(s)
	noErr(t, err)
	return &r
}

func wantValidation(t *testing.T, err error, field, says string) {
	t.Helper()
	var e *tidings.Error
	if !errors.As(err, &e) || e.Code != tidings.EValidation {
		t.Fatalf("error %v, want %s", err, tidings.EValidation)
	}
	if len(e.Fields) != 1 || e.Fields[0].Path != field || !strings.Contains(e.Message, says) {
		t.Fatalf("error %q (fields %+v), want field %q saying %q", e.Message, e.Fields, field, says)
	}
}

func wantErrCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := tidings.ErrorCode(err); got != code {
		t.Fatalf("error %v (%q), want %q", err, got, code)
	}
}

// TestRecipients: a project notifies everyone until set; a channel follows its
// project until it has its own setting, and again after nil; settings round trip.
func TestRecipients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db

	f.want(t, f.acme, "my-saas", "", "everyone", true)
	f.want(t, f.acme, "my-saas", "payments", "everyone", false)

	// The project's setting: the channels without their own follow it.
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "nobody")))
	f.want(t, f.acme, "my-saas", "", "nobody", true)
	f.want(t, f.acme, "my-saas", "payments", "nobody", false)
	f.want(t, f.acme, "my-saas", "deploys", "nobody", false)

	// A channel's own, in any case and order, stored lower case and sorted.
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "payments", recipients(t, " bob@example.com, ADA@example.com ,bob@example.com")))
	f.want(t, f.acme, "my-saas", "payments", "ada@example.com,bob@example.com", true)
	f.want(t, f.acme, "my-saas", "deploys", "nobody", false)
	f.want(t, f.acme, "my-saas", "", "nobody", true)
	r, _, err := db.RecipientsOf(ctx, f.acme, "my-saas", "payments")
	noErr(t, err)
	if !r.Includes("Ada@Example.com") || !r.Includes("bob@example.com") || r.Includes("eve@example.com") {
		t.Fatalf("Includes of %+v", r)
	}

	// Own "everyone" on a channel differs from following a project of "everyone".
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "deploys", &tidings.Everyone))
	f.want(t, f.acme, "my-saas", "deploys", "everyone", true)

	// The project's change does not touch the channels with their own.
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "bob@example.com")))
	f.want(t, f.acme, "my-saas", "", "bob@example.com", true)
	f.want(t, f.acme, "my-saas", "payments", "ada@example.com,bob@example.com", true)
	f.want(t, f.acme, "my-saas", "deploys", "everyone", true)

	// nil: the channel follows the project again; the project notifies everyone.
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "payments", nil))
	f.want(t, f.acme, "my-saas", "payments", "bob@example.com", false)
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "", nil))
	f.want(t, f.acme, "my-saas", "", "everyone", true)
	f.want(t, f.acme, "my-saas", "payments", "everyone", false)
	f.want(t, f.acme, "my-saas", "deploys", "everyone", true)
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "payments", nil)) // already following: no error
	f.want(t, f.acme, "my-saas", "payments", "everyone", false)

	// A Recipients not from ParseRecipients is made the same shape.
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "", &tidings.Recipients{Mode: tidings.NotifyMembers,
		Emails: []string{"BOB@example.com", "ada@example.com", "bob@example.com"}}))
	f.want(t, f.acme, "my-saas", "", "ada@example.com,bob@example.com", true)
}

// TestRecipientsRefused: a non-member (of no account, or of another), a bad setting,
// an unknown project or channel: an error, and nothing saved.
func TestRecipientsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "ada@example.com")))
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "payments", recipients(t, "nobody")))
	unchanged := func() {
		t.Helper()
		f.want(t, f.acme, "my-saas", "", "ada@example.com", true)
		f.want(t, f.acme, "my-saas", "payments", "nobody", true)
		f.want(t, f.acme, "my-saas", "deploys", "ada@example.com", false)
		f.want(t, f.globex, "my-saas", "", "everyone", true)
		f.want(t, f.globex, "my-saas", "payments", "everyone", false)
	}
	for _, channel := range []string{"", "payments", "deploys"} {
		// Eve is a member of globex, not of acme; nobody@ is no one's.
		for _, list := range []string{"ada@example.com,eve@example.com", "eve@example.com", "bob@example.com,nobody@example.com"} {
			err := db.SetRecipients(ctx, f.acme, "my-saas", channel, recipients(t, list))
			wantValidation(t, err, "notify", strings.TrimPrefix(list[strings.LastIndex(list, ",")+1:], ","))
			unchanged()
		}
	}
	// Every stranger is named at once.
	err := db.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "zed@example.com,ada@example.com,eve@example.com"))
	wantValidation(t, err, "notify", "not a member of the account: eve@example.com, zed@example.com")
	unchanged()
	// Acme's members are not globex's.
	err = db.SetRecipients(ctx, f.globex, "my-saas", "", recipients(t, "ada@example.com"))
	wantValidation(t, err, "notify", "ada@example.com")
	unchanged()

	bad := []struct {
		r    tidings.Recipients
		says string
	}{
		{tidings.Recipients{Mode: "some"}, `"some"`},
		{tidings.Recipients{Mode: ""}, "must be"},
		{tidings.Recipients{Mode: tidings.NotifyMembers}, "at least one"},
		{tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"not an email"}}, "not an email"},
		{tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"nobody"}}, "nobody"},
		{tidings.Recipients{Mode: tidings.NotifyMembers, Emails: []string{"ada@example.com,bob@example.com"}}, "not an email"},
		{tidings.Recipients{Mode: tidings.NotifyNobody, Emails: []string{"ada@example.com"}}, "chosen members only"},
	}
	for _, b := range bad {
		err := db.SetRecipients(ctx, f.acme, "my-saas", "payments", &b.r)
		wantValidation(t, err, "notify", b.says)
		unchanged()
	}

	// Unknown project or channel, and the other account's: not found, nothing saved.
	wantErrCode(t, db.SetRecipients(ctx, f.acme, "nope", "", recipients(t, "nobody")), tidings.EProjectNotFound)
	wantErrCode(t, db.SetRecipients(ctx, f.acme, "nope", "payments", recipients(t, "nobody")), tidings.EProjectNotFound)
	wantErrCode(t, db.SetRecipients(ctx, f.acme, "my-saas", "nope", recipients(t, "nobody")), tidings.EChannelNotFound)
	wantErrCode(t, db.SetRecipients(ctx, f.acme, "my-saas", "nope", nil), tidings.EChannelNotFound)
	wantErrCode(t, db.SetRecipients(ctx, f.globex, "my-saas", "deploys", recipients(t, "nobody")), tidings.EChannelNotFound)
	// The unknown channel is named before the non-member.
	wantErrCode(t, db.SetRecipients(ctx, f.acme, "my-saas", "nope", recipients(t, "eve@example.com")), tidings.EChannelNotFound)
	unchanged()
	_, _, err = db.RecipientsOf(ctx, f.acme, "nope", "")
	wantErrCode(t, err, tidings.EProjectNotFound)
	_, _, err = db.RecipientsOf(ctx, f.acme, "nope", "payments")
	wantErrCode(t, err, tidings.EProjectNotFound)
	_, _, err = db.RecipientsOf(ctx, f.acme, "my-saas", "nope")
	wantErrCode(t, err, tidings.EChannelNotFound)
	_, _, err = db.RecipientsOf(ctx, f.globex, "my-saas", "deploys")
	wantErrCode(t, err, tidings.EChannelNotFound)
	other, err := db.CreateAccount(ctx, "initech")
	noErr(t, err)
	_, _, err = db.RecipientsOf(ctx, other.ID, "my-saas", "")
	wantErrCode(t, err, tidings.EProjectNotFound)
}

// TestRecipientsDeletedMember: a chosen member deleted stays in the stored list but
// is no member any more, so the same list is refused when saved again.
func TestRecipientsDeletedMember(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "payments", recipients(t, "ada@example.com,bob@example.com")))
	users, err := db.ListUsers(ctx, f.acme)
	noErr(t, err)
	for _, u := range users {
		if u.Email == "bob@example.com" {
			noErr(t, db.DeleteUser(ctx, f.acme, u.ID))
		}
	}
	f.want(t, f.acme, "my-saas", "payments", "ada@example.com,bob@example.com", true)
	err = db.SetRecipients(ctx, f.acme, "my-saas", "payments", recipients(t, "ada@example.com,bob@example.com"))
	wantValidation(t, err, "notify", "bob@example.com")
	noErr(t, db.SetRecipients(ctx, f.acme, "my-saas", "payments", recipients(t, "ada@example.com")))
	f.want(t, f.acme, "my-saas", "payments", "ada@example.com", true)

	// A deleted channel or project takes its setting with it.
	noErr(t, db.DeleteChannel(ctx, f.acme, "my-saas", "payments"))
	_, err = db.CreateChannel(ctx, f.acme, "my-saas", "payments")
	noErr(t, err)
	f.want(t, f.acme, "my-saas", "payments", "everyone", false)
}

// TestWebhookChatFields: the chat services' chat id, user key and app token are
// stored and read back by every read of webhooks.
func TestWebhookChatFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	tg := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Channel: "payments", Format: tidings.FormatTelegram,
		URL: "https://api.telegram.org/bot123456:" + strings.Repeat("A", 35) + "/sendMessage", Events: tidings.WebhookNotify,
		ChatID: "-1001234567890", Name: "ops"}
	po := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Format: tidings.FormatPushover,
		URL: "https://api.pushover.net/1/messages.json", Events: tidings.WebhookAll,
		UserKey: strings.Repeat("u", 30), Secret: strings.Repeat("a", 30)}
	plain := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Format: tidings.FormatSlack,
		URL: "https://hooks.slack.com/services/x", Events: tidings.WebhookNotify}
	for _, w := range []*tidings.Webhook{tg, po, plain} {
		noErr(t, db.CreateWebhook(ctx, f.acme, w))
	}
	same := func(got, want *tidings.Webhook) {
		t.Helper()
		if got.ID != want.ID || got.ChatID != want.ChatID || got.UserKey != want.UserKey || got.Secret != want.Secret ||
			got.Format != want.Format || got.URL != want.URL || got.Channel != want.Channel {
			t.Fatalf("webhook read back as %+v, want %+v", got, want)
		}
	}
	list, err := db.ListWebhooks(ctx, f.acme)
	noErr(t, err)
	if len(list) != 3 {
		t.Fatalf("%d webhooks listed, want 3", len(list))
	}
	for i, w := range []*tidings.Webhook{tg, po, plain} {
		same(list[i], w)
		found, err := db.FindWebhook(ctx, f.acme, w.ID)
		noErr(t, err)
		same(found, w)
	}
	forPayments, err := db.WebhooksFor(ctx, f.acme, "my-saas", "payments")
	noErr(t, err)
	if len(forPayments) != 3 {
		t.Fatalf("%d webhooks for payments, want 3", len(forPayments))
	}
	same(forPayments[0], tg)
	same(forPayments[1], po)
	forDeploys, err := db.WebhooksFor(ctx, f.acme, "my-saas", "deploys")
	noErr(t, err)
	if len(forDeploys) != 2 {
		t.Fatalf("%d webhooks for deploys, want 2", len(forDeploys))
	}
	same(forDeploys[0], po)
	same(forDeploys[1], plain)
	if plain2, _ := db.FindWebhook(ctx, f.acme, plain.ID); plain2.ChatID != "" || plain2.UserKey != "" {
		t.Fatalf("a slack webhook has chat fields: %+v", plain2)
	}
	// Not the other account's.
	_, err = db.FindWebhook(ctx, f.globex, tg.ID)
	wantErrCode(t, err, tidings.ENotFound)
}

// TestRecipientsMigrateStore: migrate-store's Load carries the recipients and the
// webhooks' chat fields, and takes a dump of an older store without those columns
// with their defaults (everyone, as the project, no chat id or user key).
func TestRecipientsMigrateStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	src := f.db
	noErr(t, src.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "nobody")))
	noErr(t, src.SetRecipients(ctx, f.acme, "my-saas", "payments", recipients(t, "ada@example.com,bob@example.com")))
	noErr(t, src.SetRecipients(ctx, f.globex, "my-saas", "payments", recipients(t, "eve@example.com")))
	tg := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Format: tidings.FormatTelegram,
		URL: "https://api.telegram.org/bot1:" + strings.Repeat("A", 35) + "/sendMessage", Events: tidings.WebhookNotify, ChatID: "@ops_team"}
	po := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Format: tidings.FormatPushover,
		URL: "https://api.pushover.net/1/messages.json", Events: tidings.WebhookNotify,
		UserKey: strings.Repeat("u", 30), Secret: strings.Repeat("a", 30)}
	noErr(t, src.CreateWebhook(ctx, f.acme, tg))
	noErr(t, src.CreateWebhook(ctx, f.acme, po))

	t.Run("carried", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		dst := recipientsFixture{db: open(t), acme: f.acme, globex: f.globex}
		_, err = dst.db.Load(ctx, d)
		noErr(t, err)
		dst.want(t, f.acme, "my-saas", "", "nobody", true)
		dst.want(t, f.acme, "my-saas", "payments", "ada@example.com,bob@example.com", true)
		dst.want(t, f.acme, "my-saas", "deploys", "nobody", false)
		dst.want(t, f.globex, "my-saas", "payments", "eve@example.com", true)
		for _, w := range []*tidings.Webhook{tg, po} {
			got, err := dst.db.FindWebhook(ctx, f.acme, w.ID)
			noErr(t, err)
			if got.ChatID != w.ChatID || got.UserKey != w.UserKey || got.Secret != w.Secret {
				t.Fatalf("webhook after migrate-store %+v, want %+v", got, w)
			}
		}
		// The copied members are checked as the source's were.
		wantValidation(t, dst.db.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "eve@example.com")), "notify", "eve@example.com")
		noErr(t, dst.db.SetRecipients(ctx, f.acme, "my-saas", "", recipients(t, "bob@example.com")))
	})

	t.Run("older dump", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		d.Tables["projects"].DropColumn("notify")
		d.Tables["channels"].DropColumn("notify")
		d.Tables["webhooks"].DropColumn("chat_id")
		d.Tables["webhooks"].DropColumn("user_key")
		dst := recipientsFixture{db: open(t), acme: f.acme, globex: f.globex}
		_, err = dst.db.Load(ctx, d)
		noErr(t, err)
		dst.want(t, f.acme, "my-saas", "", "everyone", true)
		dst.want(t, f.acme, "my-saas", "payments", "everyone", false)
		dst.want(t, f.globex, "my-saas", "payments", "everyone", false)
		got, err := dst.db.FindWebhook(ctx, f.acme, po.ID)
		noErr(t, err)
		if got.ChatID != "" || got.UserKey != "" || got.Secret != po.Secret {
			t.Fatalf("webhook from an older dump %+v", got)
		}
	})

	t.Run("a required column missing", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		d.Tables["webhooks"].DropColumn("format")
		_, err = open(t).Load(ctx, d)
		if err == nil || !strings.Contains(err.Error(), "format") {
			t.Fatalf("a dump without webhooks.format loaded: %v", err)
		}
	})
}
