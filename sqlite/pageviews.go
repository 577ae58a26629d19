package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Page views (migration 21): one compact row each in page_views, their texts in the
// project's dictionary page_texts, and what is derived from them written in the same
// transaction: the user's row (page_views, first and last seen), its activity minutes
// (user_minutes, shared with its events), its views per path, and the project's daily
// counts for the Pages view. Every count is exact: a purge subtracts what it deletes,
// and a row whose count reaches 0 goes.

var _ tidings.PageStore = (*DB)(nil)

const (
	msPerMinute = 60_000
	msPerDay    = 86_400_000
)

// Statements of the page views' write path, prepared with the batch's (write.go).
const (
	sqlFindPageText   = `SELECT id FROM page_texts WHERE project_id = ? AND text = ?`
	sqlCreatePageText = `INSERT INTO page_texts (project_id, text) VALUES (?, ?) RETURNING id`
	// sqlViewPerson creates or counts the user of a call's views, moving its first and
	// last seen to their earliest and latest.
	sqlViewPerson = `INSERT INTO people (project_id, user_id, first_seen, last_seen, page_views) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, user_id) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen),
		  last_seen = max(last_seen, excluded.last_seen), page_views = page_views + excluded.page_views
		RETURNING id`
	sqlCountMinute = `INSERT INTO user_minutes (person_ref, minute, events, views) VALUES (?, ?, ?, ?)
		ON CONFLICT (person_ref, minute) DO UPDATE SET events = events + excluded.events, views = views + excluded.views`
	sqlCountPersonPath = `INSERT INTO page_person_paths (person_ref, path, views) VALUES (?, ?, ?)
		ON CONFLICT (person_ref, path) DO UPDATE SET views = views + excluded.views`
	// sqlCountUserDay counts a user's views of a day it has been seen already; when it
	// changes no row, sqlNewUserDay adds the day's new user (two statements rather than
	// an upsert answering its count: most views are of a user seen that day, and an
	// exec costs less than a query).
	sqlCountUserDay = `UPDATE page_user_days SET views = views + ? WHERE project_id = ? AND day = ? AND person_ref = ?`
	sqlNewUserDay   = `INSERT INTO page_user_days (project_id, day, person_ref, views) VALUES (?, ?, ?, ?)`
	sqlCountPageDay = `INSERT INTO page_days (project_id, day, views, entries, users) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, day) DO UPDATE SET views = views + excluded.views, entries = entries + excluded.entries,
		  users = users + excluded.users`
	sqlCountPathDay = `INSERT INTO page_path_days (project_id, day, path, views, entries) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, day, path) DO UPDATE SET views = views + excluded.views, entries = entries + excluded.entries`
	sqlCountReferrerDay = `INSERT INTO page_referrer_days (project_id, day, host, entries) VALUES (?, ?, ?, ?)
		ON CONFLICT (project_id, day, host) DO UPDATE SET entries = entries + excluded.entries`
)

var pageStatements = []string{sqlFindPageText, sqlCreatePageText, sqlViewPerson, sqlCountMinute,
	sqlCountPersonPath, sqlCountUserDay, sqlNewUserDay, sqlCountPageDay, sqlCountPathDay, sqlCountReferrerDay}

// AddPageViews stores checked views and what they count for, in the next
// group-committed transaction: like events, a batch's views are written together at
// its end (writeViews), their users and counts once per batch.
func (db *DB) AddPageViews(ctx context.Context, accountID int64, c *tidings.NewPageViews) error {
	_, err := db.submit(ctx, &writeJob{accountID: accountID, views: c})
	return err
}

// viewSeen is what a batch's views tell of one user.
type viewSeen struct{ n, first, last int64 }

type pageTextKey struct {
	project int64
	text    string
}

// pendingView is a page view of the batch, written by writeViews.
type pendingView struct {
	project                   int64
	user                      string
	ts, path, title, referrer int64
	host                      int64 // the referrer's host for an entry; 0: none
	entry                     bool
}

