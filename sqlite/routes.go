package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

var _ tidings.RouteStore = (*DB)(nil)

// Members' routes and digests, and projects' escalation (issue 39). A member's routes
// are rows of member_routes (channel_id NULL: the project's choice); a member who chose
// nothing has none. Digests are rows of member_digests; off has none. Both go with
// their member, project and channel (foreign keys), and every read joins the account.

// memberTarget resolves the account's user, project and (when not "") channel of a
// member's choice, in tx: ENotFound for a user of no account or of another,
// EProjectNotFound, EChannelNotFound. The channel's id is 0 for the project's choice.
func memberTarget(ctx context.Context, tx *sql.Tx, accountID, userID int64, project, channel string) (projectID, channelID int64, err error) {
	var member bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = ? AND account_id = ?)`,
		userID, accountID).Scan(&member); err != nil {
		return 0, 0, err
	}
	if !member {
		return 0, 0, notAMember(userID)
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE account_id = ? AND name = ?`, accountID, project).Scan(&projectID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, tidings.ProjectNotFound(project)
	}
	if err != nil || channel == "" {
		return projectID, 0, err
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM channels WHERE project_id = ? AND name = ?`, projectID, channel).Scan(&channelID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, tidings.ChannelNotFound(project, channel)
	}
	return projectID, channelID, err
}

// notAMember is the error for a user id that is no member of the account. It names
// the id only: the user may be another account's, whose email is not this one's to see.
func notAMember(userID int64) error {
	return tidings.Errorf(tidings.ENotFound, "no user %d in the account", userID)
}

// SetRoutes saves a member's routes for a project (channel "") or one of its channels;
// r nil forgets the choice. Checks and write are one transaction.
func (db *DB) SetRoutes(ctx context.Context, accountID, userID int64, project, channel string, r *tidings.Routes) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	projectID, channelID, err := memberTarget(ctx, tx, accountID, userID, project, channel)
	if err != nil {
		return err
	}
	// ifnull(channel_id, 0) is member_routes_one's key: the lookup is by that index.
	if _, err := tx.ExecContext(ctx, `DELETE FROM member_routes WHERE user_id = ? AND project_id = ? AND ifnull(channel_id, 0) = ?`,
		userID, projectID, channelID); err != nil {
		return err
	}
	if r != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO member_routes (account_id, user_id, project_id, channel_id, push, email)
			VALUES (?, ?, ?, ?, ?, ?)`, accountID, userID, projectID, nullID(channelID), r.Push, r.Email); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AccountRoutes returns every saved choice of the account's members, by member,
// project and channel (the project's first).
func (db *DB) AccountRoutes(ctx context.Context, accountID int64) ([]*tidings.MemberRoute, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT r.user_id, p.name, coalesce(c.name, ''), r.push, r.email
		FROM member_routes r JOIN projects p ON p.id = r.project_id AND p.account_id = r.account_id
		LEFT JOIN channels c ON c.id = r.channel_id
		WHERE r.account_id = ? AND (r.channel_id IS NULL OR c.project_id = r.project_id)
		ORDER BY r.user_id, p.name, coalesce(c.name, '')`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.MemberRoute{}
	for rows.Next() {
		m := &tidings.MemberRoute{}
		if err := rows.Scan(&m.UserID, &m.Project, &m.Channel, &m.Routes.Push, &m.Routes.Email); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SetDigest saves a member's digest of a project; DigestOff deletes it. A change of
// frequency keeps the end of the last period queued, so no period is sent twice.
func (db *DB) SetDigest(ctx context.Context, accountID, userID int64, project, every string) error {
	every, err := tidings.ParseDigest(every)
	if err != nil {
		return err
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	projectID, _, err := memberTarget(ctx, tx, accountID, userID, project, "")
	if err != nil {
		return err
	}
	if every == tidings.DigestOff {
		_, err = tx.ExecContext(ctx, `DELETE FROM member_digests WHERE user_id = ? AND project_id = ?`, userID, projectID)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO member_digests (account_id, user_id, project_id, every) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, project_id) DO UPDATE SET every = excluded.every`, accountID, userID, projectID, every)
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// MemberDigests returns a member's digests by project name.
func (db *DB) MemberDigests(ctx context.Context, accountID, userID int64) (map[string]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT p.name, d.every FROM member_digests d
		JOIN projects p ON p.id = d.project_id AND p.account_id = d.account_id
		WHERE d.user_id = ? AND d.account_id = ?`, userID, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var project, every string
		if err := rows.Scan(&project, &every); err != nil {
			return nil, err
		}
		out[project] = every
	}
	return out, rows.Err()
}

// ListDigests returns every digest of every account with what the scheduler needs: the
// member's email and time zone ("" without notification settings) and the project's
// name. It reads the whole table: one row per member and project that chose a digest.
func (db *DB) ListDigests(ctx context.Context) ([]*tidings.DigestPref, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT d.account_id, d.user_id, u.email, p.name, d.every,
			coalesce(n.time_zone, ''), d.last_period
		FROM member_digests d
		JOIN users u ON u.id = d.user_id AND u.account_id = d.account_id
		JOIN projects p ON p.id = d.project_id AND p.account_id = d.account_id
		LEFT JOIN notify_prefs n ON n.user_id = d.user_id
		ORDER BY d.account_id, d.user_id, p.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*tidings.DigestPref
	for rows.Next() {
		p := &tidings.DigestPref{}
		var last int64
		if err := rows.Scan(&p.AccountID, &p.UserID, &p.Email, &p.Project, &p.Every, &p.TimeZone, &last); err != nil {
			return nil, err
		}
		if last != 0 {
			p.LastPeriod = fromMS(last)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ClaimDigest moves the digest's last period to periodEnd, only forward, and adds job,
// in one transaction: of two claims of one period (two servers, or a scheduler that
// ran twice) one adds the job and the other finds nothing to update.
func (db *DB) ClaimDigest(ctx context.Context, p *tidings.DigestPref, periodEnd time.Time, job *tidings.Delivery) (bool, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE member_digests SET last_period = ?1
		WHERE user_id = ?2 AND account_id = ?3 AND last_period < ?1
		  AND project_id = (SELECT id FROM projects WHERE account_id = ?3 AND name = ?4)`,
		ms(periodEnd), p.UserID, p.AccountID, p.Project)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	job.AccountID = p.AccountID // the job is the digest's account's, whatever it said
	if job.CreatedAt.IsZero() {
		job.CreatedAt = db.stamp()
	}
	if job.NextAt.IsZero() {
		job.NextAt = job.CreatedAt
	}
	if err := insertDelivery(ctx, tx, job); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	db.notifyOutbox()
	return true, nil
}

// SetEscalation sets the project's escalation delay, kept in whole seconds.
func (db *DB) SetEscalation(ctx context.Context, accountID int64, project string, after time.Duration) error {
	if err := tidings.CheckEscalateAfter(after); err != nil {
		return err
	}
	return db.setProject(ctx, accountID, project, "escalate_after", int64(after/time.Second))
}
