package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// checkParts is how many connections the tag index's two passes use each; the other
// checks run checkWorkers at a time beside them. All come from the read pool (8).
const (
	checkParts   = 2
	checkWorkers = 2
)

// Check verifies every derived structure against the events. Every check reads the same
// snapshot of the WAL, so that what one pass adds up can be compared with another's:
// no commit lands while the connections begin (the write lock is held for that
// moment, as a commit of the group committer holds it; a read-only store, which cannot
// take it, begins again if one landed), and none is waited for after. It writes nothing.
func (db *DB) Check(ctx context.Context) (*tidings.CheckReport, error) {
	snap, err := db.snapshot(ctx, 2*checkParts+checkWorkers)
	if err != nil {
		return nil, err
	}
	defer snap.close()
	// The passes stop with a check that fails, and are waited for before the snapshot's
	// transactions end (deferred calls run last in, first out).
	passCtx, stop := context.WithCancel(ctx)
	pass := startTagPass(passCtx, snap.txs[:2*checkParts])
	defer func() { <-pass.done }()
	defer stop()
	checks := sqliteChecks(pass, db.tagRollup)
	kinds := make([]string, len(checks))
	for i, c := range checks {
		kinds[i] = c.kind
	}
	free := make(chan *sql.Tx, checkWorkers)
	for _, tx := range snap.txs[2*checkParts:] {
		free <- tx
	}
	r, err := tidings.RunChecks(ctx, kinds, checkWorkers, func(ctx context.Context, i int, r *tidings.CheckReport) error {
		tx := <-free
		defer func() { free <- tx }()
		return checks[i].run(ctx, tx, r)
	})
	if err != nil {
		return nil, err
	}
	if err := pass.result(ctx); err != nil {
		return nil, err
	}
	r.Events = pass.events.events
	return r, nil
}

// snapshot is read transactions on n connections of the read pool that see the same
// state. The check reads indexes at random: each connection maps the file and keeps
// more pages than a reader does, and gives them back after.
type snapshot struct {
	conns []*sql.Conn
	txs   []*sql.Tx
}

func (db *DB) snapshot(ctx context.Context, n int) (*snapshot, error) {
	if db.readOnly {
		return db.snapshotReadOnly(ctx, n)
	}
	lock, err := db.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE: no commit until all have begun
	if err != nil {
		return nil, err
	}
	defer lock.Rollback()
	return db.beginReads(ctx, n)
}