// addViews takes a call's views into the batch. The project is the only reason to
// refuse a call, and it is looked up before anything is written.
func (b *batch) addViews(ctx context.Context, accountID int64, c *tidings.NewPageViews) (refusal, err error) {
	p, err := b.project(ctx, accountID, c.Project)
	if err != nil {
		_, refusal, err = refusedOr(err)
		return refusal, err
	}
	for _, v := range c.Views {
		pv := pendingView{project: p.ID, user: v.UserID, ts: ms(v.Timestamp), entry: v.Entry}
		if pv.path, err = b.pageText(ctx, p.ID, v.Path); err != nil {
			return nil, err
		}
		if pv.title, err = b.pageText(ctx, p.ID, v.Title); err != nil {
			return nil, err
		}
		if pv.referrer, err = b.pageText(ctx, p.ID, v.Referrer); err != nil {
			return nil, err
		}
		if v.Entry {
			if pv.host, err = b.pageText(ctx, p.ID, tidings.ReferrerHost(v.Referrer)); err != nil {
				return nil, err
			}
		}
		b.views = append(b.views, pv)
		k := userKey{p.ID, v.UserID}
		if s := b.viewUsers[k]; s != nil {
			s.n, s.first, s.last = s.n+1, min(s.first, pv.ts), max(s.last, pv.ts)
		} else {
			b.viewUsers[k] = &viewSeen{1, pv.ts, pv.ts}
		}
	}
	return nil, nil
}

// pageText resolves a text to its entry of the project's dictionary once per batch,
// adding it when new; "" is 0.
func (b *batch) pageText(ctx context.Context, project int64, text string) (int64, error) {
	if text == "" {
		return 0, nil
	}
	k := pageTextKey{project, text}
	if id, ok := b.pageTexts[k]; ok {
		return id, nil
	}
	var id int64
	err := b.queryRow(ctx, sqlFindPageText, project, text).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = b.queryRow(ctx, sqlCreatePageText, project, text).Scan(&id)
	}
	if err != nil {
		return 0, err
	}
	b.pageTexts[k] = id
	return id, nil
}

// viewChunk is how many page views one statement writes (7 parameters each).
const viewChunk = 32

