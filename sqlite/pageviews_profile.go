package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

// A user's profile beyond its row: sessions, activity by day, top pages (UserActivity).

// The queries of a profile's activity: its days since a minute, and its top pages.
const (
	// sqlActivitySpan is the days of the user's first minute since ?2 and of its last.
	sqlActivitySpan = `SELECT (SELECT min(minute) FROM user_minutes WHERE person_ref = ?1 AND minute >= ?2) / 1440,
		(SELECT max(minute) FROM user_minutes WHERE person_ref = ?1) / 1440`
	// sqlActivityDay sums the user's minutes of one day, a range of the primary key
	// (grouping all its minutes by day sorted them: 80 ms for 100,000 views over 90 days).
	sqlActivityDay = `SELECT count(*), coalesce(sum(events), 0), coalesce(sum(views), 0) FROM user_minutes
		WHERE person_ref = ? AND minute >= ? AND minute < ?`
	sqlUserTopPages = `SELECT t.text, c.views FROM page_person_paths c JOIN page_texts t ON t.id = c.path AND t.project_id = ?
		WHERE c.person_ref = ? ORDER BY c.views DESC, t.text LIMIT ?`
)

// sessions is the sessions of the project's user (user_sessions.go).
func (db *DB) sessions(ctx context.Context, project int64, userID string) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT sessions FROM people WHERE project_id = ? AND user_id = ?`, project, userID).Scan(&n)
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
	var ref, sessions int64
	err = tx.QueryRowContext(ctx, `SELECT id, sessions FROM people WHERE project_id = ? AND user_id = ?`, p.ID, userID).Scan(&ref, &sessions)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.PersonNotFound(project, userID)
	}
	if err != nil {
		return nil, err
	}
	a := &tidings.Activity{Sessions: sessions, Days: []tidings.ActivityDay{}}
	if a.Days, err = activityDays(ctx, tx, ref, floorDiv(ms(since), msPerMinute)); err != nil {
		return nil, err
	}
	a.TopPages, err = topCounts(ctx, tx, sqlUserTopPages, p.ID, ref, tidings.TopPagesShown)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// activityDays sums a user's activity per day since a minute, day by day from its
// first minute since then to its last.
func activityDays(ctx context.Context, tx *sql.Tx, ref, since int64) ([]tidings.ActivityDay, error) {
	days := []tidings.ActivityDay{}
	var first, last sql.NullInt64
	if err := tx.QueryRowContext(ctx, sqlActivitySpan, ref, since).Scan(&first, &last); err != nil || !first.Valid {
		return days, err
	}
	stmt, err := tx.PrepareContext(ctx, sqlActivityDay)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	for day := first.Int64; day <= last.Int64; day++ {
		var n int64
		d := tidings.ActivityDay{Day: fromMS(day * msPerDay)}
		if err := stmt.QueryRowContext(ctx, ref, max(day*1440, since), (day+1)*1440).Scan(&n, &d.Events, &d.Views); err != nil {
			return nil, err
		}
		if n > 0 {
			days = append(days, d)
		}
	}
	return days, nil
}
