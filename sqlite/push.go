package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

const pushColumns = `id, account_id, user_id, endpoint, p256dh, auth, name, browser, created_at, last_success_at FROM push_subscriptions`

func scanPush(s scanner) (*tidings.PushSubscription, error) {
	p := &tidings.PushSubscription{}
	var created int64
	var success sql.NullInt64
	if err := s.Scan(&p.ID, &p.AccountID, &p.UserID, &p.Endpoint, &p.P256dh, &p.Auth, &p.Name, &p.Browser, &created, &success); err != nil {
		return nil, err
	}
	p.CreatedAt, p.LastSuccessAt = fromMS(created), fromNullMS(success)
	return p, nil
}

func (db *DB) queryPushes(ctx context.Context, where string, args ...any) ([]*tidings.PushSubscription, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+pushColumns+` WHERE `+where+` ORDER BY created_at, rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.PushSubscription{}
	for rows.Next() {
		p, err := scanPush(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SavePushSubscription stores s, or updates the subscription with its endpoint.
func (db *DB) SavePushSubscription(ctx context.Context, s *tidings.PushSubscription) (bool, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var id string
	var owner int64
	err = tx.QueryRowContext(ctx, `SELECT id, user_id FROM push_subscriptions WHERE endpoint = ?`, s.Endpoint).Scan(&id, &owner)
	if err == nil {
		if owner != s.UserID {
			return false, tidings.EndpointTaken()
		}
		s.ID = id
		if _, err := tx.ExecContext(ctx, `UPDATE push_subscriptions SET p256dh = ?, auth = ?,
			name = CASE WHEN ? = '' THEN name ELSE ? END, browser = ? WHERE id = ?`,
			s.P256dh, s.Auth, s.Name, s.Name, s.Browser, id); err != nil {
			return false, err
		}
		return false, tx.Commit()
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM push_subscriptions WHERE user_id = ?`, s.UserID).Scan(&n); err != nil {
		return false, err
	}
	if n >= tidings.MaxDevicesPerUser {
		return false, tidings.TooManyDevices(n)
	}
	if s.ID == "" {
		s.ID = tidings.NewID("dev_")
	}
	s.CreatedAt = db.stamp()
	if _, err := tx.ExecContext(ctx, `INSERT INTO push_subscriptions (id, account_id, user_id, endpoint, p256dh, auth, name, browser, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, s.AccountID, s.UserID, s.Endpoint, s.P256dh, s.Auth, s.Name, s.Browser, ms(s.CreatedAt)); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// ListPushSubscriptions returns the user's devices.
func (db *DB) ListPushSubscriptions(ctx context.Context, userID int64) ([]*tidings.PushSubscription, error) {
	return db.queryPushes(ctx, `user_id = ?`, userID)
}

// AccountPushSubscriptions returns the devices of the account's members.
func (db *DB) AccountPushSubscriptions(ctx context.Context, accountID int64) ([]*tidings.PushSubscription, error) {
	return db.queryPushes(ctx, `account_id = ?`, accountID)
}

// FindPushSubscription returns a device by ID.
func (db *DB) FindPushSubscription(ctx context.Context, id string) (*tidings.PushSubscription, error) {
	p, err := scanPush(db.read.QueryRowContext(ctx, `SELECT `+pushColumns+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.ErrNoSuchDevice
	}
	return p, err
}

func affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.ErrNoSuchDevice
	}
	return nil
}

// RenamePushSubscription renames one of the user's devices.
func (db *DB) RenamePushSubscription(ctx context.Context, userID int64, id, name string) error {
	return affected(db.write.ExecContext(ctx, `UPDATE push_subscriptions SET name = ? WHERE id = ? AND user_id = ?`, name, id, userID))
}

// DeletePushSubscription removes a device.
func (db *DB) DeletePushSubscription(ctx context.Context, userID int64, id string) error {
	if userID == 0 {
		return affected(db.write.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE id = ?`, id))
	}
	return affected(db.write.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE id = ? AND user_id = ?`, id, userID))
}

// PushDelivered records a delivery's success.
func (db *DB) PushDelivered(ctx context.Context, id string, at time.Time) error {
	return db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE push_subscriptions SET last_success_at = ? WHERE id = ?`, ms(at), id)
		return err
	})
}

// NotifyPrefs returns the user's preferences.
func (db *DB) NotifyPrefs(ctx context.Context, userID int64) (*tidings.NotifyPrefs, error) {
	p := &tidings.NotifyPrefs{}
	var muted, urgentOnly string
	err := db.read.QueryRowContext(ctx, `SELECT muted, urgent_only, quiet_start, quiet_end, time_zone FROM notify_prefs WHERE user_id = ?`, userID).
		Scan(&muted, &urgentOnly, &p.QuietStart, &p.QuietEnd, &p.TimeZone)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	return p, errors.Join(json.Unmarshal([]byte(muted), &p.Muted), json.Unmarshal([]byte(urgentOnly), &p.UrgentOnly))
}

