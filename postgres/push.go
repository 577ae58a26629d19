package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidings-dev/tidings"
)

const pushColumns = `id, account_id, user_id, endpoint, p256dh, auth, name, browser, created_at, last_success_at FROM push_subscriptions`

func scanPush(r pgx.Row) (*tidings.PushSubscription, error) {
	p := &tidings.PushSubscription{}
	var created int64
	var success *int64
	err := r.Scan(&p.ID, &p.AccountID, &p.UserID, &p.Endpoint, &p.P256dh, &p.Auth, &p.Name, &p.Browser, &created, &success)
	p.CreatedAt, p.LastSuccessAt = fromMS(created), fromNullMS(success)
	return p, err
}

func (db *DB) queryPushes(ctx context.Context, where string, args ...any) ([]*tidings.PushSubscription, error) {
	return query(ctx, db.pool, scanPush, `SELECT `+pushColumns+` WHERE `+where+` ORDER BY created_at, seq`, args...)
}

// SavePushSubscription stores s, or updates the subscription with its endpoint. The
// user's row is locked while their devices are counted, so that two instances cannot
// both add the last one allowed.
func (db *DB) SavePushSubscription(ctx context.Context, s *tidings.PushSubscription) (bool, error) {
	created := false
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, s.UserID); err != nil {
			return err
		}
		var id string
		var owner int64
		err := tx.QueryRow(ctx, `SELECT id, user_id FROM push_subscriptions WHERE endpoint = $1`, s.Endpoint).Scan(&id, &owner)
		if err == nil {
			if owner != s.UserID {
				return tidings.EndpointTaken()
			}
			s.ID = id
			_, err := tx.Exec(ctx, `UPDATE push_subscriptions SET p256dh = $1, auth = $2,
				name = CASE WHEN $3 = '' THEN name ELSE $3 END, browser = $4 WHERE id = $5`,
				s.P256dh, s.Auth, s.Name, s.Browser, id)
			return err
		}
		if !noRows(err) {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM push_subscriptions WHERE user_id = $1`, s.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= tidings.MaxDevicesPerUser {
			return tidings.TooManyDevices(n)
		}
		if s.ID == "" {
			s.ID = tidings.NewID("dev_")
		}
		s.CreatedAt = db.stamp()
		created = true
		_, err = tx.Exec(ctx, `INSERT INTO push_subscriptions (id, account_id, user_id, endpoint, p256dh, auth, name, browser, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, s.ID, s.AccountID, s.UserID, s.Endpoint, s.P256dh, s.Auth, s.Name, s.Browser, ms(s.CreatedAt))
		return err
	})
	return created && err == nil, err
}

// ListPushSubscriptions returns the user's devices.
func (db *DB) ListPushSubscriptions(ctx context.Context, userID int64) ([]*tidings.PushSubscription, error) {
	return db.queryPushes(ctx, `user_id = $1`, userID)
}

// AccountPushSubscriptions returns the devices of the account's members.
func (db *DB) AccountPushSubscriptions(ctx context.Context, accountID int64) ([]*tidings.PushSubscription, error) {
	return db.queryPushes(ctx, `account_id = $1`, accountID)
}

// FindPushSubscription returns a device by ID.
func (db *DB) FindPushSubscription(ctx context.Context, id string) (*tidings.PushSubscription, error) {
	p, err := scanPush(db.row(ctx, `SELECT `+pushColumns+` WHERE id = $1`, id))
	if err != nil {
		return nil, notFound(err, tidings.ErrNoSuchDevice)
	}
	return p, nil
}

func affected(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.ErrNoSuchDevice
	}
	return nil
}

// RenamePushSubscription renames one of the user's devices.
func (db *DB) RenamePushSubscription(ctx context.Context, userID int64, id, name string) error {
	return affected(db.exec(ctx, `UPDATE push_subscriptions SET name = $1 WHERE id = $2 AND user_id = $3`, name, id, userID))
}

