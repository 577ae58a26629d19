package postgres

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// AddPageViews stores checked page views through the group committer: they share a
// batch's transaction with events, and the batch's statements write every view of it
// at once (flushViews).
func (db *DB) AddPageViews(ctx context.Context, accountID int64, c *tidings.NewPageViews) error {
	if len(c.Views) == 0 {
		return nil
	}
	_, err := db.submit(ctx, &writeJob{accountID: accountID, views: c})
	return err
}

// viewRows are a batch's page views as columns, like eventRows.
type viewRows struct {
	project, ts                       []int64
	user, path, title, referrer, host []string // host: the referrer's, of an entry ("" for none)
	entry                             []bool
}

func (r *viewRows) reset() { *r = viewRows{} }

// insertViews adds a call's views to the batch.
func (b *batch) insertViews(ctx context.Context, accountID int64, c *tidings.NewPageViews) error {
	p, err := b.project(ctx, accountID, c.Project)
	if err != nil {
		return err
	}
	r := &b.views
	for _, v := range c.Views {
		host := ""
		if v.Entry {
			host = tidings.ReferrerHost(v.Referrer)
		}
		r.project = append(r.project, p.ID)
		r.ts = append(r.ts, ms(v.Timestamp))
		r.user = append(r.user, v.UserID)
		r.path = append(r.path, v.Path)
		r.title = append(r.title, v.Title)
		r.referrer = append(r.referrer, v.Referrer)
		r.host = append(r.host, host)
		r.entry = append(r.entry, v.Entry)
	}
	return nil
}

// textKey is a string of a project's page views.
type textKey struct {
	project int64
	text    string
}

// hashKey is a string of a project's page views by its hash (page_texts.hash).
type hashKey struct {
	project int64
	hash    string
}

// textHash is what page_texts finds a string by.
func textHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:16]
}

// pageTexts returns the page_texts ids of the batch's strings, adding the new ones.
// Most are known: one lookup finds them. The others are inserted in key order; one that
// another instance inserted meanwhile is found by a second lookup, once its
// transaction has committed (the insert waited for it).
func (b *batch) pageTexts(ctx context.Context) (map[textKey]int32, error) {
	v := &b.views
	ids := map[textKey]int32{}
	byHash := map[hashKey]string{}
	var projects []int64
	var hashes [][]byte
	var texts []string
	add := func(p int64, s string) {
		if s == "" {
			return
		}
		if _, ok := ids[textKey{p, s}]; ok {
			return
		}
		ids[textKey{p, s}] = 0
		h := textHash(s)
		byHash[hashKey{p, string(h)}] = s
		projects, hashes, texts = append(projects, p), append(hashes, h), append(texts, s)
	}
	for i, p := range v.project {
		add(p, v.path[i])
		add(p, v.title[i])
		add(p, v.referrer[i])
		add(p, v.host[i])
	}
	found := 0
	read := func(q string, args ...any) error {
		rows, err := b.tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p int64
			var h []byte
			var id int32
			if err := rows.Scan(&p, &h, &id); err != nil {
				return err
			}
			if s, ok := byHash[hashKey{p, string(h)}]; ok && ids[textKey{p, s}] == 0 {
				ids[textKey{p, s}] = id
				found++
			}
		}
		return rows.Err()
	}
	const lookup = `SELECT t.project_id, t.hash, t.id FROM unnest($1::bigint[], $2::bytea[]) AS x(p, h)
		JOIN page_texts t ON t.project_id = x.p AND t.hash = x.h`
	if err := read(lookup, projects, hashes); err != nil || found == len(texts) {
		return ids, err
	}
	// The new ones, in key order.
	var np []int64
	var nh [][]byte
	var nt []string
	for i := range texts {
		if ids[textKey{projects[i], texts[i]}] == 0 {
			np, nh, nt = append(np, projects[i]), append(nh, hashes[i]), append(nt, texts[i])
		}
	}
	if err := read(`INSERT INTO page_texts (project_id, hash, text)
		SELECT p, h, t FROM unnest($1::bigint[], $2::bytea[], $3::text[]) AS x(p, h, t) ORDER BY 1, 2
		ON CONFLICT (project_id, hash) DO NOTHING RETURNING project_id, hash, id`, np, nh, nt); err != nil || found == len(texts) {
		return ids, err
	}
	return ids, read(lookup, np, nh)
}

