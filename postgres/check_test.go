package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
)

// checkedStore is a store of two accounts, each with a project of two channels, whose
// events carry string, number and boolean tags, users, a group, an insight, and text
// that SQL folds (ASCII with punctuation) and that only Go folds (accents, an escaped
// control character). A tag, an hour and a channel emptied by deletions are in it
// too: what they leave must not be named. It returns the store and a connection to
// its schema, to damage it behind the store's back.
func checkedStore(t *testing.T) (*postgres.DB, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.URL(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// Tags of 5 events or more keep hourly counts: every plan, amount and trial of
	// the 30 events below, none of the deleted ones.
	postgres.SetTagRollup(db, 5)
	for _, name := range []string{"acme", "umbrella"} {
		a, err := db.CreateAccount(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateProject(ctx, a.ID, "shop"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"orders", "deploys", "gone"} {
			if _, err := db.CreateChannel(ctx, a.ID, "shop", c); err != nil {
				t.Fatal(err)
			}
		}
		publish := func(e *tidings.NewEvent) *tidings.Event {
			t.Helper()
			ev, err := db.PublishEvent(ctx, a.ID, e)
			if err != nil {
				t.Fatal(err)
			}
			return ev
		}
		for i := range 30 {
			e := &tidings.NewEvent{Project: "shop", Channel: []string{"orders", "deploys"}[i%2],
				Event: fmt.Sprintf("%s paid #%d: EUR 19.90 (A.B.)", name, i), Description: []string{"", "Café déjà vu", "tab\there"}[i%3],
				Parser: tidings.ParserText, UserID: fmt.Sprintf("u-%d", i%4), Notify: i%5 == 0, Tags: tidings.Tags{
					{Key: "plan", Kind: tidings.KindString, Value: []string{"pro", `say "hi", free`, "naïve", "a\x01b"}[i%4]},
					{Key: "amount", Kind: tidings.KindNumber, Value: []string{"19.90", "1e3", "-7", "12345678901234567890"}[i%4]},
					{Key: "trial", Kind: tidings.KindBool, Value: []string{"true", "false"}[i%2]},
				}}
			if i < 3 { // versions of a key, urgent and with a button, pressed
				e.Priority, e.ThreadKey, e.Actions = "urgent", "deploy-7", []tidings.Action{{Label: "Approve", ID: "approve"}}
			}
			ev := publish(e)
			if i < 3 {
				if _, err := db.PressAction(ctx, &tidings.ActionPress{AccountID: a.ID, EventID: ev.ID, ActionID: "approve", By: "ada@x.io"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Emptied: a tag value and an hour by deleting their only event, a channel by
		// deleting it.
		lone := publish(&tidings.NewEvent{Project: "shop", Channel: "orders", Event: "lone", Parser: tidings.ParserText,
			Timestamp: time.Now().Add(-50 * time.Hour), Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "lone"}}})
		if err := db.DeleteEvent(ctx, a.ID, "shop", lone.ID); err != nil {
			t.Fatal(err)
		}
		publish(&tidings.NewEvent{Project: "shop", Channel: "gone", Event: "soon gone", Parser: tidings.ParserText, Notify: true,
			UserID: "u-1", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "gone"}}})
		if err := db.DeleteChannel(ctx, a.ID, "shop", "gone"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "shop", Title: "Signups", Value: "3",
			ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Group(ctx, a.ID, &tidings.GroupChange{Project: "shop", GroupID: "team", UserID: "u-1"}); err != nil {
			t.Fatal(err)
		}
		// A member's routes (the project's and a channel's) and digest.
		member := &tidings.User{AccountID: a.ID, Email: "ada@" + name + ".example", PasswordHash: "$argon2id$x", Role: tidings.UserOwner}
		if err := db.CreateUser(ctx, member); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRoutes(ctx, a.ID, member.ID, "shop", "", &tidings.Routes{Email: true}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRoutes(ctx, a.ID, member.ID, "shop", "orders", &tidings.Routes{Push: true, Email: true}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetDigest(ctx, a.ID, member.ID, "shop", tidings.DigestWeekly); err != nil {
			t.Fatal(err)
		}
		// An inbound hook of the orders channel, with a delivery in its log.
		_, path := tidings.NewHookPath()
		hook := &tidings.Hook{PathHash: path, AccountID: a.ID, Project: "shop", Channel: "orders", Source: tidings.HookGitHub, Secret: "s"}
		if err := db.CreateHook(ctx, hook); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordHookAttempt(ctx, a.ID, &tidings.HookAttempt{HookID: hook.ID, DeliveryID: "d-1", Status: 200, Events: 1,
			At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		// Page views: of a user with events and of a visitor, entries from another site
		// and none, on two days, and one deleted by the retention purge below.
		day := time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)
		views := &tidings.NewPageViews{Project: "shop", Host: "shop.example", Views: []tidings.PageView{
			{UserID: "u-1", Path: "/pricing?utm_source=mail", Title: "Pricing", Timestamp: day.Add(time.Hour)},
			{UserID: "u-1", Path: "/signup", Referrer: "https://shop.example/pricing", Timestamp: day.Add(time.Hour + time.Minute)},
			{UserID: "visitor", Path: "/", Referrer: "https://www.news.example/item", Timestamp: day.Add(25 * time.Hour)},
			{UserID: "visitor", Path: "/pricing?utm_source=mail", Timestamp: day.Add(25*time.Hour + 40*time.Minute)},
			{UserID: "visitor", Path: "/old", Referrer: "https://old.example/", Timestamp: day.Add(-400 * 24 * time.Hour)},
		}}
		var p tidings.Problems
		views.Check(&p, time.Now(), true)
		if err := p.Err(); err != nil {
			t.Fatal(err)
		}
		if err := db.AddPageViews(ctx, a.ID, views); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRetention(ctx, a.ID, "shop", 365); err != nil {
			t.Fatal(err)
		}
		if n, err := db.PurgeExpired(ctx, time.Now(), 100); err != nil || n == 0 {
			t.Fatalf("purged %d: %v", n, err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return db, conn
}

// TestCheckFindsDamage damages each derived structure of a consistent store behind the
// store's back, one way at a time, and expects the check to name it.
func TestCheckFindsDamage(t *testing.T) {
	t.Parallel()
	ok, _ := checkedStore(t)
	r, err := ok.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Events != 60 {
		t.Fatalf("a consistent store of 60 events: %d events, %v (+%d)", r.Events, r.Problems, r.Omitted)
	}
	for _, c := range []struct {
		name, kind string
		damage     string
	}{
		{"a search vector of other text", "search.text", `UPDATE events SET search = to_tsvector('simple', 'ghost')
			WHERE id = (SELECT min(id) FROM events WHERE description = '')`},
		{"a search vector of other text, its event's not ASCII", "search.text", `UPDATE events SET search = to_tsvector('simple', 'cafe deja vu')
			WHERE id = (SELECT min(id) FROM events WHERE description <> '' AND description <> E'tab\there')`},
		{"a search vector missing a word", "search.text", `UPDATE events SET search = to_tsvector('simple', replace(event, 'paid', ''))
			WHERE id = (SELECT max(id) FROM events)`},
		{"an outbox row of a missing event", "outbox.event", `INSERT INTO deliveries (kind, account_id, event_id, target, message_id, next_at, created_at)
			SELECT 'webhook', id, '0190a000-0000-7000-8000-000000000000', 'wh', 'msg', 0, 0 FROM accounts LIMIT 1`},
		{"a repeat of a missing event", "outbox.event", `INSERT INTO deliveries (kind, account_id, event_id, message_id, next_at, created_at)
			SELECT 'repeat', id, '0190a000-0000-7000-8000-000000000000', 'repeat-x-1', 0, 0 FROM accounts LIMIT 1`},
		{"a press of another account", "press.tenant", `UPDATE event_presses SET account_id = (SELECT max(id) FROM accounts)
			WHERE seq = (SELECT min(seq) FROM event_presses)`},
		{"a route of another account's member", "route.tenant", `UPDATE member_routes r SET user_id = u.id
			FROM users u WHERE u.account_id <> r.account_id AND r.channel_id IS NULL AND r.account_id = (SELECT min(id) FROM accounts)`},
		{"a route of another account's project", "route.tenant", `UPDATE member_routes r SET project_id = p.id
			FROM projects p WHERE p.account_id <> r.account_id AND r.channel_id IS NULL AND r.account_id = (SELECT min(id) FROM accounts)`},
		{"a route's channel of another project", "route.tenant", `UPDATE member_routes r SET channel_id = c.id
			FROM channels c WHERE c.project_id <> r.project_id AND c.name = 'orders' AND r.channel_id IS NOT NULL
			  AND r.account_id = (SELECT min(id) FROM accounts)`},
		{"a digest of another account's member", "digest.tenant", `UPDATE member_digests d SET user_id = u.id
			FROM users u WHERE u.account_id <> d.account_id AND d.account_id = (SELECT min(id) FROM accounts)`},
		{"a digest of another account's project", "digest.tenant", `UPDATE member_digests d SET project_id = p.id
			FROM projects p WHERE p.account_id <> d.account_id AND d.account_id = (SELECT min(id) FROM accounts)`},
		{"a hook of another account's project", "hook.tenant", `UPDATE hooks h SET project_id = p.id
			FROM projects p WHERE p.account_id <> h.account_id AND h.account_id = (SELECT min(id) FROM accounts)`},
		{"a hook's channel of another project", "hook.tenant", `UPDATE hooks h SET channel_id = c.id
			FROM channels c WHERE c.project_id <> h.project_id AND c.name = 'orders' AND h.account_id = (SELECT min(id) FROM accounts)`},
		{"a hook's delivery of another account", "hook.tenant", `UPDATE hook_attempts a SET account_id = x.id
			FROM accounts x WHERE x.id <> a.account_id AND a.id = (SELECT min(id) FROM hook_attempts)`},
		{"a group member of another project", "groups.tenant", `INSERT INTO group_members (group_ref, person_ref)
			SELECT g.id, p.id FROM groups g, people p WHERE g.project_id <> p.project_id LIMIT 1`},
		{"an hourly tag count one too many", "tag_hour", `UPDATE tag_hours SET n = n + 1
			WHERE (project_id, key, value, hour) = (SELECT project_id, key, value, hour FROM tag_hours ORDER BY n DESC LIMIT 1)`},
		{"an hourly tag count missing", "tag_hour", `DELETE FROM tag_hours
			WHERE (project_id, key, value, hour) = (SELECT project_id, key, value, hour FROM tag_hours LIMIT 1)`},
		{"an hourly tag count of an hour without its events", "tag_hour", `INSERT INTO tag_hours (project_id, key, value, hour, n)
			SELECT project_id, key, value, 3600000, 2 FROM tag_counts WHERE rolled LIMIT 1`},
		{"an hourly count of a tag not rolled", "tag_hour.unrolled", `INSERT INTO tag_hours (project_id, key, value, hour, n)
			SELECT id, 'plan', 'ghost', 3600000, 1 FROM projects LIMIT 1`},
		{"a common tag not rolled", "tag_hour.rolled", `UPDATE tag_counts SET rolled = false
			WHERE (project_id, key, value) = (SELECT project_id, key, value FROM tag_counts WHERE rolled LIMIT 1)`},
		{"a tag count with no events", "tag_count.zero", `INSERT INTO tag_counts (project_id, key, value, n)
			SELECT id, 'plan', 'ghost', 0 FROM projects LIMIT 1`},
		{"a user's page views one too many", "person.page_views", `UPDATE people SET page_views = page_views + 1
			WHERE id = (SELECT min(id) FROM people)`},
		{"a minute's views one too many", "user_minute", `UPDATE user_minutes SET views = views + 1
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes WHERE views > 0 LIMIT 1)`},
		{"a minute's events one too many", "user_minute", `UPDATE user_minutes SET events = events + 1
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes LIMIT 1)`},
		{"a minute of no activity", "user_minute", `INSERT INTO user_minutes (person_ref, minute, events, views)
			SELECT id, 60000, 1, 0 FROM people LIMIT 1`},
		{"a minute missing", "user_minute.missing", `DELETE FROM user_minutes
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes WHERE events = 0 LIMIT 1)`},
		{"a minute of nothing kept", "user_minute.zero", `UPDATE user_minutes SET events = 0, views = 0
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes LIMIT 1)`},
		{"a day's users one too many", "page_day", `UPDATE page_days SET users = users + 1
			WHERE (project_id, day) = (SELECT project_id, day FROM page_days LIMIT 1)`},
		{"a day's views missing", "page_day", `DELETE FROM page_days
			WHERE (project_id, day) = (SELECT project_id, day FROM page_days LIMIT 1)`},
		{"a day of a user missing", "page_user_day", `DELETE FROM page_user_days
			WHERE (project_id, day, person_ref) = (SELECT project_id, day, person_ref FROM page_user_days LIMIT 1)`},
		{"a path's entries one too many", "page_path_day", `UPDATE page_path_days SET entries = entries + 1
			WHERE (project_id, day, path) = (SELECT project_id, day, path FROM page_path_days LIMIT 1)`},
		{"a path's day of no views", "page_path_day", `INSERT INTO page_path_days (project_id, day, path, views, entries)
			SELECT project_id, 0, path, 0, 0 FROM page_path_days LIMIT 1`},
		{"a referrer's entries one too many", "page_referrer_day", `UPDATE page_referrer_days SET entries = entries + 1
			WHERE (project_id, day, host) = (SELECT project_id, day, host FROM page_referrer_days LIMIT 1)`},
		{"a referrer's entries missing", "page_referrer_day", `DELETE FROM page_referrer_days
			WHERE (project_id, day, host) = (SELECT project_id, day, host FROM page_referrer_days LIMIT 1)`},
		{"a user first seen after a page view", "user_seen", `UPDATE people SET first_seen = last_seen
			WHERE user_id = 'visitor'`},
		{"a page view of a user of another project", "person.page_views", `UPDATE page_views SET person_ref = (SELECT max(id) FROM people)
			WHERE id = (SELECT min(id) FROM page_views)`},
		{"a page view's path of another project", "page_view.text", `UPDATE page_views SET path = (SELECT max(id) FROM page_texts)
			WHERE id = (SELECT min(id) FROM page_views)`},
		{"a user's sessions one too many", "person.sessions", `UPDATE people SET sessions = sessions + 1 WHERE user_id = 'visitor'`},
		{"a path's month one view too many", "page_path_month", `UPDATE page_path_months SET views = views + 1
			WHERE (project_id, month, path) = (SELECT project_id, month, path FROM page_path_months LIMIT 1)`},
		{"a path's month missing", "page_path_month", `DELETE FROM page_path_months
			WHERE (project_id, month, path) = (SELECT project_id, month, path FROM page_path_months LIMIT 1)`},
		{"a user's path views one too few", "page_person_path", `UPDATE page_person_paths SET views = views - 1
			WHERE (person_ref, path) = (SELECT person_ref, path FROM page_person_paths LIMIT 1)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db, conn := checkedStore(t)
			if tag, err := conn.Exec(t.Context(), c.damage); err != nil {
				t.Fatalf("%s: %v", c.damage, err)
			} else if tag.RowsAffected() == 0 {
				t.Fatalf("%s changed nothing", c.damage)
			}
			r, err := db.Check(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			found := false
			for _, p := range r.Problems {
				kinds = append(kinds, p.String())
				found = found || p.Kind == c.kind
			}
			if !found {
				t.Fatalf("check after %q: want a %s, found %d: %s", c.damage, c.kind, len(r.Problems), strings.Join(kinds, "; "))
			}
		})
	}
}

// TestCheckFullComparesEveryVector: past its budget the search.text check compares a
// sample of the events (a budget of 0 samples none, so the damage goes unseen), and
// FullCheck (tidings check --full) compares every one, whatever the budget.
func TestCheckFullComparesEveryVector(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, conn := checkedStore(t)
	if _, err := conn.Exec(ctx, `UPDATE events SET search = to_tsvector('simple', 'ghost') WHERE id = (SELECT min(id) FROM events); ANALYZE events`); err != nil {
		t.Fatal(err)
	}
	textProblems := func(db *postgres.DB) int {
		t.Helper()
		postgres.SetTextBudget(db, 0)
		r, err := db.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range r.Problems {
			if p.Kind == "search.text" {
				n++
			}
		}
		return n
	}
	if n := textProblems(db); n != 0 {
		t.Fatalf("a sample of no event named %d search.text problems", n)
	}
	full, err := postgres.OpenReadOnly(ctx, conn.Config().ConnString(), postgres.Options{FullCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if n := textProblems(full); n != 1 {
		t.Fatalf("FullCheck named %d search.text problems, want the one damaged vector", n)
	}
}
