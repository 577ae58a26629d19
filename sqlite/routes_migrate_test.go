package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// A dump (migrate-store's source) carries members' routes and digests, projects'
// escalation and invitations' emails in the neutral shape: member_routes with
// channel_id NULL for a project's choice, push and email as 0 or 1; member_digests
// with last_period in unix ms (0: none claimed); projects.escalate_after in seconds.
func TestDumpCarriesRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, a := openShop(t)
	ada := &tidings.User{AccountID: a.ID, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	if err := db.CreateUser(ctx, ada); err != nil {
		t.Fatal(err)
	}
	orders, err := db.CreateChannel(ctx, a.ID, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		db.SetRoutes(ctx, a.ID, ada.ID, "shop", "", &tidings.Routes{Email: true}),
		db.SetRoutes(ctx, a.ID, ada.ID, "shop", "orders", &tidings.Routes{Push: true, Email: true}),
		db.SetDigest(ctx, a.ID, ada.ID, "shop", tidings.DigestWeekly),
		db.SetEscalation(ctx, a.ID, "shop", 10*time.Minute),
		db.CreateInvite(ctx, &tidings.Invite{Hash: tidings.HashSecret("s"), AccountID: a.ID, CreatedBy: ada.ID, Email: "new@example.com",
			CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	end := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	prefs, err := db.ListDigests(ctx)
	if err != nil || len(prefs) != 1 {
		t.Fatalf("ListDigests = %v, %v", prefs, err)
	}
	if ok, err := db.ClaimDigest(ctx, prefs[0], end, &tidings.Delivery{Kind: tidings.DeliverDigest, Target: tidings.MailTarget(ada.ID),
		Ref: "shop", Count: 168, NextAt: end}); !ok || err != nil {
		t.Fatalf("ClaimDigest = %v, %v", ok, err)
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
	routes := rows("member_routes")
	if len(routes) != 2 {
		t.Fatalf("member_routes: %v", routes)
	}
	for _, r := range routes {
		if r["account_id"] != a.ID || r["user_id"] != ada.ID {
			t.Errorf("a route dumped as %v", r)
		}
		switch r["channel_id"] {
		case nil:
			if r["push"] != int64(0) || r["email"] != int64(1) {
				t.Errorf("the project's route dumped as %v", r)
			}
		case orders.ID:
			if r["push"] != int64(1) || r["email"] != int64(1) {
				t.Errorf("the channel's route dumped as %v", r)
			}
		default:
			t.Errorf("a route of channel %v", r["channel_id"])
		}
	}
	digests := rows("member_digests")
	if len(digests) != 1 || digests[0]["every"] != "weekly" || digests[0]["last_period"] != end.UnixMilli() ||
		digests[0]["user_id"] != ada.ID || digests[0]["account_id"] != a.ID {
		t.Errorf("member_digests: %v", digests)
	}
	if p := rows("projects"); len(p) != 1 || p[0]["escalate_after"] != int64(600) {
		t.Errorf("projects: %v", p)
	}
	if i := rows("invites"); len(i) != 1 || i[0]["email"] != "new@example.com" {
		t.Errorf("invites: %v", i)
	}
}

// A store made before migration 25 (down to 24 and up again): no routes or digests,
// projects never escalate, invitations were mailed to nobody; and what migration 25
// added goes with its Down.
func TestRoutesMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	acme := shopStore(t, db)
	ada := &tidings.User{AccountID: acme, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	if err := db.CreateUser(ctx, ada); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		db.SetRoutes(ctx, acme, ada.ID, "shop", "orders", &tidings.Routes{Email: true}),
		db.SetDigest(ctx, acme, ada.ID, "shop", tidings.DigestDaily),
		db.SetEscalation(ctx, acme, "shop", time.Hour),
		db.CreateInvite(ctx, &tidings.Invite{Hash: tidings.HashSecret("s"), AccountID: acme, CreatedBy: ada.ID, Email: "new@example.com",
			CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}),
	} {
		if err != nil {
			t.Fatal(err)
		}
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
	if _, err := p.DownTo(ctx, 24); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'member_%'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after the Down of migration 25: %d tables and indexes of members' routes left, %v", left, err)
	}
	raw.Close()

	db, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustCheck(t, db)
	if r, err := db.AccountRoutes(ctx, acme); err != nil || len(r) != 0 {
		t.Fatalf("AccountRoutes after the migration = %v, %v", r, err)
	}
	if d, err := db.ListDigests(ctx); err != nil || len(d) != 0 {
		t.Fatalf("ListDigests after the migration = %v, %v", d, err)
	}
	if p, err := db.FindProject(ctx, acme, "shop"); err != nil || p.EscalateAfter != 0 {
		t.Fatalf("FindProject after the migration = %+v, %v", p, err)
	}
	if inv, err := db.ListInvites(ctx, acme, time.Now()); err != nil || len(inv) != 1 || inv[0].Email != "" {
		t.Fatalf("ListInvites after the migration = %+v, %v", inv, err)
	}
	// The tables work again.
	if err := db.SetRoutes(ctx, acme, ada.ID, "shop", "", &tidings.Routes{Push: true}); err != nil {
		t.Fatal(err)
	}
	if r, err := db.AccountRoutes(ctx, acme); err != nil || len(r) != 1 {
		t.Fatalf("AccountRoutes after setting one = %v, %v", r, err)
	}
}
