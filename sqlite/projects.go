package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// projectColumns are what scanProject reads.
const projectColumns = `id, name, auto_create_channels, retention_days, insight_change_default, ignore_gpc, created_at,
	repeat_urgent_every, repeat_urgent_times, escalate_after`

func scanProject(accountID int64, r interface{ Scan(...any) error }) (*tidings.Project, error) {
	p := &tidings.Project{AccountID: accountID}
	var created, every, escalate int64
	if err := r.Scan(&p.ID, &p.Name, &p.AutoCreateChannels, &p.RetentionDays, &p.InsightChangeDefault, &p.IgnoreGPC, &created,
		&every, &p.RepeatUrgentTimes, &escalate); err != nil {
		return nil, err
	}
	p.CreatedAt = fromMS(created)
	p.RepeatUrgentEvery = time.Duration(every) * time.Second
	p.EscalateAfter = time.Duration(escalate) * time.Second
	return p, nil
}

func findProject(ctx context.Context, q querier, accountID int64, name string) (*tidings.Project, error) {
	p, err := scanProject(accountID, q.QueryRowContext(ctx, sqlFindProject, accountID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.ProjectNotFound(name)
	}
	return p, err
}

// CreateProject creates a project in the account.
func (db *DB) CreateProject(ctx context.Context, accountID int64, name string) (*tidings.Project, error) {
	if err := tidings.ValidateName("project", name); err != nil {
		return nil, err
	}
	p := &tidings.Project{AccountID: accountID, Name: name, CreatedAt: db.stamp(),
		RepeatUrgentEvery: tidings.RepeatUrgentEvery, RepeatUrgentTimes: tidings.RepeatUrgentTimes}
	err := db.write.QueryRowContext(ctx,
		`INSERT INTO projects (account_id, name, created_at) VALUES (?, ?, ?) RETURNING id`,
		accountID, name, ms(p.CreatedAt)).Scan(&p.ID)
	if isUnique(err) {
		return nil, tidings.ProjectExists(name)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// FindProject returns the account's project by name.
func (db *DB) FindProject(ctx context.Context, accountID int64, name string) (*tidings.Project, error) {
	return findProject(ctx, db.reads, accountID, name)
}

// ListProjects returns the account's projects by name.
func (db *DB) ListProjects(ctx context.Context, accountID int64) ([]*tidings.Project, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+projectColumns+` FROM projects WHERE account_id = ? ORDER BY name`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*tidings.Project
	for rows.Next() {
		p, err := scanProject(accountID, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// setProject sets one column of the account's project (column is a constant of ours).
func (db *DB) setProject(ctx context.Context, accountID int64, project, column string, value any) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE projects SET `+column+` = ? WHERE account_id = ? AND name = ?`, value, accountID, project)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err := findProject(ctx, db.reads, accountID, project)
		return err
	}
	return nil
}

// SetAutoCreateChannels switches "create channels on first event".
func (db *DB) SetAutoCreateChannels(ctx context.Context, accountID int64, project string, on bool) error {
	return db.setProject(ctx, accountID, project, "auto_create_channels", on)
}

// SetInsightChangeDefault sets what an insight update without change means.
func (db *DB) SetInsightChangeDefault(ctx context.Context, accountID int64, project, change string) error {
	if err := tidings.CheckInsightChangeDefault(change); err != nil {
		return err
	}
	return db.setProject(ctx, accountID, project, "insight_change_default", change)
}

// CreateChannel creates a channel in the account's project.
func (db *DB) CreateChannel(ctx context.Context, accountID int64, project, name string) (*tidings.Channel, error) {
	if err := tidings.ValidateName("channel", name); err != nil {
		return nil, err
	}
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	c := &tidings.Channel{ProjectID: p.ID, Project: p.Name, Name: name, CreatedAt: db.stamp()}
	err = db.write.QueryRowContext(ctx, sqlCreateChannel, p.ID, name, ms(c.CreatedAt), tidings.MaxChannelsPerProject).Scan(&c.ID)
	if isUnique(err) {
		return nil, tidings.ChannelExists(project, name)
	}
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := db.channelID(ctx, p, name); err == nil {
			return nil, tidings.ChannelExists(project, name)
		}
		return nil, tidings.ChannelLimitReached(project, name, tidings.MaxChannelsPerProject)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ListChannels returns the project's channels by name.
func (db *DB) ListChannels(ctx context.Context, accountID int64, project string) ([]*tidings.Channel, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx,
		`SELECT id, name, created_at FROM channels WHERE project_id = ? ORDER BY name`, p.ID)
	if err != nil {
		return nil, err
	}
	return scanChannels(rows, p)
}

// scanChannels reads rows of (id, name, created_at) as channels of the project p.
func scanChannels(rows *sql.Rows, p *tidings.Project) ([]*tidings.Channel, error) {
	defer rows.Close()
	var out []*tidings.Channel
	for rows.Next() {
		c := &tidings.Channel{ProjectID: p.ID, Project: p.Name}
		var created int64
		if err := rows.Scan(&c.ID, &c.Name, &created); err != nil {
			return nil, err
		}
		c.CreatedAt = fromMS(created)
		out = append(out, c)
	}
	return out, rows.Err()
}

// channelID resolves a channel of a project read from the pool.
func (db *DB) channelID(ctx context.Context, p *tidings.Project, name string) (int64, error) {
	var id int64
	err := db.read.QueryRowContext(ctx, sqlFindChannel, p.ID, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, tidings.ChannelNotFound(p.Name, name)
	}
	return id, err
}

// CountEvents returns how many events the project or channel holds.
func (db *DB) CountEvents(ctx context.Context, accountID int64, project, channel string) (int, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return 0, err
	}
	// From the hourly counts, kept with every batch of events: no event is read.
	var n int
	if channel == "" {
		err = db.read.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts
			WHERE channel_id IN (SELECT id FROM channels WHERE project_id = ?)`, p.ID).Scan(&n)
		return n, err
	}
	cid, err := db.channelID(ctx, p, channel)
	if err != nil {
		return 0, err
	}
	c, err := db.countChannel(ctx, cid)
	return int(c), err
}

// DeleteProject deletes the project; foreign keys take everything in it along, and the
// pending deliveries of its events go in the same transaction.
func (db *DB) DeleteProject(ctx context.Context, accountID int64, project string) error {
	var n int64
	err := func() error {
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		res, err := tx.ExecContext(ctx, `DELETE FROM projects WHERE account_id = ? AND name = ?`, accountID, project)
		if err != nil {
			return err
		}
		if n, _ = res.RowsAffected(); n == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, sqlDropOrphanDeliveries, accountID); err != nil {
			return err
		}
		return tx.Commit()
	}()
	db.tokensInvalidated() // tokens limited to the project went with it
	if err != nil {
		return err
	}
	if n == 0 {
		return tidings.ProjectNotFound(project)
	}
	return nil
}

// eventDeliveryKinds are the outbox's kinds whose event_id names an event (a webhook's
// test names none, nor does a quiet-hours summary or a digest), as an SQL list.
const eventDeliveryKinds = `'` + tidings.DeliverEvent + `', '` + tidings.DeliverWebhook + `', '` + tidings.DeliverPush + `', '` +
	tidings.DeliverRepeat + `', '` + tidings.DeliverAck + `', '` + tidings.DeliverPress + `', '` +
	tidings.DeliverWebhookAck + `', '` + tidings.DeliverWebhookPress + `', '` + tidings.DeliverPushAck + `', '` +
	tidings.DeliverMail + `', '` + tidings.DeliverEscalate + `'`

// sqlDropOrphanDeliveries deletes the account's pending deliveries whose event is gone:
// those of a deleted project's or channel's events, which foreign keys do not reach
// (deliveries name their event by its text id). It reads the account's outbox, which is
// small, not the events deleted.
const sqlDropOrphanDeliveries = `DELETE FROM deliveries WHERE account_id = ? AND kind IN (` + eventDeliveryKinds + `)
	AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = unhex(replace(deliveries.event_id, '-', '')))`

// DeleteChannel deletes the channel with its events and the tokens limited to it.
func (db *DB) DeleteChannel(ctx context.Context, accountID int64, project, channel string) error {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return err
	}
	// Foreign keys take the channel's events, counts and tokens along; its rows in the
	// tag index are found through the project's tags, and their counts made right.
	var gone bool
	err = db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Its events leave their rolled tags' hourly counts, read from its rows of the
		// tag index before they go.
		if _, err := tx.ExecContext(ctx, sqlChannelTagHoursGone, p.ID, channel); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, sqlDropEmptyTagHours, p.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM event_tags WHERE channel_id = (SELECT id FROM channels WHERE project_id = ?1 AND name = ?2)
			AND tag_id IN (SELECT id FROM tags WHERE project_id = ?1)`, p.ID, channel); err != nil {
			return err
		}
		// Its events leave their users' counts.
		if _, err := tx.ExecContext(ctx, `UPDATE people SET events = max(people.events - g.n, 0)
			FROM (SELECT user_id, count(*) AS n FROM events WHERE user_id != ''
				AND channel_id = (SELECT id FROM channels WHERE project_id = ?1 AND name = ?2) GROUP BY user_id) g
			WHERE people.project_id = ?1 AND people.user_id = g.user_id`, p.ID, channel); err != nil {
			return err
		}
		if err := channelMinutesGone(ctx, tx, p.ID, channel); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE project_id = ? AND name = ?`, p.ID, channel)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			gone = true
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tags SET count = (SELECT count(*) FROM event_tags WHERE tag_id = tags.id) WHERE project_id = ?`, p.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, sqlDropOrphanDeliveries, accountID)
		return err
	})
	db.tokensInvalidated() // tokens limited to the channel went with it
	if err != nil {
		return err
	}
	if gone {
		return tidings.ChannelNotFound(project, channel)
	}
	return nil
}

// channelMinutesGone takes a channel's events, about to be deleted, out of their users'
// activity minutes; a minute left without activity loses its row.
func channelMinutesGone(ctx context.Context, tx *sql.Tx, project int64, channel string) error {
	rows, err := tx.QueryContext(ctx, `UPDATE user_minutes SET events = user_minutes.events - g.n
		FROM (SELECT u.id AS ref, e.ts / 60000 AS minute, count(*) AS n FROM events e
			JOIN people u ON u.project_id = e.project_id AND u.user_id = e.user_id
			WHERE e.user_id != '' AND e.channel_id = (SELECT id FROM channels WHERE project_id = ?1 AND name = ?2) GROUP BY 1, 2) g
		WHERE user_minutes.person_ref = g.ref AND user_minutes.minute = g.minute
		RETURNING user_minutes.person_ref, user_minutes.minute, user_minutes.events + user_minutes.views`, project, channel)
	if err != nil {
		return err
	}
	var empty [][2]int64
	for rows.Next() {
		var ref, minute, left int64
		if err := rows.Scan(&ref, &minute, &left); err != nil {
			rows.Close()
			return err
		}
		if left <= 0 {
			empty = append(empty, [2]int64{ref, minute})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	sessions := sessionCounts{}
	for _, k := range empty {
		if err := sessions.dropMinute(ctx, tx, k[0], k[1]); err != nil {
			return err
		}
	}
	return sessions.write(ctx, tx)
}