// DeletePushSubscription removes a device.
func (db *DB) DeletePushSubscription(ctx context.Context, userID int64, id string) error {
	if userID == 0 {
		return affected(db.exec(ctx, `DELETE FROM push_subscriptions WHERE id = $1`, id))
	}
	return affected(db.exec(ctx, `DELETE FROM push_subscriptions WHERE id = $1 AND user_id = $2`, id, userID))
}

// PushDelivered records a delivery's success.
func (db *DB) PushDelivered(ctx context.Context, id string, at time.Time) error {
	return db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE push_subscriptions SET last_success_at = $1 WHERE id = $2`, ms(at), id)
		return err
	})
}

func scanPrefs(r pgx.Row, extra ...any) (*tidings.NotifyPrefs, error) {
	p := &tidings.NotifyPrefs{}
	var muted, urgentOnly string
	if err := r.Scan(append([]any{&muted, &urgentOnly, &p.QuietStart, &p.QuietEnd, &p.TimeZone}, extra...)...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(urgentOnly), &p.UrgentOnly); err != nil {
		return nil, err
	}
	return p, json.Unmarshal([]byte(muted), &p.Muted)
}

// NotifyPrefs returns the user's preferences.
func (db *DB) NotifyPrefs(ctx context.Context, userID int64) (*tidings.NotifyPrefs, error) {
	p, err := scanPrefs(db.row(ctx, `SELECT muted, urgent_only, quiet_start, quiet_end, time_zone FROM notify_prefs WHERE user_id = $1`, userID))
	if noRows(err) {
		return &tidings.NotifyPrefs{}, nil
	}
	return p, err
}

// AccountNotifyPrefs returns the saved preferences of the account's users.
func (db *DB) AccountNotifyPrefs(ctx context.Context, accountID int64) (map[int64]*tidings.NotifyPrefs, error) {
	type userPrefs struct {
		user int64
		p    *tidings.NotifyPrefs
	}
	list, err := query(ctx, db.pool, func(r pgx.Row) (userPrefs, error) {
		var up userPrefs
		p, err := scanPrefs(r, &up.user)
		up.p = p
		return up, err
	}, `SELECT n.muted, n.urgent_only, n.quiet_start, n.quiet_end, n.time_zone, n.user_id
		FROM notify_prefs n JOIN users u ON u.id = n.user_id WHERE u.account_id = $1`, accountID)
	if err != nil {
		return nil, err
	}
	out := map[int64]*tidings.NotifyPrefs{}
	for _, up := range list {
		out[up.user] = up.p
	}
	return out, nil
}

// SetNotifyPrefs saves the user's preferences.
func (db *DB) SetNotifyPrefs(ctx context.Context, userID int64, p *tidings.NotifyPrefs) error {
	muted, _ := json.Marshal(append([]string{}, p.Muted...))
	urgentOnly, _ := json.Marshal(append([]string{}, p.UrgentOnly...))
	_, err := db.exec(ctx, `INSERT INTO notify_prefs (user_id, muted, urgent_only, quiet_start, quiet_end, time_zone) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (user_id) DO UPDATE SET muted = excluded.muted, urgent_only = excluded.urgent_only, quiet_start = excluded.quiet_start,
		  quiet_end = excluded.quiet_end, time_zone = excluded.time_zone`, userID, string(muted), string(urgentOnly), p.QuietStart, p.QuietEnd, p.TimeZone)
	return err
}

func recordPushes(ctx context.Context, x querier, records []*tidings.PushRecord) error {
	for _, r := range records {
		detail := tidings.RecordDetail(r.Detail)
		if uid, ok := tidings.MailTargetUser(r.SubscriptionID); ok {
			// A member's mail (tidings.MailTarget): the account is the user's.
			tag, err := x.Exec(ctx, `INSERT INTO push_records (event_id, subscription_id, account_id, user_id, status, at, detail)
				SELECT $1, $2, account_id, id, $3, $4, $5 FROM users WHERE id = $6
				ON CONFLICT (event_id, subscription_id) DO UPDATE SET status = excluded.status, at = excluded.at, detail = excluded.detail`,
				r.EventID, r.SubscriptionID, r.Status, ms(r.At), detail, uid)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				// The member is gone, so there is no account to take: the record the
				// mail was queued with must still not say "being sent" forever.
				if _, err := x.Exec(ctx, `UPDATE push_records SET status = $1, at = $2, detail = $3 WHERE event_id = $4 AND subscription_id = $5`,
					r.Status, ms(r.At), detail, r.EventID, r.SubscriptionID); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := x.Exec(ctx, `INSERT INTO push_records (event_id, subscription_id, account_id, user_id, status, at, detail)
			SELECT $1, $2, account_id, user_id, $3, $4, $5 FROM push_subscriptions WHERE id = $2
			ON CONFLICT (event_id, subscription_id) DO UPDATE SET status = excluded.status, at = excluded.at, detail = excluded.detail`,
			r.EventID, r.SubscriptionID, r.Status, ms(r.At), detail); err != nil {
			return err
		}
	}
	return nil
}

// RecordPushes keeps what became of events for devices.
func (db *DB) RecordPushes(ctx context.Context, records []*tidings.PushRecord) error {
	return db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error { return recordPushes(ctx, tx, records) })
}

// EventPushes returns what became of one event.
func (db *DB) EventPushes(ctx context.Context, accountID int64, eventID string) ([]*tidings.PushRecord, error) {
	return query(ctx, db.pool, func(r pgx.Row) (*tidings.PushRecord, error) {
		rec := &tidings.PushRecord{}
		var at int64
		err := r.Scan(&rec.EventID, &rec.SubscriptionID, &rec.UserID, &rec.Status, &at, &rec.Detail)
		rec.At = fromMS(at)
		return rec, err
	}, `SELECT event_id, subscription_id, user_id, status, at, detail FROM push_records
		WHERE account_id = $1 AND event_id = $2 ORDER BY at`, accountID, eventID)
}

// CountPushes counts the user's records of a status since a time.
func (db *DB) CountPushes(ctx context.Context, userID int64, status string, since time.Time) (int, error) {
	var n int
	err := db.row(ctx, `SELECT count(DISTINCT event_id) FROM push_records WHERE user_id = $1 AND status = $2 AND at >= $3`,
		userID, status, ms(since)).Scan(&n)
	return n, err
}

// RecordedEvents returns the events of the user's records of one target with a
// status since a time, oldest first, at most limit, and how many in all.
func (db *DB) RecordedEvents(ctx context.Context, userID int64, target, status string, since time.Time, limit int) ([]string, int, error) {
	type row struct {
		id    string
		total int
	}
	rows, err := query(ctx, db.pool, func(r pgx.Row) (row, error) {
		var x row
		return x, r.Scan(&x.id, &x.total)
	}, `SELECT event_id, count(*) OVER () FROM push_records
		WHERE user_id = $1 AND status = $2 AND at >= $3 AND subscription_id = $4 ORDER BY at, event_id LIMIT $5`,
		userID, status, ms(since), target, max(limit, 1))
	if err != nil {
		return nil, 0, err
	}
	var ids []string
	total := 0
	for _, x := range rows {
		total = x.total
		if len(ids) < limit {
			ids = append(ids, x.id)
		}
	}
	return ids, total, nil
}

// Setting returns a server setting.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := db.row(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if err != nil {
		return "", notFound(err, tidings.SettingNotFound(key))
	}
	return v, nil
}

// SetSettingOnce stores a setting unless it exists and returns the stored value:
// instances starting together agree on the first one's.
func (db *DB) SetSettingOnce(ctx context.Context, key, value string) (string, error) {
	if _, err := db.exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, key, value); err != nil {
		return "", err
	}
	var v string
	err := db.row(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	return v, err
}
