package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tidings-dev/tidings"
)

// Retention deletes page views with everything they counted for (PurgeExpired).

// sqlExpiredViews is the oldest of a project's views older than a time.
const sqlExpiredViews = `SELECT v.id, v.person_ref, v.ts, v.path, v.entry, coalesce(r.text, '')
		FROM page_views v LEFT JOIN page_texts r ON r.id = v.referrer
		WHERE v.project_id = ? AND v.ts < ? ORDER BY v.ts, v.id LIMIT ?`

// pageDict finds texts' ids in the project's dictionary, once per purge.
type pageDict struct {
	tx      rowQuerier
	project int64
	ids     map[string]int64
}

// id is text's entry, 0 for "" or a text without one.
func (d *pageDict) id(ctx context.Context, text string) (int64, error) {
	if text == "" {
		return 0, nil
	}
	if id, ok := d.ids[text]; ok {
		return id, nil
	}
	var id int64
	err := d.tx.QueryRowContext(ctx, sqlFindPageText, d.project, text).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	d.ids[text] = id
	return id, nil
}

// subtract takes deleted views out of every count; a row that reaches 0 goes (a day
// loses a user with its last view of that user).
func (c *pageCounts) subtract(ctx context.Context, tx *sql.Tx) error {
	for ref, n := range c.people {
		if _, err := tx.ExecContext(ctx, `UPDATE people SET page_views = max(page_views - ?, 0) WHERE id = ?`, n, ref); err != nil {
			return err
		}
	}
	sessions := sessionCounts{}
	for k, n := range c.minutes {
		if err := sessions.takeMinute(ctx, tx, k.ref, k.minute, 0, n); err != nil {
			return err
		}
	}
	if err := sessions.write(ctx, tx); err != nil {
		return err
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
	rows, err := tx.QueryContext(ctx, sqlExpiredViews, project, cutoff, max)
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
			if host, err = dict.id(ctx, tidings.ReferrerHost(d.referrer)); err != nil {
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