// sqlCountPeople creates the users that a batch's events and page views name, moves
// their first and last seen (an event's arrival, a view's time) and counts their
// events and views, locking their rows in key order; it returns the rows. $1-$3: the
// events' projects, users, the batch's time; $4-$6: the views' projects, users, times.
const sqlCountPeople = `INSERT INTO people (project_id, user_id, properties, first_seen, last_seen, events, page_views)
	SELECT p, u, '{}', min(f), max(l), sum(e), sum(v) FROM (
	  SELECT p, u, $3::bigint AS f, $3::bigint AS l, 1 AS e, 0 AS v FROM unnest($1::bigint[], $2::text[]) AS x(p, u) WHERE u <> ''
	  UNION ALL
	  SELECT p, u, t, t, 0, 1 FROM unnest($4::bigint[], $5::text[], $6::bigint[]) AS y(p, u, t)) a
	GROUP BY 1, 2 ORDER BY 1, 2
	ON CONFLICT (project_id, user_id) DO UPDATE SET last_seen = greatest(people.last_seen, excluded.last_seen),
	  first_seen = least(people.first_seen, excluded.first_seen), events = people.events + excluded.events,
	  page_views = people.page_views + excluded.page_views
	RETURNING id, project_id, user_id`

// sqlCountMinutes adds events and views to their users' minutes, in key order. $1
// users' row ids, $2 minutes, $3 events, $4 views (one entry per event or view).
const sqlCountMinutes = `INSERT INTO user_minutes (person_ref, minute, events, views)
	SELECT r, m, sum(e), sum(v) FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::int[]) AS x(r, m, e, v)
	GROUP BY 1, 2 ORDER BY 1, 2
	ON CONFLICT (person_ref, minute) DO UPDATE SET events = user_minutes.events + excluded.events,
	  views = user_minutes.views + excluded.views`

// personKey is one of a project's users.
type personKey struct {
	project int64
	user    string
}

// countPeople counts the batch's events and views in their users' rows (sqlCountPeople)
// and minutes, moving their sessions; it returns the users' row ids.
func (b *batch) countPeople(ctx context.Context) (map[personKey]int64, error) {
	r, v := &b.rows, &b.views
	users := len(v.user) > 0
	for _, u := range r.userID {
		users = users || u != ""
	}
	if !users {
		return nil, nil
	}
	refs := map[personKey]int64{}
	rows, err := b.tx.Query(ctx, sqlCountPeople, r.project, r.userID, b.now, v.project, v.user, v.ts)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, p int64
		var u string
		if err := rows.Scan(&id, &p, &u); err != nil {
			rows.Close()
			return nil, err
		}
		refs[personKey{p, u}] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var people, minutes []int64
	var events, views []int32
	for i, u := range r.userID {
		if u != "" {
			people, minutes = append(people, refs[personKey{r.project[i], u}]), append(minutes, r.ts[i]-r.ts[i]%60_000)
			events, views = append(events, 1), append(views, 0)
		}
	}
	for i, u := range v.user {
		people, minutes = append(people, refs[personKey{v.project[i], u}]), append(minutes, v.ts[i]-v.ts[i]%60_000)
		events, views = append(events, 0), append(views, 1)
	}
	return refs, withSessions(ctx, b.tx, people, minutes, func() error {
		_, err := b.tx.Exec(ctx, sqlCountMinutes, people, minutes, events, views)
		return err
	})
}

const sqlInsertViews = `INSERT INTO page_views (project_id, person_ref, ts, path, title, referrer, entry)
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::int[], $5::int[], $6::int[], $7::bool[])`