// AccountNotifyPrefs returns the saved preferences of the account's users.
func (db *DB) AccountNotifyPrefs(ctx context.Context, accountID int64) (map[int64]*tidings.NotifyPrefs, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT n.user_id, n.muted, n.urgent_only, n.quiet_start, n.quiet_end, n.time_zone
		FROM notify_prefs n JOIN users u ON u.id = n.user_id WHERE u.account_id = ?`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]*tidings.NotifyPrefs{}
	for rows.Next() {
		p := &tidings.NotifyPrefs{}
		var id int64
		var muted, urgentOnly string
		if err := rows.Scan(&id, &muted, &urgentOnly, &p.QuietStart, &p.QuietEnd, &p.TimeZone); err != nil {
			return nil, err
		}
		if err := errors.Join(json.Unmarshal([]byte(muted), &p.Muted), json.Unmarshal([]byte(urgentOnly), &p.UrgentOnly)); err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, rows.Err()
}

// SetNotifyPrefs saves the user's preferences.
func (db *DB) SetNotifyPrefs(ctx context.Context, userID int64, p *tidings.NotifyPrefs) error {
	muted, _ := json.Marshal(append([]string{}, p.Muted...))
	urgentOnly, _ := json.Marshal(append([]string{}, p.UrgentOnly...))
	_, err := db.write.ExecContext(ctx, `INSERT INTO notify_prefs (user_id, muted, urgent_only, quiet_start, quiet_end, time_zone) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET muted = excluded.muted, urgent_only = excluded.urgent_only, quiet_start = excluded.quiet_start,
		  quiet_end = excluded.quiet_end, time_zone = excluded.time_zone`, userID, string(muted), string(urgentOnly), p.QuietStart, p.QuietEnd, p.TimeZone)
	return err
}

const sqlRecordPush = `INSERT INTO push_records (event_id, subscription_id, account_id, user_id, status, at, detail)
	SELECT ?, ?, account_id, user_id, ?, ?, ? FROM push_subscriptions WHERE id = ?
	ON CONFLICT (event_id, subscription_id) DO UPDATE SET status = excluded.status, at = excluded.at, detail = excluded.detail`

// sqlRecordMail keeps what became of an event's mail to a member (tidings.MailTarget).
const sqlRecordMail = `INSERT INTO push_records (event_id, subscription_id, account_id, user_id, status, at, detail)
	SELECT ?, ?, account_id, id, ?, ?, ? FROM users WHERE id = ?
	ON CONFLICT (event_id, subscription_id) DO UPDATE SET status = excluded.status, at = excluded.at, detail = excluded.detail`

// sqlUpdateRecord settles the record of a mail whose member is gone: sqlRecordMail
// finds no user to take the account from, and the record the mail was queued with
// must not say "being sent" forever.
const sqlUpdateRecord = `UPDATE push_records SET status = ?, at = ?, detail = ? WHERE event_id = ? AND subscription_id = ?`

func recordPushes(ctx context.Context, x execer, records []*tidings.PushRecord) error {
	for _, r := range records {
		detail := tidings.RecordDetail(r.Detail)
		uid, mail := tidings.MailTargetUser(r.SubscriptionID)
		q, target := sqlRecordPush, any(r.SubscriptionID)
		if mail {
			q, target = sqlRecordMail, uid
		}
		res, err := x.ExecContext(ctx, q, r.EventID, r.SubscriptionID, r.Status, ms(r.At), detail, target)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 && mail {
			if _, err := x.ExecContext(ctx, sqlUpdateRecord, r.Status, ms(r.At), detail, r.EventID, r.SubscriptionID); err != nil {
				return err
			}
		}
	}
	return nil
}

// RecordPushes keeps what became of events for devices.
func (db *DB) RecordPushes(ctx context.Context, records []*tidings.PushRecord) error {
	return db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error { return recordPushes(ctx, db.preparedIn(tx), records) })
}

// EventPushes returns what became of one event.
func (db *DB) EventPushes(ctx context.Context, accountID int64, eventID string) ([]*tidings.PushRecord, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT event_id, subscription_id, user_id, status, at, detail FROM push_records
		WHERE account_id = ? AND event_id = ? ORDER BY at`, accountID, eventID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.PushRecord{}
	for rows.Next() {
		r := &tidings.PushRecord{}
		var at int64
		if err := rows.Scan(&r.EventID, &r.SubscriptionID, &r.UserID, &r.Status, &at, &r.Detail); err != nil {
			return nil, err
		}
		r.At = fromMS(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// CountPushes counts the user's records of a status since a time.
func (db *DB) CountPushes(ctx context.Context, userID int64, status string, since time.Time) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(DISTINCT event_id) FROM push_records WHERE user_id = ? AND status = ? AND at >= ?`,
		userID, status, ms(since)).Scan(&n)
	return n, err
}

// RecordedEvents returns the events of the user's records of one target with a
// status since a time, oldest first, at most limit, and how many in all.
func (db *DB) RecordedEvents(ctx context.Context, userID int64, target, status string, since time.Time, limit int) ([]string, int, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT event_id, count(*) OVER () FROM push_records
		WHERE user_id = ? AND status = ? AND at >= ? AND subscription_id = ? ORDER BY at, event_id LIMIT ?`,
		userID, status, ms(since), target, max(limit, 1))
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var ids []string
	total := 0
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &total); err != nil {
			return nil, 0, err
		}
		if len(ids) < limit {
			ids = append(ids, id)
		}
	}
	return ids, total, rows.Err()
}

// Setting returns a server setting.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", tidings.SettingNotFound(key)
	}
	return v, err
}

// SetSettingOnce stores a setting unless it exists and returns the stored value.
func (db *DB) SetSettingOnce(ctx context.Context, key, value string) (string, error) {
	if _, err := db.write.ExecContext(ctx, `INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)`, key, value); err != nil {
		return "", err
	}
	var v string
	err := db.write.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	return v, err
}
