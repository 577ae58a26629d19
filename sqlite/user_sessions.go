package sqlite

import (
	"context"
	"database/sql"

	"github.com/tidings-dev/tidings"
)

// A user's sessions (tidings.CountSessions over its activity minutes) are kept in
// people.sessions: counting them when a profile is read took 200 ms for a user of
// 100,000 views. A minute starts a session when no minute of the user is less than
// SessionGapMinutes+1 before it; so a minute's row, created or deleted, changes the
// count by what it starts, and by what its next minute starts with and without it.
// Its neighbours are two seeks of the primary key, paid only when a row is created
// or deleted, not when a minute's counts grow.

const (
	// sqlAddMinute adds to a user's minute and answers its activity: as much as was
	// added means the row is new.
	sqlAddMinute = `INSERT INTO user_minutes (person_ref, minute, events, views) VALUES (?, ?, ?, ?)
		ON CONFLICT (person_ref, minute) DO UPDATE SET events = events + excluded.events, views = views + excluded.views
		RETURNING events + views`
	// sqlMinuteNeighbours is the user's minutes before and after one (NULL: none).
	sqlMinuteNeighbours = `SELECT (SELECT max(minute) FROM user_minutes WHERE person_ref = ?1 AND minute < ?2),
		(SELECT min(minute) FROM user_minutes WHERE person_ref = ?1 AND minute > ?2)`
	sqlCountSessions = `UPDATE people SET sessions = sessions + ? WHERE id = ?`
)

var sessionStatements = []string{sqlAddMinute, sqlMinuteNeighbours, sqlCountSessions}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type execQuerier interface {
	rowQuerier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// sessionCounts are changes of users' sessions (by people.id), written once by write.
type sessionCounts map[int64]int64

// startsSession: a minute whose previous one (if any) is more than the gap before it.
func startsSession(prev sql.NullInt64, m int64) int64 {
	if !prev.Valid || m-prev.Int64 > tidings.SessionGapMinutes {
		return 1
	}
	return 0
}

// minuteSessions is what minute m adds to its user's sessions between its neighbours.
func minuteSessions(prev sql.NullInt64, m int64, next sql.NullInt64) int64 {
	d := startsSession(prev, m)
	if next.Valid {
		d += startsSession(sql.NullInt64{Int64: m, Valid: true}, next.Int64) - startsSession(prev, next.Int64)
	}
	return d
}

// changed counts minute m of user ref, just created (sign 1) or deleted (-1).
func (s sessionCounts) changed(ctx context.Context, q rowQuerier, ref, m, sign int64) error {
	var prev, next sql.NullInt64
	if err := q.QueryRowContext(ctx, sqlMinuteNeighbours, ref, m).Scan(&prev, &next); err != nil {
		return err
	}
	s[ref] += sign * minuteSessions(prev, m, next)
	return nil
}

// addMinute adds events and views to a user's minute, counting its sessions when the
// minute is new.
func (s sessionCounts) addMinute(ctx context.Context, q rowQuerier, ref, minute, events, views int64) error {
	var total int64
	if err := q.QueryRowContext(ctx, sqlAddMinute, ref, minute, events, views).Scan(&total); err != nil {
		return err
	}
	if total == events+views {
		return s.changed(ctx, q, ref, minute, 1)
	}
	return nil
}

// takeMinute takes events and views from a user's minute, deleting the row when no
// activity is left (a session may split there).
func (s sessionCounts) takeMinute(ctx context.Context, q execQuerier, ref, minute, events, views int64) error {
	var left int64
	err := q.QueryRowContext(ctx, `UPDATE user_minutes SET events = events - ?, views = views - ? WHERE person_ref = ? AND minute = ?
		RETURNING events + views`, events, views, ref, minute).Scan(&left)
	if err == sql.ErrNoRows {
		return nil // no row to take from: the check names that
	}
	if err != nil || left > 0 {
		return err
	}
	return s.dropMinute(ctx, q, ref, minute)
}

// dropMinute deletes a minute's row (its activity is gone) and counts what that does
// to the user's sessions.
func (s sessionCounts) dropMinute(ctx context.Context, q execQuerier, ref, minute int64) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM user_minutes WHERE person_ref = ? AND minute = ?`, ref, minute); err != nil {
		return err
	}
	return s.changed(ctx, q, ref, minute, -1)
}

// write adds the changes to the users' rows.
func (s sessionCounts) write(ctx context.Context, q execQuerier) error {
	for ref, d := range s {
		if d == 0 {
			continue
		}
		if _, err := q.ExecContext(ctx, sqlCountSessions, d, ref); err != nil {
			return err
		}
	}
	return nil
}