// beginReads begins a read transaction on each of n connections of the read pool.
func (db *DB) beginReads(ctx context.Context, n int) (_ *snapshot, err error) {
	s := &snapshot{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	for range n {
		conn, err := db.read.Conn(ctx)
		if err != nil {
			return nil, err
		}
		s.conns = append(s.conns, conn)
		if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 4294967296; PRAGMA cache_size = -131072`); err != nil {
			return nil, err
		}
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: no write lock
		if err != nil {
			return nil, err
		}
		s.txs = append(s.txs, tx)
		var last int64 // the first read fixes the transaction's snapshot
		if err := tx.QueryRowContext(ctx, `SELECT last FROM event_seq`).Scan(&last); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *snapshot) close() {
	for _, tx := range s.txs {
		tx.Rollback()
	}
	for _, c := range s.conns {
		c.ExecContext(context.Background(), `PRAGMA mmap_size = 0; PRAGMA cache_size = -2000`)
		c.Close()
	}
}

type storeCheck struct {
	kind string
	run  func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error
}

// sqlCheck is a check whose query returns one row per inconsistency: where, expected, found.
func sqlCheck(kind, query string) storeCheck {
	return storeCheck{kind, func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
		return eachRow(ctx, tx, query, func(where, expected, found string) {
			r.Add(tidings.Inconsistency{Kind: kind, Where: where, Expected: expected, Found: found})
		})
	}}
}

func eachRow(ctx context.Context, tx *sql.Tx, query string, fn func(where, expected, found string), args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var where, expected, found sql.NullString
		if err := rows.Scan(&where, &expected, &found); err != nil {
			return err
		}
		fn(where.String, expected.String, found.String)
	}
	return rows.Err()
}

// sqliteChecks are the checks, longest first (the page views' and activity minutes'
// read every view); the tag index's and the users' wait for pass, which runs beside them.
func sqliteChecks(pass *tagPass, rollup int64) []storeCheck {
	return append(pageChecks(), []storeCheck{
		{"search", checkSearchRows},
		{"search.scope", checkSearchScopes},
		{"search.text", checkSearchText},
		{"search.tag", checkSearchTags},
		{"hour_count", checkHourCounts},
		{"tag_hour", func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
			return checkTagHours(ctx, tx, rollup, r)
		}},
		sqlCheck("insight_history", `SELECT 'insight ' || i.id || ' (' || i.title || ')', i.value, coalesce(
			(SELECT value FROM insight_points WHERE insight_id = i.id ORDER BY rowid DESC LIMIT 1), 'no point')
		FROM insights i WHERE i.value IS NOT (SELECT value FROM insight_points WHERE insight_id = i.id ORDER BY rowid DESC LIMIT 1)`),
		sqlCheck("outbox.tenant", `SELECT 'delivery ' || d.id || ' event ' || d.event_id, 'account ' || d.account_id, 'account ' || p.account_id
		FROM deliveries d JOIN events e ON e.id = unhex(replace(d.event_id, '-', '')) JOIN projects p ON p.id = e.project_id
		WHERE d.event_id != '' AND p.account_id != d.account_id`),
		// A press is found by its account (FindPress): one naming another account's
		// event would show that event's action to the wrong account.
		sqlCheck("press.tenant", `SELECT 'press ' || x.id, 'account ' || p.account_id, 'account ' || x.account_id
		FROM event_presses x JOIN events e ON e.id = x.event_id JOIN projects p ON p.id = e.project_id
		WHERE p.account_id != x.account_id`),
		// A member's routes and digests are read by their account (AccountRoutes,
		// ListDigests joins it): one naming another account's member, project or channel,
		// or a channel of another project, would route or digest across tenants.
		sqlCheck("route.tenant", `SELECT 'route of user ' || r.user_id || ' (project ' || r.project_id || ifnull(', channel ' || r.channel_id, '') || ')',
			'account ' || r.account_id || ifnull(', a channel of project ' || r.project_id, ''),
			'user of account ' || u.account_id || ', project of account ' || p.account_id || ifnull(', a channel of project ' || c.project_id, '')
		FROM member_routes r JOIN users u ON u.id = r.user_id JOIN projects p ON p.id = r.project_id
		LEFT JOIN channels c ON c.id = r.channel_id
		WHERE u.account_id != r.account_id OR p.account_id != r.account_id OR c.project_id != r.project_id`),
		sqlCheck("digest.tenant", `SELECT 'digest of user ' || d.user_id || ' (project ' || d.project_id || ')', 'account ' || d.account_id,
			'user of account ' || u.account_id || ', project of account ' || p.account_id
		FROM member_digests d JOIN users u ON u.id = d.user_id JOIN projects p ON p.id = d.project_id
		WHERE u.account_id != d.account_id OR p.account_id != d.account_id`),
		// A hook is found by its path whatever the account, and publishes into its
		// project and channel as its account: one naming another account's project, a
		// channel of another project, or a log row under another account than its
		// hook's, would publish or show across tenants.
		sqlCheck("hook.tenant", `SELECT 'hook ' || h.id || ' (project ' || h.project_id || ', channel ' || h.channel_id || ')',
			'account ' || h.account_id || ', a channel of project ' || h.project_id,
			'project of account ' || p.account_id || ', a channel of project ' || c.project_id
		FROM hooks h JOIN projects p ON p.id = h.project_id JOIN channels c ON c.id = h.channel_id
		WHERE p.account_id != h.account_id OR c.project_id != h.project_id
		UNION ALL
		SELECT 'attempt ' || x.id || ' of hook ' || x.hook_id, 'account ' || h.account_id, 'account ' || x.account_id
		FROM hook_attempts x JOIN hooks h ON h.id = x.hook_id WHERE x.account_id != h.account_id`),
		// An event's jobs go with it (deleteEvents, sqlDropOrphanDeliveries), and a job
		// expanded after its event went adds nothing (ReplaceDelivery).
		sqlCheck("outbox.event", `SELECT 'delivery ' || d.id || ' (' || d.kind || ')', 'event ' || d.event_id, 'none'
		FROM deliveries d WHERE d.kind IN (`+eventDeliveryKinds+`)
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = unhex(replace(d.event_id, '-', '')))`),
		// A user's groups are listed through the memberships: one naming a group of
		// another project would show it on the user's page.
		sqlCheck("groups.tenant", `SELECT 'group ' || g.id || ' (' || g.group_id || ') member ' || p.id || ' (' || p.user_id || ')',
			'project ' || g.project_id, 'project ' || p.project_id
		FROM group_members m JOIN groups g ON g.id = m.group_ref JOIN people p ON p.id = m.person_ref
		WHERE g.project_id != p.project_id`),
		sqlCheck("event.seq", `SELECT 'events', 'highest seq <= ' || s.last, 'highest seq ' || (SELECT max(seq) FROM events)
		FROM event_seq s WHERE (SELECT max(seq) FROM events) > s.last`),
		// A key is claimed without its answer and given it before its write commits:
		// an empty answer committed would replay nothing.
		sqlCheck("idempotency.answer", `SELECT 'key ' || k.account_id || '/' || k.key, 'the answer of its write', 'none'
		FROM idempotency_keys k WHERE length(k.body) = 0`),
		// The tag index, the tags' counts and the users' counts: one pass over the events
		// and one over the index (checkpass.go) add up what they hold.
		{"tag_index", pass.checkTags},
		{"user_count", pass.checkUsers},
	}...)
}

// checkTagRows reads the rows of the project's tags one by one against their events.
func checkTagRows(ctx context.Context, tx *sql.Tx, project int64, r *tidings.CheckReport) error {
	// A tag's value as the event holds it: one lookup by key (keys follow the naming
	// rule, so quoting them in the path is safe), compared the way the dictionary keeps
	// it (a number as its literal, a boolean as its word).
	rows, err := tx.QueryContext(ctx, `SELECT * FROM (SELECT t.tag_id, t.seq, t.ts, t.channel_id, g.project_id, g.key, g.value,
			e.seq IS NULL AS orphan, coalesce(e.project_id, 0) AS ep, coalesce(e.ts, 0) AS ets, coalesce(e.channel_id, 0) AS ec,
			coalesce(e.tags, '') AS tags,
			CASE json_type(e.tags, '$."' || g.key || '"')
			  WHEN 'text' THEN json_extract(e.tags, '$."' || g.key || '"') IS NOT g.value
			  WHEN 'integer' THEN CAST(g.value AS REAL) != json_extract(e.tags, '$."' || g.key || '"')
			  WHEN 'real' THEN CAST(g.value AS REAL) != json_extract(e.tags, '$."' || g.key || '"')
			  WHEN 'true' THEN g.value != 'true'
			  WHEN 'false' THEN g.value != 'false'
			  ELSE e.seq IS NOT NULL END AS wrong
		FROM tags g JOIN event_tags t ON t.tag_id = g.id LEFT JOIN events e ON e.seq = t.seq WHERE g.project_id = ?)
		WHERE orphan OR ep != project_id OR ets != ts OR ec != channel_id OR wrong`, project)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tag, seq, ts, channel, project, eProject, eTS, eChannel int64
		var key, value, tags string
		var orphan, wrongTag bool
		if err := rows.Scan(&tag, &seq, &ts, &channel, &project, &key, &value, &orphan, &eProject, &eTS, &eChannel, &tags, &wrongTag); err != nil {
			return err
		}
		where := fmt.Sprintf("tag %d seq %d", tag, seq)
		switch {
		case orphan:
			r.Add(tidings.Inconsistency{Kind: "tag_index.orphan", Where: where, Expected: "an event", Found: "none"})
		case eProject != project:
			r.Add(tidings.Inconsistency{Kind: "tag_index.tenant", Where: where, Expected: fmt.Sprintf("project %d", project), Found: fmt.Sprintf("project %d", eProject)})
		default:
			if eTS != ts || eChannel != channel {
				r.Add(tidings.Inconsistency{Kind: "tag_index.row", Where: where,
					Expected: fmt.Sprintf("ts %d channel %d", eTS, eChannel), Found: fmt.Sprintf("ts %d channel %d", ts, channel)})
			}
			if wrongTag {
				r.Add(tidings.Inconsistency{Kind: "tag_index.tag", Where: where, Expected: key + ":" + value, Found: tags})
			}
		}
	}
	return rows.Err()
}

// tagRowsExpected joins each tag an event carries (json_each's row j) to the row of the
// tag index it should have (t), through the project's dictionary entry (g): a string as
// is, a boolean as its word, a number as the literal the event holds.
const tagRowsExpected = `FROM events e, json_each(e.tags) j
	LEFT JOIN tags g ON g.project_id = e.project_id AND g.key = j.key AND g.value = CASE j.type
		WHEN 'text' THEN j.value WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE e.tags -> j.fullkey END
	LEFT JOIN event_tags t ON t.tag_id = g.id AND t.ts = e.ts AND t.seq = e.seq`

// checkTags compares, project by project, what the events pass and the tag index's
// pass added up, and names the rows of a project where they differ.
func (p *tagPass) checkTags(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	if err := p.result(ctx); err != nil {
		return err
	}
	for _, list := range [][]tidings.Inconsistency{p.events.problems, p.index.problems} {
		for _, i := range list {
			r.Add(i)
		}
	}
	projects := map[int64]bool{}
	for project := range p.events.tags {
		projects[project] = true
	}
	for project := range p.index.tags {
		projects[project] = true
	}
	for project := range projects {
		want, have := p.events.tags[project], p.index.tags[project]
		if want == nil {
			want = &tagSums{}
		}
		if have == nil {
			have = &tagSums{}
		}
		if *want == *have {
			continue
		}
		before := len(r.Problems) + int(r.Omitted)
		if err := missingTagRows(ctx, tx, project, r); err != nil {
			return err
		}
		if err := checkTagRows(ctx, tx, project, r); err != nil {
			return err
		}
		if len(r.Problems)+int(r.Omitted) == before {
			r.Add(tidings.Inconsistency{Kind: "tag_index", Where: fmt.Sprintf("project %d", project),
				Expected: fmt.Sprintf("%d rows, one per tag of each event", want.rows), Found: fmt.Sprintf("%d rows, not those", have.rows)})
		}
	}
	return nil
}

// missingTagRows names the project's events whose tag has no row of the tag index, or
// one of another channel.
func missingTagRows(ctx context.Context, tx *sql.Tx, project int64, r *tidings.CheckReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT e.id, e.seq, j.key, CASE j.type WHEN 'text' THEN j.value ELSE e.tags -> j.fullkey END,
		t.seq IS NULL, e.channel_id, coalesce(t.channel_id, 0) `+tagRowsExpected+`
		WHERE e.project_id = ? AND t.channel_id IS NOT e.channel_id`, project)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq, channel, rowChannel int64
		var id []byte
		var key, value string
		var missing bool
		if err := rows.Scan(&id, &seq, &key, &value, &missing, &channel, &rowChannel); err != nil {
			return err
		}
		where := fmt.Sprintf("project %d event %s (seq %d)", project, uuid.UUID(id), seq)
		if missing {
			r.Add(tidings.Inconsistency{Kind: "tag_index.missing", Where: where, Expected: "a row for " + key + ":" + value, Found: "none"})
		} else {
			r.Add(tidings.Inconsistency{Kind: "tag_index.row", Where: where + " tag " + key + ":" + value,
				Expected: fmt.Sprintf("channel %d", channel), Found: fmt.Sprintf("channel %d", rowChannel)})
		}
	}
	return rows.Err()
}

