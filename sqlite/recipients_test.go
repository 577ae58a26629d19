package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// A dump (migrate-store's source) carries the recipients and the chat services'
// webhook fields in the neutral shape: projects.notify, channels.notify (NULL while the
// channel follows its project), webhooks.chat_id and user_key.
func TestDumpCarriesRecipients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, a := openShop(t)
	for _, c := range []string{"orders", "deploys"} {
		if _, err := db.CreateChannel(ctx, a.ID, "shop", c); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []string{"bob@example.com", "ada@example.com"} {
		if err := db.CreateUser(ctx, &tidings.User{AccountID: a.ID, Email: e, PasswordHash: "x", Role: tidings.UserMember}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetRecipients(ctx, a.ID, "shop", "", &tidings.Recipients{Mode: tidings.NotifyMembers,
		Emails: []string{"bob@example.com", "ada@example.com"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRecipients(ctx, a.ID, "shop", "orders", &tidings.Recipients{Mode: tidings.NotifyNobody}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateWebhook(ctx, a.ID, &tidings.Webhook{ID: "wh_tg", Project: "shop", Format: tidings.FormatTelegram,
		URL: "https://api.telegram.org/bot1:AAbbCCddEEffGGhhIIjjKKll/sendMessage", Events: tidings.WebhookNotify, ChatID: "@ops_room"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateWebhook(ctx, a.ID, &tidings.Webhook{ID: "wh_po", Project: "shop", Format: tidings.FormatPushover,
		URL: "https://api.pushover.net/1/messages.json", Events: tidings.WebhookAll, UserKey: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
		Secret: "azGDORePK8gMaC0QOYAMyEEuzJnyUi"}); err != nil {
		t.Fatal(err)
	}
	d, err := db.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// read returns the rows of a table as column → value, keyed by keyCol.
	read := func(table, keyCol string) map[string]map[string]any {
		out := map[string]map[string]any{}
		if err := d.Rows(ctx, table, func(cols []string, row []any) error {
			m := map[string]any{}
			for i, c := range cols {
				m[c] = row[i]
			}
			out[m[keyCol].(string)] = m
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read("projects", "name")["shop"]["notify"]; got != "ada@example.com,bob@example.com" {
		t.Errorf("projects.notify = %#v", got)
	}
	channels := read("channels", "name")
	if got := channels["orders"]["notify"]; got != "nobody" {
		t.Errorf("channels.notify of a channel with its own = %#v", got)
	}
	if got, ok := channels["deploys"]["notify"]; !ok || got != nil {
		t.Errorf("channels.notify of a channel following its project = %#v (column there: %v), want NULL", got, ok)
	}
	webhooks := read("webhooks", "id")
	if tg := webhooks["wh_tg"]; tg["chat_id"] != "@ops_room" || tg["user_key"] != "" {
		t.Errorf("telegram webhook dumped as %v", tg)
	}
	if po := webhooks["wh_po"]; po["user_key"] != "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" || po["secret"] != "azGDORePK8gMaC0QOYAMyEEuzJnyUi" || po["chat_id"] != "" {
		t.Errorf("pushover webhook dumped as %v", po)
	}
}

// A store made before migration 24 (down to 23 and up again): its projects notify
// everyone, its channels follow them, its webhooks have no chat id or user key.
func TestRecipientsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	acme := shopStore(t, db)
	if err := db.CreateWebhook(ctx, acme, &tidings.Webhook{ID: "wh_1", Project: "shop", URL: "https://hooks.example/a",
		Format: tidings.FormatSlack, Events: tidings.WebhookAll}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRecipients(ctx, acme, "shop", "orders", &tidings.Recipients{Mode: tidings.NotifyNobody}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub, goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(migration6()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 23); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustCheck(t, db)
	for _, c := range []string{"", "orders"} {
		r, own, err := db.RecipientsOf(ctx, acme, "shop", c)
		if err != nil || r.Mode != tidings.NotifyEveryone || own != (c == "") {
			t.Fatalf("RecipientsOf(shop, %q) after the migration = %+v own %v, %v", c, r, own, err)
		}
	}
	w, err := db.FindWebhook(ctx, acme, "wh_1")
	if err != nil || w.ChatID != "" || w.UserKey != "" || w.URL != "https://hooks.example/a" {
		t.Fatalf("FindWebhook after the migration = %+v, %v", w, err)
	}
}
