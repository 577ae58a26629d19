package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// checkedStore is a store of two accounts, each with a project of two channels, whose
// events carry string, number and boolean tags, users, and an insight each, and one
// urgent event with a key and a button, pressed and acknowledged.
func checkedStore(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
		for i := range 30 {
			e := &tidings.NewEvent{Project: "shop", Channel: []string{"orders", "deploys"}[i%2], Event: fmt.Sprintf("%s paid %d", name, i),
				Parser: tidings.ParserText, UserID: fmt.Sprintf("u-%d", i%4), Tags: tidings.Tags{
					{Key: "plan", Kind: tidings.KindString, Value: []string{"pro", "free"}[i%2]},
					{Key: "amount", Kind: tidings.KindNumber, Value: []string{"19.90", "1e3", "-7", "12345678901234567890"}[i%4]},
					{Key: "trial", Kind: tidings.KindBool, Value: []string{"true", "false"}[i%2]},
				}}
			if _, err := db.PublishEvent(ctx, a.ID, e); err != nil {
				t.Fatal(err)
			}
		}
		// An hour emptied by deleting its only event, and a channel with a pending
		// delivery deleted: what they leave must not be named.
		lone, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "lone",
			Parser: tidings.ParserText, Timestamp: time.Now().Add(-50 * time.Hour), UserID: "u-1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteEvent(ctx, a.ID, "shop", lone.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "gone", Event: "soon gone",
			Parser: tidings.ParserText, Notify: true, UserID: "u-2"}); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteChannel(ctx, a.ID, "shop", "gone"); err != nil {
			t.Fatal(err)
		}
		// An urgent keyed event with buttons, pressed and acknowledged: its jobs and
		// press are no damage.
		urgent, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "disk full",
			Parser: tidings.ParserText, Notify: true, Priority: "urgent", ThreadKey: "disk", URL: "https://x.example/d",
			Actions: []tidings.Action{{Label: "Approve", ID: "approve"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.PressAction(ctx, &tidings.ActionPress{AccountID: a.ID, EventID: urgent.ID, ActionID: "approve", By: "ada", Via: "API"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AcknowledgeEvent(ctx, a.ID, urgent.ID, "ada", time.Now()); err != nil {
			t.Fatal(err)
		}
		// A member's routes (the project's and a channel's) and digest.
		ada := &tidings.User{AccountID: a.ID, Email: "ada@" + name + ".example", PasswordHash: "x", Role: tidings.UserMember}
		if err := db.CreateUser(ctx, ada); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRoutes(ctx, a.ID, ada.ID, "shop", "", &tidings.Routes{Email: true}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRoutes(ctx, a.ID, ada.ID, "shop", "orders", &tidings.Routes{Push: true, Email: true}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetDigest(ctx, a.ID, ada.ID, "shop", tidings.DigestWeekly); err != nil {
			t.Fatal(err)
		}
		// An inbound hook with a delivery in its log.
		_, path := tidings.NewHookPath()
		hook := &tidings.Hook{PathHash: path, AccountID: a.ID, Project: "shop", Channel: "orders", Source: tidings.HookGitHub}
		if err := db.CreateHook(ctx, hook); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordHookAttempt(ctx, a.ID, &tidings.HookAttempt{HookID: hook.ID, DeliveryID: "d-1", Status: 200, Events: 1,
			At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "shop", Title: "Signups", Value: "3",
			ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Group(ctx, a.ID, &tidings.GroupChange{Project: "shop", GroupID: "team", UserID: "u-1"}); err != nil {
			t.Fatal(err)
		}
		// Page views of the event's users and of one seen only by views, with and
		// without referrers (entries from outside, views from inside).
		views := &tidings.NewPageViews{Project: "shop", Host: "shop.example"}
		for i := range 14 {
			views.Views = append(views.Views, tidings.PageView{UserID: []string{"u-0", "u-1", "u-2", "u-3", "v-only"}[i%5],
				Path: fmt.Sprintf("/p%d?utm_source=x", i%3), Title: "Page", Timestamp: time.Now().Add(-time.Duration(i) * 7 * time.Hour),
				Referrer: []string{"", "https://www.google.com/search?q=1", "https://shop.example/a", "/inside"}[i%4]})
		}
		var p tidings.Problems
		if views.Check(&p, time.Now(), true); p.Err() != nil {
			t.Fatal(p.Err())
		}
		if err := db.AddPageViews(ctx, a.ID, views); err != nil {
			t.Fatal(err)
		}
	}
	db.waitIndexed(ctx) // the damage below is done to an index that holds every event
	return db
}

// TestCheckFindsDamage damages each derived structure of a consistent store behind the
// store's back, one way at a time, and expects the check to name it: the counts and
// sums that let the check skip reading row by row must not hide a wrong row.
func TestCheckFindsDamage(t *testing.T) {
	t.Parallel()
	ok := checkedStore(t)
	r, err := ok.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Events != 62 {
		t.Fatalf("a consistent store of 62 events: %d events, %v (+%d)", r.Events, r.Problems, r.Omitted)
	}
	// An event's full-text text and tag tokens, in SQL (search.go, feed_plan.go).
	const ftsText = `e.event || ' ' || e.description || ' ' || (SELECT group_concat(value, ' ') FROM json_each(e.tags))`
	const ftsTags = `(SELECT group_concat(' _t' || tag_id, '') FROM event_tags t WHERE t.seq = e.seq)`
	const otherProjectsTag = `(SELECT g.id FROM tags g WHERE g.project_id != (SELECT project_id FROM events WHERE seq = 5) AND g.key = 'plan' AND g.value = 'pro')`
	for _, c := range []struct {
		name, kind string
		damage     []string
	}{
		{"a tag row gone", "tag_index.missing", []string{`DELETE FROM event_tags WHERE seq = 7 AND tag_id IN (SELECT id FROM tags WHERE key = 'plan')`}},
		{"a number's tag row gone", "tag_index.missing", []string{`DELETE FROM event_tags WHERE seq = 8 AND tag_id IN (SELECT id FROM tags WHERE key = 'amount')`}},
		{"a boolean's tag row gone", "tag_index.missing", []string{`DELETE FROM event_tags WHERE seq = 9 AND tag_id IN (SELECT id FROM tags WHERE key = 'trial')`}},
		{"a tag row of another channel", "tag_index.row", []string{`UPDATE event_tags SET channel_id = channel_id + 100 WHERE seq = 7 AND tag_id IN (SELECT id FROM tags WHERE key = 'plan')`}},
		{"a tag row of another time", "tag_index.row", []string{`UPDATE event_tags SET ts = ts + 1 WHERE seq = 7 AND tag_id IN (SELECT id FROM tags WHERE key = 'plan')`}},
		{"a tag row of no event", "tag_index.orphan", []string{`INSERT INTO event_tags (tag_id, ts, seq, channel_id) SELECT tag_id, ts, 100000, channel_id FROM event_tags LIMIT 1`}},
		{"a tag row of another project's event", "tag_index.tenant", []string{
			`INSERT INTO event_tags (tag_id, ts, seq, channel_id) SELECT ` + otherProjectsTag + `, ts, seq, channel_id FROM events WHERE seq = 5`}},
		{"a project's tag on another project's event, its own row gone", "tag_index.tenant", []string{
			`UPDATE event_tags SET tag_id = ` + otherProjectsTag + ` WHERE seq = 5 AND tag_id IN (SELECT id FROM tags WHERE key = 'plan')`}},
		{"a tag row naming another value", "tag_index.tag", []string{
			`UPDATE event_tags SET tag_id = (SELECT id FROM tags WHERE key = 'plan' AND value = 'free' AND project_id = (SELECT project_id FROM events WHERE seq = 1))
				WHERE seq = 1 AND tag_id = (SELECT id FROM tags WHERE key = 'plan' AND value = 'pro' AND project_id = (SELECT project_id FROM events WHERE seq = 1))`}},
		{"a tag's count", "tag_count", []string{`UPDATE tags SET count = count + 1 WHERE key = 'trial' AND value = 'true'`}},
		{"a full-text row gone", "search.missing", []string{`DELETE FROM events_fts WHERE rowid = 11`}},
		{"a full-text row of no event", "search.orphan", []string{`INSERT INTO events_fts (rowid, text, scope) VALUES (100000, 'ghost', '_p1 _c1')`}},
		{"a full-text row in another project's scope", "search.scope", []string{`DELETE FROM events_fts WHERE rowid = 12`,
			`INSERT INTO events_fts (rowid, text, scope) SELECT 12, 'paid', '_p' || (SELECT max(id) FROM projects)
				|| ' _c' || channel_id FROM events WHERE seq = 12`}},
		{"a full-text row without its project's scope", "search.scope", []string{`DELETE FROM events_fts WHERE rowid = 13`,
			`INSERT INTO events_fts (rowid, text, scope) SELECT 13, 'paid', '_c' || channel_id FROM events WHERE seq = 13`}},
		// What a full-text row holds: its channel's and tags' tokens, and its words. Each
		// row is the event's own but for the part named.
		{"a full-text row with another channel's scope", "search.channel", []string{`DELETE FROM events_fts WHERE rowid = 14`,
			`INSERT INTO events_fts (rowid, text, scope) SELECT 14, ` + ftsText + `, '_p' || project_id
				|| ' _c' || (SELECT min(id) FROM channels c WHERE c.project_id = e.project_id AND c.id != e.channel_id) || ` + ftsTags + ` FROM events e WHERE seq = 14`}},
		{"a full-text row with a wrong tag scope", "search.tag", []string{`DELETE FROM events_fts WHERE rowid = 15`,
			`INSERT INTO events_fts (rowid, text, scope) SELECT 15, ` + ftsText + `, '_p' || project_id || ' _c' || channel_id
				|| replace(` + ftsTags + ` || ' ', ' _t' || (SELECT id FROM tags WHERE project_id = e.project_id AND key = 'plan' AND value = 'pro') || ' ',
				' _t' || (SELECT id FROM tags WHERE project_id = e.project_id AND key = 'plan' AND value = 'free') || ' ') FROM events e WHERE seq = 15`}},
		{"a full-text row with wrong text", "search.text", []string{`DELETE FROM events_fts WHERE rowid = 16`,
			`INSERT INTO events_fts (rowid, text, scope) SELECT 16, 'rich', '_p' || project_id || ' _c' || channel_id || ` + ftsTags + ` FROM events e WHERE seq = 16`}},
		{"the indexer's watermark past the last event", "search.watermark", []string{`UPDATE search_indexed SET seq = seq + 1000`}},
		{"full-text rows above the indexer's watermark", "search.ahead", []string{`UPDATE search_indexed SET seq = seq - 5`}},
		{"an hour's count", "hour_count", []string{`UPDATE event_counts SET n = n + 1 WHERE (channel_id, hour) = (SELECT channel_id, hour FROM event_counts LIMIT 1)`}},
		{"an hour's count moved", "hour_count", []string{`UPDATE event_counts SET hour = hour + 3600000 WHERE channel_id = (SELECT min(channel_id) FROM event_counts)`}},
		{"an hour's count gone", "hour_count", []string{`DELETE FROM event_counts WHERE channel_id = (SELECT max(channel_id) FROM event_counts)`}},
		{"an hour's count of 0", "hour_count.zero", []string{`INSERT INTO event_counts (channel_id, hour, n) SELECT min(id), 3600000, 0 FROM channels`}},
		{"an outbox row of no event", "outbox.event", []string{`INSERT INTO deliveries (kind, account_id, event_id, target, message_id, next_at, created_at)
			SELECT 'webhook', id, '0190a000-0000-7000-8000-000000000000', 'wh', 'msg', 0, 0 FROM accounts LIMIT 1`}},
		{"an acknowledgement's job of no event", "outbox.event", []string{`INSERT INTO deliveries (kind, account_id, event_id, target, message_id, next_at, created_at)
			SELECT 'ack', id, '0190a000-0000-7000-8000-000000000001', '', 'ack-x', 0, 0 FROM accounts LIMIT 1`}},
		{"a mail job of no event", "outbox.event", []string{`INSERT INTO deliveries (kind, account_id, event_id, target, message_id, next_at, created_at)
			SELECT 'mail', id, '0190a000-0000-7000-8000-000000000002', 'mail:1', '<m.x@tidings.invalid>', 0, 0 FROM accounts LIMIT 1`}},
		{"an escalation of no event", "outbox.event", []string{`INSERT INTO deliveries (kind, account_id, event_id, target, message_id, next_at, created_at)
			SELECT 'escalate', id, '0190a000-0000-7000-8000-000000000003', '', '', 0, 0 FROM accounts LIMIT 1`}},
		{"a press of another account", "press.tenant", []string{`UPDATE event_presses SET account_id = (SELECT a.id FROM accounts a WHERE a.id != event_presses.account_id LIMIT 1)`}},
		{"a route of another account's member", "route.tenant", []string{`UPDATE member_routes SET user_id = (SELECT u.id FROM users u
			WHERE u.account_id != member_routes.account_id LIMIT 1) WHERE channel_id IS NULL`}},
		{"a route on another account's project", "route.tenant", []string{`UPDATE member_routes SET project_id = (SELECT p.id FROM projects p
			WHERE p.account_id != member_routes.account_id LIMIT 1), channel_id = NULL WHERE channel_id IS NOT NULL`}},
		{"a route on another project's channel", "route.tenant", []string{`UPDATE member_routes SET channel_id = (SELECT c.id FROM channels c
			WHERE c.project_id != member_routes.project_id LIMIT 1) WHERE channel_id IS NOT NULL`}},
		{"a route under another account", "route.tenant", []string{`UPDATE member_routes SET account_id = (SELECT a.id FROM accounts a
			WHERE a.id != member_routes.account_id LIMIT 1) WHERE channel_id IS NULL`}},
		{"a digest of another account's member", "digest.tenant", []string{`UPDATE member_digests SET user_id = (SELECT u.id FROM users u
			WHERE u.account_id != member_digests.account_id LIMIT 1)`}},
		{"a digest of another account's project", "digest.tenant", []string{`UPDATE member_digests SET project_id = (SELECT p.id FROM projects p
			WHERE p.account_id != member_digests.account_id LIMIT 1)`}},
		{"a hook on another account's project", "hook.tenant", []string{`UPDATE hooks SET project_id = (SELECT p.id FROM projects p
			WHERE p.account_id != hooks.account_id LIMIT 1), channel_id = (SELECT c.id FROM channels c JOIN projects p ON p.id = c.project_id
			WHERE p.account_id != hooks.account_id LIMIT 1)`}},
		{"a hook on another project's channel", "hook.tenant", []string{`UPDATE hooks SET channel_id = (SELECT c.id FROM channels c
			WHERE c.project_id != hooks.project_id LIMIT 1)`}},
		{"a hook under another account", "hook.tenant", []string{`UPDATE hooks SET account_id = (SELECT a.id FROM accounts a
			WHERE a.id != hooks.account_id LIMIT 1)`}},
		{"a hook's delivery under another account", "hook.tenant", []string{`UPDATE hook_attempts SET account_id = (SELECT a.id FROM accounts a
			WHERE a.id != hook_attempts.account_id LIMIT 1)`}},
		{"a group membership across accounts", "groups.tenant", []string{`INSERT INTO group_members (group_ref, person_ref)
			SELECT g.id, p.id FROM groups g JOIN projects gp ON gp.id = g.project_id, people p JOIN projects pp ON pp.id = p.project_id
			WHERE gp.account_id != pp.account_id LIMIT 1`}},
		{"a user's count", "user_count", []string{`UPDATE people SET events = events + 1 WHERE user_id = 'u-1'`}},
		{"a user's first seen", "user_seen", []string{`UPDATE people SET first_seen = last_seen + 1 WHERE user_id = 'u-2'`}},
		{"a user without a row", "user_count", []string{`DELETE FROM people WHERE user_id = 'u-3'`}},
		{"a user's sessions", "person.sessions", []string{`UPDATE people SET sessions = sessions + 1 WHERE user_id = 'u-1'`}},
		{"a user's page views", "person.page_views", []string{`UPDATE people SET page_views = page_views + 1 WHERE user_id = 'u-1'`}},
		{"a page view of another project's user", "person.page_views", []string{`UPDATE page_views SET person_ref =
			(SELECT id FROM people WHERE project_id != (SELECT project_id FROM page_views WHERE id = 1) LIMIT 1) WHERE id = 1`}},
		{"a user first seen after its first view", "user_seen", []string{`UPDATE people SET first_seen = last_seen WHERE user_id = 'v-only'`}},
		{"a page view's path of another project", "page_view.text", []string{`UPDATE page_views SET path =
			(SELECT id FROM page_texts WHERE project_id != (SELECT project_id FROM page_views WHERE id = 1) LIMIT 1) WHERE id = 1`}},
		{"a minute's views", "user_minute", []string{`UPDATE user_minutes SET views = views + 1
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes WHERE views > 0 LIMIT 1)`}},
		{"a minute's events", "user_minute", []string{`UPDATE user_minutes SET events = events + 1
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes WHERE events > 0 LIMIT 1)`}},
		{"a minute without activity", "user_minute", []string{`INSERT INTO user_minutes (person_ref, minute, events, views) SELECT id, 1, 0, 1 FROM people LIMIT 1`}},
		{"a minute gone", "user_minute.missing", []string{`DELETE FROM user_minutes
			WHERE (person_ref, minute) = (SELECT person_ref, minute FROM user_minutes WHERE views > 0 LIMIT 1)`}},
		{"a minute's row of 0", "user_minute.zero", []string{`INSERT INTO user_minutes (person_ref, minute, events, views) SELECT id, 1, 0, 0 FROM people LIMIT 1`}},
		{"a day's users", "page_day", []string{`UPDATE page_days SET users = users + 1 WHERE (project_id, day) = (SELECT project_id, day FROM page_days LIMIT 1)`}},
		{"a day's entries", "page_day", []string{`UPDATE page_days SET entries = entries - 1 WHERE (project_id, day) = (SELECT project_id, day FROM page_days WHERE entries > 0 LIMIT 1)`}},
		{"a day gone", "page_day", []string{`DELETE FROM page_days WHERE (project_id, day) = (SELECT project_id, day FROM page_days LIMIT 1)`}},
		{"a user's day gone", "page_user_day", []string{`DELETE FROM page_user_days
			WHERE (project_id, day, person_ref) = (SELECT project_id, day, person_ref FROM page_user_days LIMIT 1)`}},
		{"a user's day of another count", "page_user_day", []string{`UPDATE page_user_days SET views = views + 1
			WHERE (project_id, day, person_ref) = (SELECT project_id, day, person_ref FROM page_user_days LIMIT 1)`}},
		{"a path's entries", "page_path_day", []string{`UPDATE page_path_days SET entries = entries + 1
			WHERE (project_id, day, path) = (SELECT project_id, day, path FROM page_path_days LIMIT 1)`}},
		{"a path's day gone", "page_path_day", []string{`DELETE FROM page_path_days
			WHERE (project_id, day, path) = (SELECT project_id, day, path FROM page_path_days LIMIT 1)`}},
		{"a path's month's views", "page_path_month", []string{`UPDATE page_path_months SET views = views + 1
			WHERE (project_id, month, path) = (SELECT project_id, month, path FROM page_path_months LIMIT 1)`}},
		{"a path's month gone", "page_path_month", []string{`DELETE FROM page_path_months
			WHERE (project_id, month, path) = (SELECT project_id, month, path FROM page_path_months LIMIT 1)`}},
		{"a path's month moved a day", "page_path_month", []string{`UPDATE page_path_months SET month = month + 1
			WHERE (project_id, month, path) = (SELECT project_id, month, path FROM page_path_months LIMIT 1)`}},
		{"a referrer's entries", "page_referrer_day", []string{`UPDATE page_referrer_days SET entries = entries + 1
			WHERE (project_id, day, host) = (SELECT project_id, day, host FROM page_referrer_days LIMIT 1)`}},
		{"a referrer's day gone", "page_referrer_day", []string{`DELETE FROM page_referrer_days
			WHERE (project_id, day, host) = (SELECT project_id, day, host FROM page_referrer_days LIMIT 1)`}},
		{"a referrer's day of another host", "page_referrer_day", []string{`UPDATE page_referrer_days SET host = path
			FROM (SELECT path FROM page_views LIMIT 1) WHERE (project_id, day, host) = (SELECT project_id, day, host FROM page_referrer_days LIMIT 1)`}},
		{"a user's views of a path", "page_person_path", []string{`UPDATE page_person_paths SET views = views + 1
			WHERE (person_ref, path) = (SELECT person_ref, path FROM page_person_paths LIMIT 1)`}},
		{"a user's path gone", "page_person_path", []string{`DELETE FROM page_person_paths
			WHERE (person_ref, path) = (SELECT person_ref, path FROM page_person_paths LIMIT 1)`}},
		{"an event on another project's channel", "event.channel", []string{
			`UPDATE events SET channel_id = (SELECT max(id) FROM channels) WHERE seq = 2`}},
		{"an event seq given twice", "event.seq", []string{`UPDATE event_seq SET last = 3`}},
		{"an insight's history", "insight_history", []string{`UPDATE insights SET value = '999' WHERE id = 1`}},
		{"a key's claim committed without its answer", "idempotency.answer", []string{
			`INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at) SELECT id, 'k', 'f', 200, x'', 0 FROM accounts LIMIT 1`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := checkedStore(t)
			// The indexer would mend damage to its watermark or rows by indexing
			// again, when a publish's wake-up is still pending: stop it first.
			db.stopIndexer()
			for _, q := range c.damage {
				if res, err := db.write.ExecContext(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				} else if n, _ := res.RowsAffected(); n == 0 && !strings.HasPrefix(q, "INSERT INTO events_fts") {
					t.Fatalf("%s changed nothing", q)
				}
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
