package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// A dump (migrate-store's source) carries inbound hooks and their logs in the neutral
// shape, table by table as they are here: hooks with path_hash as bytes, template a
// JSON object of the contract's field names, empty ones left out (NULL but for json
// hooks), created_at in unix ms; hook_attempts with the hook's account_id and at in unix ms, in the order
// they were recorded (rowid).
func TestDumpCarriesHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	acme := shopStore(t, db)
	_, stripePath := tidings.NewHookPath()
	stripe := &tidings.Hook{PathHash: stripePath, AccountID: acme, Project: "shop", Channel: "orders", Source: tidings.HookStripe,
		Name: "Stripe", Secret: "whsec_x", UserIDFrom: "customer"}
	_, jsonPath := tidings.NewHookPath()
	tmpl := &tidings.HookTemplate{Event: "{{.kind}}", Tags: `{"a":"{{.a}}"}`, Notify: "true"}
	js := &tidings.Hook{PathHash: jsonPath, AccountID: acme, Project: "shop", Channel: "orders", Source: tidings.HookJSON, Template: tmpl}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, err := range []error{
		db.CreateHook(ctx, stripe),
		db.CreateHook(ctx, js),
		db.RecordHookAttempt(ctx, acme, &tidings.HookAttempt{HookID: stripe.ID, DeliveryID: "evt_1", Status: 200, Events: 1, At: at}),
		db.RecordHookAttempt(ctx, acme, &tidings.HookAttempt{HookID: stripe.ID, DeliveryID: "evt_2", Status: 401, Error: "bad signature", At: at}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := db.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows := func(table string) []map[string]any {
		var out []map[string]any
		if err := d.Rows(ctx, table, func(cols []string, row []any) error {
			m := map[string]any{}
			for i, c := range cols {
				m[c] = row[i]
			}
			out = append(out, m)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	hooks := rows("hooks")
	if len(hooks) != 2 {
		t.Fatalf("hooks: %v", hooks)
	}
	s, j := hooks[0], hooks[1]
	if s["id"] != stripe.ID || !reflect.DeepEqual(s["path_hash"], stripePath) || s["account_id"] != acme || s["source"] != "stripe" ||
		s["name"] != "Stripe" || s["secret"] != "whsec_x" || s["user_id_from"] != "customer" || s["template"] != nil ||
		s["created_at"] != stripe.CreatedAt.UnixMilli() {
		t.Errorf("the stripe hook dumped as %v", s)
	}
	for _, c := range []string{"project_id", "channel_id", "rowid"} {
		if _, ok := s[c].(int64); !ok {
			t.Errorf("hooks.%s dumped as %#v", c, s[c])
		}
	}
	var fields map[string]string
	if text, ok := j["template"].(string); !ok || json.Unmarshal([]byte(text), &fields) != nil {
		t.Fatalf("the json hook's template dumped as %#v", j["template"])
	}
	if want := map[string]string{"event": "{{.kind}}", "tags": `{"a":"{{.a}}"}`, "notify": "true"}; !reflect.DeepEqual(fields, want) {
		t.Errorf("the json hook's template = %v, want %v", fields, want)
	}
	attempts := rows("hook_attempts")
	if len(attempts) != 2 {
		t.Fatalf("hook_attempts: %v", attempts)
	}
	for i, want := range []map[string]any{
		{"hook_id": stripe.ID, "account_id": acme, "delivery_id": "evt_1", "status": int64(200), "events": int64(1), "error": "", "at": at.UnixMilli()},
		{"hook_id": stripe.ID, "account_id": acme, "delivery_id": "evt_2", "status": int64(401), "events": int64(0), "error": "bad signature", "at": at.UnixMilli()},
	} {
		got := attempts[i]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("hook_attempts[%d].%s = %#v, want %#v", i, k, got[k], v)
			}
		}
	}
}

// A store made before migration 26 (down to 25 and up again): no hooks; what migration
// 26 added goes with its Down, and the tables work again after its Up.
func TestHooksMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	acme := shopStore(t, db)
	_, path := tidings.NewHookPath()
	h := &tidings.Hook{PathHash: path, AccountID: acme, Project: "shop", Channel: "orders", Source: tidings.HookGitHub}
	if err := db.CreateHook(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordHookAttempt(ctx, acme, &tidings.HookAttempt{HookID: h.ID, Status: 200, At: time.Now()}); err != nil {
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
	if _, err := p.DownTo(ctx, 25); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'hook%'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after the Down of migration 26: %d tables and indexes of hooks left, %v", left, err)
	}
	raw.Close()

	db, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustCheck(t, db)
	if hs, err := db.ListHooks(ctx, acme); err != nil || len(hs) != 0 {
		t.Fatalf("ListHooks after the migration = %v, %v", hs, err)
	}
	if err := db.CreateHook(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got, err := db.FindHookByPath(ctx, path); err != nil || got.ID != h.ID {
		t.Fatalf("FindHookByPath after the migration = %v, %v", got, err)
	}
	mustCheck(t, db)
}
