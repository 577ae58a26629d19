package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

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

var pageStatements = []string{sqlFindPageText, sqlCreatePageText, sqlViewPerson,
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
	sessions := sessionCounts{}
	for k, n := range c.minutes {
		if err := sessions.addMinute(ctx, tx, k.ref, k.minute, 0, n); err != nil {
			return err
		}
	}
	if err := sessions.write(ctx, tx); err != nil {
		return err
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

// SetIgnoreGPC sets whether the project records visitors who signal GPC.
func (db *DB) SetIgnoreGPC(ctx context.Context, accountID int64, project string, ignore bool) error {
	return db.setProject(ctx, accountID, project, "ignore_gpc", ignore)
}
