package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// Members' digests (issue 39): one row of member_digests per member and project with a
// digest; DigestOff is no row. last_period is the end of the last period queued, which
// ClaimDigest moves forward with the job, so that a period is mailed once whichever
// instance's scheduler sees it first.

// SetDigest saves a member's digest of a project; DigestOff deletes it. A change of
// frequency keeps last_period: a period that ends at or before it is not mailed again.
func (db *DB) SetDigest(ctx context.Context, accountID, userID int64, project, every string) error {
	every, err := tidings.ParseDigest(every)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx pgx.Tx) error {
		if err := memberOf(ctx, tx, accountID, userID); err != nil {
			return err
		}
		pid, _, err := projectChannel(ctx, tx, accountID, project, "")
		if err != nil {
			return err
		}
		if every == tidings.DigestOff {
			_, err = tx.Exec(ctx, `DELETE FROM member_digests WHERE user_id = $1 AND project_id = $2`, userID, pid)
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO member_digests (account_id, user_id, project_id, every) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id, project_id) DO UPDATE SET every = excluded.every`, accountID, userID, pid, every)
		return err
	})
}

// MemberDigests returns a member's digests by project name.
func (db *DB) MemberDigests(ctx context.Context, accountID, userID int64) (map[string]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.name, d.every FROM member_digests d JOIN projects p ON p.id = d.project_id
		WHERE d.user_id = $1 AND d.account_id = $2 AND p.account_id = $2`, userID, accountID)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var project, every string
		if err := rows.Scan(&project, &every); err != nil {
			return nil, mapErr(err)
		}
		out[project] = every
	}
	return out, mapErr(rows.Err())
}

// ListDigests returns every digest of every account with what the scheduler needs:
// the member's email and time zone ("" without preferences) and the project's name.
// The joins keep out a row whose user or project is another account's.
func (db *DB) ListDigests(ctx context.Context) ([]*tidings.DigestPref, error) {
	return orNil(query(ctx, db.pool, func(r pgx.Row) (*tidings.DigestPref, error) {
		p := &tidings.DigestPref{}
		var last int64
		err := r.Scan(&p.AccountID, &p.UserID, &p.Email, &p.Project, &p.Every, &p.TimeZone, &last)
		if last > 0 {
			p.LastPeriod = fromMS(last)
		}
		return p, err
	}, `SELECT d.account_id, d.user_id, u.email, p.name, d.every, coalesce(n.time_zone, ''), d.last_period
		FROM member_digests d JOIN users u ON u.id = d.user_id AND u.account_id = d.account_id
		JOIN projects p ON p.id = d.project_id AND p.account_id = d.account_id
		LEFT JOIN notify_prefs n ON n.user_id = d.user_id
		ORDER BY d.account_id, d.user_id, p.name COLLATE "C"`))
}

// ClaimDigest moves the digest's last_period to periodEnd and adds job, in one
// transaction; false when the period (or a later one) was claimed already or the
// digest is gone. Of two instances claiming at once, the second's UPDATE waits for the
// first's row lock, then finds last_period moved and updates nothing.
func (db *DB) ClaimDigest(ctx context.Context, p *tidings.DigestPref, periodEnd time.Time, job *tidings.Delivery) (bool, error) {
	claimed := false
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		claimed = false
		tag, err := tx.Exec(ctx, `UPDATE member_digests d SET last_period = $4 FROM projects p
			WHERE d.user_id = $2 AND d.account_id = $1 AND p.id = d.project_id AND p.account_id = $1 AND p.name = $3
			  AND d.last_period < $4`, p.AccountID, p.UserID, p.Project, ms(periodEnd))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		claimed = true
		j := *job
		if j.AccountID == 0 {
			j.AccountID = p.AccountID
		}
		if j.CreatedAt.IsZero() {
			j.CreatedAt = db.stamp()
		}
		if j.NextAt.IsZero() {
			j.NextAt = periodEnd
		}
		return insertDelivery(ctx, tx, &j)
	})
	if err != nil {
		return false, mapErr(err)
	}
	if claimed {
		db.notifyOutbox()
	}
	return claimed, nil
}
