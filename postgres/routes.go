package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// Members' routes (issue 39): how a project's events, or one channel's, reach a member.
// A row of member_routes is a choice (channel_id NULL: the project's); no row is
// "as the project", and for a project DefaultRoutes (tidings.RoutesFor resolves them).
// Deleting a user, project or channel deletes its rows (ON DELETE CASCADE).

// SetRoutes saves a member's routes for a project (channel "") or one channel; r nil
// forgets the choice. The user's, project's and channel's rows are held (FOR KEY
// SHARE) while the route is written: a deletion of one waits, then takes the route
// along.
func (db *DB) SetRoutes(ctx context.Context, accountID, userID int64, project, channel string, r *tidings.Routes) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		if err := memberOf(ctx, tx, accountID, userID); err != nil {
			return err
		}
		pid, cid, err := projectChannel(ctx, tx, accountID, project, channel)
		if err != nil {
			return err
		}
		if r == nil {
			_, err = tx.Exec(ctx, `DELETE FROM member_routes
				WHERE user_id = $1 AND project_id = $2 AND coalesce(channel_id, 0) = coalesce($3, 0)`, userID, pid, cid)
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO member_routes (account_id, user_id, project_id, channel_id, push, email)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (user_id, project_id, (coalesce(channel_id, 0))) DO UPDATE SET push = excluded.push, email = excluded.email`,
			accountID, userID, pid, cid, r.Push, r.Email)
		return err
	})
}

// AccountRoutes returns every saved choice of the account's members, by member,
// project and channel (the project's first). One range of member_routes_account; the
// joins check that each row's user and project are the account's.
func (db *DB) AccountRoutes(ctx context.Context, accountID int64) ([]*tidings.MemberRoute, error) {
	return orNil(query(ctx, db.pool, func(row pgx.Row) (*tidings.MemberRoute, error) {
		m := &tidings.MemberRoute{}
		return m, row.Scan(&m.UserID, &m.Project, &m.Channel, &m.Routes.Push, &m.Routes.Email)
	}, `SELECT r.user_id, p.name, coalesce(c.name, ''), r.push, r.email
		FROM member_routes r JOIN users u ON u.id = r.user_id JOIN projects p ON p.id = r.project_id
		LEFT JOIN channels c ON c.id = r.channel_id
		WHERE r.account_id = $1 AND u.account_id = $1 AND p.account_id = $1
		  AND (r.channel_id IS NULL OR c.project_id = r.project_id)
		ORDER BY r.user_id, p.name COLLATE "C", c.name COLLATE "C" NULLS FIRST`, accountID))
}

// SetEscalation sets the project's EscalateAfter (whole seconds).
func (db *DB) SetEscalation(ctx context.Context, accountID int64, project string, after time.Duration) error {
	if err := tidings.CheckEscalateAfter(after); err != nil {
		return err
	}
	return db.setProject(ctx, accountID, project, "escalate_after", int64(after/time.Second))
}

// memberOf returns ENotFound unless the user is a member of the account, and holds
// the user's row (FOR KEY SHARE) until the transaction ends.
func memberOf(ctx context.Context, tx pgx.Tx, accountID, userID int64) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM users WHERE id = $1 AND account_id = $2 FOR KEY SHARE`, userID, accountID).Scan(&one)
	if noRows(err) {
		return tidings.Errorf(tidings.ENotFound, "no user %d in the account", userID)
	}
	return err
}

// projectChannel returns the IDs of the account's project and, unless channel is "",
// of its channel (nil for none), and holds their rows (FOR KEY SHARE, which an event
// batch's locks do not conflict with) until the transaction ends: a deletion of either
// waits for the row written here and takes it along, or commits first, and then the
// row is not found here (rather than the insert failing on its foreign key).
// Errors: EProjectNotFound, EChannelNotFound.
func projectChannel(ctx context.Context, tx pgx.Tx, accountID int64, project, channel string) (int64, *int64, error) {
	var pid int64
	err := tx.QueryRow(ctx, `SELECT id FROM projects WHERE account_id = $1 AND name = $2 FOR KEY SHARE`, accountID, project).Scan(&pid)
	if noRows(err) {
		return 0, nil, tidings.ProjectNotFound(project)
	}
	if err != nil || channel == "" {
		return pid, nil, err
	}
	var cid int64
	err = tx.QueryRow(ctx, `SELECT id FROM channels WHERE project_id = $1 AND name = $2 FOR KEY SHARE`, pid, channel).Scan(&cid)
	if noRows(err) {
		return 0, nil, tidings.ChannelNotFound(project, channel)
	}
	if err != nil {
		return 0, nil, err
	}
	return pid, &cid, nil
}

var _ tidings.RouteStore = (*DB)(nil)