// The page counts of a batch's views, each in key order. $1 projects, $2 days, $3
// users (row ids) or paths or hosts, $4 entry flags (of the views, one row each).
const (
	sqlCountPersonPaths = `INSERT INTO page_person_paths (person_ref, path, views)
	SELECT r, p, count(*) FROM unnest($1::bigint[], $2::int[]) AS x(r, p) GROUP BY 1, 2 ORDER BY 1, 2
	ON CONFLICT (person_ref, path) DO UPDATE SET views = page_person_paths.views + excluded.views`
	// A user's row of a day whose views are this batch's alone is new: one user more
	// that day. The days' insert sorts what it reads of fresh, which reads all of u:
	// every user row is locked before any day's.
	sqlCountPageDays = `WITH x AS (SELECT p, d, r, count(*) AS n, count(*) FILTER (WHERE e) AS en
	    FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bool[]) AS x(p, d, r, e) GROUP BY 1, 2, 3),
	u AS (INSERT INTO page_user_days (project_id, day, person_ref, views) SELECT p, d, r, n FROM x ORDER BY 1, 2, 3
	  ON CONFLICT (project_id, day, person_ref) DO UPDATE SET views = page_user_days.views + excluded.views
	  RETURNING project_id, day, person_ref, views),
	fresh AS (SELECT u.project_id AS p, u.day AS d, count(*) AS users FROM u
	  JOIN x ON x.p = u.project_id AND x.d = u.day AND x.r = u.person_ref WHERE u.views = x.n GROUP BY 1, 2)
	INSERT INTO page_days (project_id, day, views, entries, users)
	SELECT t.p, t.d, t.n, t.en, coalesce(fresh.users, 0)
	FROM (SELECT p, d, sum(n) AS n, sum(en) AS en FROM x GROUP BY 1, 2) t LEFT JOIN fresh ON fresh.p = t.p AND fresh.d = t.d
	ORDER BY 1, 2
	ON CONFLICT (project_id, day) DO UPDATE SET views = page_days.views + excluded.views,
	  entries = page_days.entries + excluded.entries, users = page_days.users + excluded.users`
	sqlCountPathDays = `INSERT INTO page_path_days (project_id, day, path, views, entries)
	SELECT p, d, k, count(*), count(*) FILTER (WHERE e) FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bool[]) AS x(p, d, k, e)
	GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
	ON CONFLICT (project_id, day, path) DO UPDATE SET views = page_path_days.views + excluded.views,
	  entries = page_path_days.entries + excluded.entries`
	sqlCountPathMonths = `INSERT INTO page_path_months (project_id, month, path, views, entries)
	SELECT p, d, k, count(*), count(*) FILTER (WHERE e) FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bool[]) AS x(p, d, k, e)
	GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
	ON CONFLICT (project_id, month, path) DO UPDATE SET views = page_path_months.views + excluded.views,
	  entries = page_path_months.entries + excluded.entries`
	sqlCountReferrerDays = `INSERT INTO page_referrer_days (project_id, day, host, entries)
	SELECT p, d, k, count(*) FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bool[]) AS x(p, d, k, e)
	WHERE e AND k <> 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
	ON CONFLICT (project_id, day, host) DO UPDATE SET entries = page_referrer_days.entries + excluded.entries`
)

const dayMS = 86_400_000

// nextMonth is the start of the UTC month after the one that starts at t (unix ms).
func nextMonth(t int64) int64 {
	return fromMS(t).AddDate(0, 1, 0).UnixMilli()
}

// monthOf is the start of the UTC month of t (unix ms).
func monthOf(t int64) int64 {
	y, m, _ := fromMS(t).Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
}

// flushViews inserts the batch's page views and adds them to the page counts, in the
// order every writer locks them: page_person_paths, page_user_days, page_days,
// page_path_days, page_path_months, page_referrer_days. The statements go in one
// round trip.
func (b *batch) flushViews(ctx context.Context, texts map[textKey]int32, people map[personKey]int64) error {
	v := &b.views
	n := len(v.user)
	person, day, month := make([]int64, n), make([]int64, n), make([]int64, n)
	path, title, referrer, host := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	for i, p := range v.project {
		person[i] = people[personKey{p, v.user[i]}]
		day[i], month[i] = v.ts[i]-v.ts[i]%dayMS, monthOf(v.ts[i])
		path[i], title[i] = texts[textKey{p, v.path[i]}], texts[textKey{p, v.title[i]}]
		referrer[i], host[i] = texts[textKey{p, v.referrer[i]}], texts[textKey{p, v.host[i]}]
	}
	q := &pgx.Batch{}
	q.Queue(sqlInsertViews, v.project, person, v.ts, path, title, referrer, v.entry)
	q.Queue(sqlCountPersonPaths, person, path)
	q.Queue(sqlCountPageDays, v.project, day, person, v.entry)
	q.Queue(sqlCountPathDays, v.project, day, path, v.entry)
	q.Queue(sqlCountPathMonths, v.project, month, path, v.entry)
	q.Queue(sqlCountReferrerDays, v.project, day, host, v.entry)
	return b.tx.SendBatch(ctx, q).Close()
}