// checkUsers compares each user's count of events and first and last seen, as the
// events pass found them, with the people table.
func (p *tagPass) checkUsers(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	if err := p.result(ctx); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT project_id, user_id, events, first_seen, last_seen FROM people`)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := map[personKey]bool{}
	for rows.Next() {
		var k personKey
		var events, firstSeen, lastSeen int64
		if err := rows.Scan(&k.project, &k.user, &events, &firstSeen, &lastSeen); err != nil {
			return err
		}
		where := fmt.Sprintf("project %d user %s", k.project, k.user)
		u := p.events.users[k.project][k.user]
		seen[k] = true
		switch {
		case u == nil && events != 0:
			r.Add(tidings.Inconsistency{Kind: "user_count", Where: where, Expected: "0", Found: fmt.Sprint(events)})
		case u != nil && u.n != events:
			r.Add(tidings.Inconsistency{Kind: "user_count", Where: where, Expected: fmt.Sprint(u.n), Found: fmt.Sprint(events)})
		case u != nil && (firstSeen > u.first || lastSeen < u.last), firstSeen > lastSeen:
			var first, last int64
			if u != nil {
				first, last = u.first, u.last
			}
			r.Add(tidings.Inconsistency{Kind: "user_seen", Where: where,
				Expected: fmt.Sprintf("first seen <= %d, last seen >= %d", first, last), Found: fmt.Sprintf("first seen %d, last seen %d", firstSeen, lastSeen)})
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for project, users := range p.events.users {
		for user, u := range users {
			if !seen[personKey{project, user}] {
				r.Add(tidings.Inconsistency{Kind: "user_count", Where: fmt.Sprintf("project %d user %s", project, user), Expected: fmt.Sprint(u.n), Found: "no row"})
			}
		}
	}
	return nil
}