func insertViewRows(n int) string {
	return `INSERT INTO page_views (project_id, person_ref, ts, path, title, referrer, entry) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", n), ", ")
}

var viewStatements = rowStatements(insertViewRows, viewChunk)

// writeViews writes the batch's page views: their users first (created, counted, first
// and last seen moved), then the rows, then what they count for.
func (b *batch) writeViews(ctx context.Context) error {
	if len(b.views) == 0 {
		return nil
	}
	refs := make(map[userKey]int64, len(b.viewUsers))
	for k, s := range b.viewUsers {
		var ref int64
		if err := b.queryRow(ctx, sqlViewPerson, k.project, k.id, s.first, s.last, s.n).Scan(&ref); err != nil {
			return err
		}
		refs[k] = ref
	}
	rows := make([]any, 0, 7*len(b.views))
	counts := map[int64]*pageCounts{}
	for _, v := range b.views {
		ref := refs[userKey{v.project, v.user}]
		rows = append(rows, v.project, ref, v.ts, v.path, v.title, v.referrer, v.entry)
		c := counts[v.project]
		if c == nil {
			c = newPageCounts(v.project)
			counts[v.project] = c
		}
		c.add(ref, v.ts, v.path, v.host, v.entry)
	}
	if err := b.execRows(ctx, viewStatements, viewChunk, 7, rows); err != nil {
		return err
	}
	for _, c := range counts {
		if err := c.addTo(ctx, b); err != nil {
			return err
		}
	}
	clear(b.views) // let the user ids go
	b.views = b.views[:0]
	clear(b.viewUsers)
	return nil
}

// pageDict resolves texts to their ids in the project's dictionary, once per call.
type pageDict struct {
	tx interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}
	project int64
	ids     map[string]int64
}

// id is text's entry, 0 for "" (and for a text without one when create is false).
func (d *pageDict) id(ctx context.Context, text string, create bool) (int64, error) {
	if text == "" {
		return 0, nil
	}
	if id, ok := d.ids[text]; ok {
		return id, nil
	}
	var id int64
	err := d.tx.QueryRowContext(ctx, sqlFindPageText, d.project, text).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if !create {
			return 0, nil
		}
		err = d.tx.QueryRowContext(ctx, sqlCreatePageText, d.project, text).Scan(&id)
	}
	if err != nil {
		return 0, err
	}
	d.ids[text] = id
	return id, nil
}

type refMinute struct{ ref, minute int64 }
type refPath struct{ ref, path int64 }
type dayRef struct{ day, ref int64 }

type viewCount struct{ views, entries int64 }

// pageCounts are what some views of one project add to (or take from) the derived
// tables, summed per row.
type pageCounts struct {
	project  int64
	people   map[int64]int64 // views per user
	minutes  map[refMinute]int64
	paths    map[refPath]int64
	days     map[int64]*viewCount
	userDays map[dayRef]int64
	pathDays map[dayRef]*viewCount // ref: the path
	refDays  map[dayRef]int64      // ref: the referrer's host; entries
}

func newPageCounts(project int64) *pageCounts {
	return &pageCounts{project: project, people: map[int64]int64{}, minutes: map[refMinute]int64{}, paths: map[refPath]int64{},
		days: map[int64]*viewCount{}, userDays: map[dayRef]int64{}, pathDays: map[dayRef]*viewCount{}, refDays: map[dayRef]int64{}}
}

// add counts a view of user ref at ts of path; host is its referrer's host when it is
// an entry (0: none).
func (c *pageCounts) add(ref, ts, path, host int64, entry bool) {
	day := ts / msPerDay
	var e int64
	if entry {
		e = 1
	}
	c.people[ref]++
	c.minutes[refMinute{ref, ts / msPerMinute}]++
	c.paths[refPath{ref, path}]++
	d := c.days[day]
	if d == nil {
		d = &viewCount{}
		c.days[day] = d
	}
	d.views, d.entries = d.views+1, d.entries+e
	c.userDays[dayRef{day, ref}]++
	pd := c.pathDays[dayRef{day, path}]
	if pd == nil {
		pd = &viewCount{}
		c.pathDays[dayRef{day, path}] = pd
	}
	pd.views, pd.entries = pd.views+1, pd.entries+e
	if entry && host != 0 {
		c.refDays[dayRef{day, host}]++
	}
}

// addTo adds the counts of views just stored (their users' rows are counted already).
func (c *pageCounts) addTo(ctx context.Context, tx *batch) error {
	for k, n := range c.minutes {
		if _, err := tx.ExecContext(ctx, sqlCountMinute, k.ref, k.minute, 0, n); err != nil {
			return err
		}
	}
	for k, n := range c.paths {
		if _, err := tx.ExecContext(ctx, sqlCountPersonPath, k.ref, k.path, n); err != nil {
			return err
		}
	}
	newUsers := map[int64]int64{}
	for k, n := range c.userDays {
		res, err := tx.ExecContext(ctx, sqlCountUserDay, n, c.project, k.day, k.ref)
		if err != nil {
			return err
		}
		changed, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if changed > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, sqlNewUserDay, c.project, k.day, k.ref, n); err != nil {
			return err
		}
		newUsers[k.day]++
	}
	for day, d := range c.days {
		if _, err := tx.ExecContext(ctx, sqlCountPageDay, c.project, day, d.views, d.entries, newUsers[day]); err != nil {
			return err
		}
	}
	for k, d := range c.pathDays {
		if _, err := tx.ExecContext(ctx, sqlCountPathDay, c.project, k.day, k.ref, d.views, d.entries); err != nil {
			return err
		}
	}
	for k, n := range c.refDays {
		if _, err := tx.ExecContext(ctx, sqlCountReferrerDay, c.project, k.day, k.ref, n); err != nil {
			return err
		}
	}
	return nil
}

// subtract takes deleted views out of every count; a row that reaches 0 goes (a day
// loses a user with its last view of that user).
func (c *pageCounts) subtract(ctx context.Context, tx *sql.Tx) error {
	for ref, n := range c.people {
		if _, err := tx.ExecContext(ctx, `UPDATE people SET page_views = max(page_views - ?, 0) WHERE id = ?`, n, ref); err != nil {
			return err
		}
	}
	for k, n := range c.minutes {
		if err := subtractRow(ctx, tx, `UPDATE user_minutes SET views = views - ?1 WHERE person_ref = ?2 AND minute = ?3 RETURNING events + views`,
			`DELETE FROM user_minutes WHERE person_ref = ?2 AND minute = ?3`, nil, n, k.ref, k.minute); err != nil {
			return err
		}
	}
	for k, n := range c.paths {
		if err := subtractRow(ctx, tx, `UPDATE page_person_paths SET views = views - ?1 WHERE person_ref = ?2 AND path = ?3 RETURNING views`,
			`DELETE FROM page_person_paths WHERE person_ref = ?2 AND path = ?3`, nil, n, k.ref, k.path); err != nil {
			return err
		}
	}
	goneUsers := map[int64]int64{}
	for k, n := range c.userDays {
		err := subtractRow(ctx, tx, `UPDATE page_user_days SET views = views - ?1 WHERE project_id = ?2 AND day = ?3 AND person_ref = ?4 RETURNING views`,
			`DELETE FROM page_user_days WHERE project_id = ?2 AND day = ?3 AND person_ref = ?4`, func() { goneUsers[k.day]++ }, n, c.project, k.day, k.ref)
		if err != nil {
			return err
		}
	}
	for day, d := range c.days {
		err := subtractRow(ctx, tx, `UPDATE page_days SET views = views - ?1, entries = entries - ?2, users = users - ?3
			WHERE project_id = ?4 AND day = ?5 RETURNING views`,
			`DELETE FROM page_days WHERE project_id = ?4 AND day = ?5`, nil, d.views, d.entries, goneUsers[day], c.project, day)
		if err != nil {
			return err
		}
	}
	for k, d := range c.pathDays {
		err := subtractRow(ctx, tx, `UPDATE page_path_days SET views = views - ?1, entries = entries - ?2 WHERE project_id = ?3 AND day = ?4 AND path = ?5 RETURNING views`,
			`DELETE FROM page_path_days WHERE project_id = ?3 AND day = ?4 AND path = ?5`, nil, d.views, d.entries, c.project, k.day, k.ref)
		if err != nil {
			return err
		}
	}
	for k, n := range c.refDays {
		err := subtractRow(ctx, tx, `UPDATE page_referrer_days SET entries = entries - ?1 WHERE project_id = ?2 AND day = ?3 AND host = ?4 RETURNING entries`,
			`DELETE FROM page_referrer_days WHERE project_id = ?2 AND day = ?3 AND host = ?4`, nil, n, c.project, k.day, k.ref)
		if err != nil {
			return err
		}
	}
	return nil
}

// subtractRow runs update (which answers what is left) and, when nothing is left,
// remove with the same arguments, and then gone.
func subtractRow(ctx context.Context, tx *sql.Tx, update, remove string, gone func(), args ...any) error {
	var left int64
	err := tx.QueryRowContext(ctx, update, args...).Scan(&left)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no row to take from: the check names that
	}
	if err != nil || left > 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, remove, args...); err != nil {
		return err
	}
	if gone != nil {
		gone()
	}
	return nil
}

// purgeViews deletes up to max of the project's views older than cutoff (unix ms),
// with what they counted for, and says how many it deleted.
func purgeViews(ctx context.Context, tx *sql.Tx, project, cutoff int64, max int) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT v.id, v.person_ref, v.ts, v.path, v.entry, coalesce(r.text, '')
		FROM page_views v LEFT JOIN page_texts r ON r.id = v.referrer
		WHERE v.project_id = ? AND v.ts < ? ORDER BY v.ts, v.id LIMIT ?`, project, cutoff, max)
	if err != nil {
		return 0, err
	}
	type doomedView struct {
		id, ref, ts, path int64
		entry             bool
		referrer          string
	}
	var doomed []doomedView
	for rows.Next() {
		var d doomedView
		if err := rows.Scan(&d.id, &d.ref, &d.ts, &d.path, &d.entry, &d.referrer); err != nil {
			rows.Close()
			return 0, err
		}
		doomed = append(doomed, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(doomed) == 0 {
		return 0, err
	}
	dict := pageDict{tx: tx, project: project, ids: map[string]int64{}}
	c := newPageCounts(project)
	for _, d := range doomed {
		var host int64
		if d.entry {
			if host, err = dict.id(ctx, tidings.ReferrerHost(d.referrer), false); err != nil {
				return 0, err
			}
		}
		c.add(d.ref, d.ts, d.path, host, d.entry)
		if _, err := tx.ExecContext(ctx, `DELETE FROM page_views WHERE id = ?`, d.id); err != nil {
			return 0, err
		}
	}
	return len(doomed), c.subtract(ctx, tx)
}

// SetIgnoreGPC sets whether the project records visitors who signal GPC.
func (db *DB) SetIgnoreGPC(ctx context.Context, accountID int64, project string, ignore bool) error {
	return db.setProject(ctx, accountID, project, "ignore_gpc", ignore)
}

// viewCursor is a page's cursor: the last view's time and id, base 36.
func viewCursor(ts, id int64) string {
	return strconv.FormatInt(ts, 36) + "." + strconv.FormatInt(id, 36)
}

func parseViewCursor(s string) (ts, id int64, err error) {
	a, b, ok := strings.Cut(s, ".")
	if ok {
		ts, err = strconv.ParseInt(a, 36, 64)
		if err == nil {
			id, err = strconv.ParseInt(b, 36, 64)
		}
	}
	if !ok || err != nil || ts < 0 || id < 0 || strings.HasPrefix(a, "+") || strings.HasPrefix(b, "+") {
		var p tidings.Problems
		p.Add("before", "cursor", "is not a cursor of a page of views")
		return 0, 0, p.Err()
	}
	return ts, id, nil
}

// ListPageViews returns page views newest first, by the project's index of views or
// the user's.
func (db *DB) ListPageViews(ctx context.Context, accountID int64, q tidings.PageViewQuery) (*tidings.PageViewPage, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = tidings.DefaultPageViews
	}
	limit = min(limit, tidings.MaxPageViewsRead)
	page := &tidings.PageViewPage{Views: []tidings.PageView{}}
	var sb strings.Builder
	sb.WriteString(`SELECT v.id, v.ts, u.user_id, pt.text, coalesce(tt.text, ''), coalesce(rt.text, ''), v.entry
		FROM page_views v JOIN people u ON u.id = v.person_ref AND u.project_id = v.project_id
		JOIN page_texts pt ON pt.id = v.path LEFT JOIN page_texts tt ON tt.id = v.title LEFT JOIN page_texts rt ON rt.id = v.referrer
		WHERE `)
	var args []any
	if q.UserID != "" {
		var ref int64
		err := db.read.QueryRowContext(ctx, `SELECT id FROM people WHERE project_id = ? AND user_id = ?`, p.ID, q.UserID).Scan(&ref)
		if errors.Is(err, sql.ErrNoRows) {
			return page, nil
		}
		if err != nil {
			return nil, err
		}
		sb.WriteString(`v.person_ref = ? AND v.project_id = ?`)
		args = append(args, ref, p.ID)
	} else {
		sb.WriteString(`v.project_id = ?`)
		args = append(args, p.ID)
	}
	if !q.Since.IsZero() {
		sb.WriteString(` AND v.ts >= ?`)
		args = append(args, ms(q.Since))
	}
	if !q.Until.IsZero() {
		sb.WriteString(` AND v.ts < ?`)
		args = append(args, ms(q.Until))
	}
	if q.Before != "" {
		ts, id, err := parseViewCursor(q.Before)
		if err != nil {
			return nil, err
		}
		sb.WriteString(` AND (v.ts, v.id) < (?, ?)`)
		args = append(args, ts, id)
	}
	sb.WriteString(` ORDER BY v.ts DESC, v.id DESC LIMIT ?`)
	args = append(args, limit+1)
	rows, err := db.read.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lastID, lastTS int64
	for rows.Next() {
		if len(page.Views) == limit {
			page.Next = viewCursor(lastTS, lastID)
			break
		}
		var v tidings.PageView
		if err := rows.Scan(&lastID, &lastTS, &v.UserID, &v.Path, &v.Title, &v.Referrer, &v.Entry); err != nil {
			return nil, err
		}
		v.Timestamp = fromMS(lastTS)
		page.Views = append(page.Views, v)
	}
	return page, rows.Err()
}

// statsDays is the query's range in unix days, or EValidation.
func statsDays(q tidings.PageStatsQuery) (from, to int64, err error) {
	from, to = floorDiv(ms(q.From), msPerDay), floorDiv(ms(q.To), msPerDay)
	if to <= from || to-from > tidings.MaxPageStatsDays {
		var p tidings.Problems
		p.Add("to", "range", "must be 1 to %d days after from", tidings.MaxPageStatsDays)
		return 0, 0, p.Err()
	}
	return from, to, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// PageStats answers the Pages view from the daily counts.
func (db *DB) PageStats(ctx context.Context, accountID int64, q tidings.PageStatsQuery) (*tidings.PageStats, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	from, to, err := statsDays(q)
	if err != nil {
		return nil, err
	}
	// One read transaction: the days and the lists are of the same views.
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	st := &tidings.PageStats{Days: make([]tidings.PageDay, 0, to-from)}
	for d := from; d < to; d++ {
		st.Days = append(st.Days, tidings.PageDay{Day: fromMS(d * msPerDay)})
	}
	rows, err := tx.QueryContext(ctx, `SELECT day, views, entries, users FROM page_days WHERE project_id = ? AND day >= ? AND day < ?`, p.ID, from, to)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var day, views, entries, users int64
		if err := rows.Scan(&day, &views, &entries, &users); err != nil {
			rows.Close()
			return nil, err
		}
		st.Days[day-from].Views, st.Days[day-from].Users = views, users
		st.Views += views
		st.Entries += entries
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if st.Views == 0 {
		st.TopPages, st.TopEntries, st.TopReferrers = []tidings.PageCount{}, []tidings.PageCount{}, []tidings.PageCount{}
		return st, nil
	}
	top := func(table, ref, count string) ([]tidings.PageCount, error) {
		return topCounts(ctx, tx, `SELECT t.text, s.n FROM (SELECT `+ref+` AS ref, sum(`+count+`) AS n FROM `+table+`
			WHERE project_id = ? AND day >= ? AND day < ? GROUP BY 1) s JOIN page_texts t ON t.id = s.ref AND t.project_id = ?
			WHERE s.n > 0 ORDER BY s.n DESC, t.text LIMIT ?`, p.ID, from, to, p.ID, tidings.TopPagesShown)
	}
	if st.TopPages, err = top("page_path_days", "path", "views"); err != nil {
		return nil, err
	}
	if st.TopEntries, err = top("page_path_days", "path", "entries"); err != nil {
		return nil, err
	}
	if st.TopReferrers, err = top("page_referrer_days", "host", "entries"); err != nil {
		return nil, err
	}
	return st, nil
}

func topCounts(ctx context.Context, r reader, query string, args ...any) ([]tidings.PageCount, error) {
	rows, err := r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []tidings.PageCount{}
	for rows.Next() {
		var c tidings.PageCount
		if err := rows.Scan(&c.Value, &c.Views); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// sessionsOf counts the sessions of the user person (an SQL expression) from its
// activity minutes: a minute more than SessionGapMinutes after the one before starts
// one (tidings.CountSessions), in one pass over the user's rows.
func sessionsOf(person string) string {
	return `SELECT count(*) FROM (SELECT minute - lag(minute) OVER (ORDER BY minute) AS gap
	FROM user_minutes WHERE person_ref = ` + person + `) WHERE gap IS NULL OR gap > ` + strconv.Itoa(tidings.SessionGapMinutes)
}

var (
	sqlSessions       = sessionsOf("?")
	sqlSessionsByUser = sessionsOf("(SELECT id FROM people WHERE project_id = ? AND user_id = ?)")
)

// sessions counts the sessions of the project's user.
func (db *DB) sessions(ctx context.Context, project int64, userID string) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, sqlSessionsByUser, project, userID).Scan(&n)
	return n, err
}

// UserActivity returns a user's sessions, activity by day since since, and top pages.
func (db *DB) UserActivity(ctx context.Context, accountID int64, project, userID string, since time.Time) (*tidings.Activity, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var ref int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM people WHERE project_id = ? AND user_id = ?`, p.ID, userID).Scan(&ref)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.PersonNotFound(project, userID)
	}
	if err != nil {
		return nil, err
	}
	a := &tidings.Activity{Days: []tidings.ActivityDay{}}
	if err := tx.QueryRowContext(ctx, sqlSessions, ref).Scan(&a.Sessions); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT minute / 1440, sum(events), sum(views) FROM user_minutes
		WHERE person_ref = ? AND minute >= ? GROUP BY 1 ORDER BY 1`, ref, floorDiv(ms(since), msPerMinute))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var day int64
		var d tidings.ActivityDay
		if err := rows.Scan(&day, &d.Events, &d.Views); err != nil {
			rows.Close()
			return nil, err
		}
		d.Day = fromMS(day * msPerDay)
		a.Days = append(a.Days, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	a.TopPages, err = topCounts(ctx, tx, `SELECT t.text, c.views FROM page_person_paths c JOIN page_texts t ON t.id = c.path AND t.project_id = ?
		WHERE c.person_ref = ? ORDER BY c.views DESC, t.text LIMIT ?`, p.ID, ref, tidings.TopPagesShown)
	if err != nil {
		return nil, err
	}
	return a, nil
}
