package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// CreateAccount creates an account.
func (db *DB) CreateAccount(ctx context.Context, name string) (*tidings.Account, error) {
	if err := tidings.ValidateName("account", name); err != nil {
		return nil, err
	}
	a := &tidings.Account{Name: name, CreatedAt: db.stamp()}
	err := db.row(ctx, `INSERT INTO accounts (name, created_at) VALUES ($1, $2) RETURNING id`, name, ms(a.CreatedAt)).Scan(&a.ID)
	if isUnique(err) {
		return nil, tidings.AccountExists(name)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func scanAccount(r pgx.Row) (*tidings.Account, error) {
	a := &tidings.Account{}
	var created int64
	err := r.Scan(&a.ID, &a.Name, &created)
	a.CreatedAt = fromMS(created)
	return a, err
}

// FindAccount returns the account with the given name.
func (db *DB) FindAccount(ctx context.Context, name string) (*tidings.Account, error) {
	a, err := scanAccount(db.row(ctx, `SELECT id, name, created_at FROM accounts WHERE name = $1`, name))
	if err != nil {
		return nil, notFound(err, tidings.AccountNotFound(name))
	}
	return a, nil
}

// ListAccounts returns every account, oldest first.
func (db *DB) ListAccounts(ctx context.Context) ([]*tidings.Account, error) {
	return orNil(query(ctx, db.pool, scanAccount, `SELECT id, name, created_at FROM accounts ORDER BY id`))
}

// CreateUser stores u.
func (db *DB) CreateUser(ctx context.Context, u *tidings.User) error {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = db.now().UTC()
	}
	err := db.row(ctx,
		`INSERT INTO users (account_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		u.AccountID, u.Email, u.PasswordHash, u.Role, ms(u.CreatedAt)).Scan(&u.ID)
	if isUnique(err) {
		return tidings.EmailTaken(u.Email)
	}
	return err
}

// FindUserByEmail returns the user with that email (compared without case).
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*tidings.User, error) {
	u, err := scanUser(db.row(ctx, `SELECT `+userColumns+` FROM users u WHERE lower(u.email) = lower($1)`, email))
	if err != nil {
		return nil, notFound(err, tidings.UserNotFound(email))
	}
	return u, nil
}

const projectColumns = `id, name, auto_create_channels, retention_days, insight_change_default, ignore_gpc,
	repeat_urgent_every, repeat_urgent_times, escalate_after, created_at`

const sqlFindProject = `SELECT ` + projectColumns + ` FROM projects WHERE account_id = $1 AND name = $2`

const sqlFindChannel = `SELECT id FROM channels WHERE project_id = $1 AND name = $2`

// sqlProjectHasAllWebhook tells whether a project has a webhook that wants every event.
const sqlProjectHasAllWebhook = `SELECT EXISTS (SELECT 1 FROM webhooks WHERE project_id = $1 AND events = 'all')`

func scanProject(accountID int64) func(pgx.Row) (*tidings.Project, error) {
	return func(r pgx.Row) (*tidings.Project, error) {
		p := &tidings.Project{AccountID: accountID}
		var created, every, escalate int64 // every, escalate: seconds
		err := r.Scan(&p.ID, &p.Name, &p.AutoCreateChannels, &p.RetentionDays, &p.InsightChangeDefault, &p.IgnoreGPC,
			&every, &p.RepeatUrgentTimes, &escalate, &created)
		p.CreatedAt, p.RepeatUrgentEvery = fromMS(created), time.Duration(every)*time.Second
		p.EscalateAfter = time.Duration(escalate) * time.Second
		return p, err
	}
}

func findProject(ctx context.Context, q querier, accountID int64, name string) (*tidings.Project, error) {
	p, err := scanProject(accountID)(q.QueryRow(ctx, sqlFindProject, accountID, name))
	if noRows(err) {
		return nil, tidings.ProjectNotFound(name)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return p, nil
}

// CreateProject creates a project in the account.
func (db *DB) CreateProject(ctx context.Context, accountID int64, name string) (*tidings.Project, error) {
	if err := tidings.ValidateName("project", name); err != nil {
		return nil, err
	}
	p := &tidings.Project{AccountID: accountID, Name: name, CreatedAt: db.stamp(),
		RepeatUrgentEvery: tidings.RepeatUrgentEvery, RepeatUrgentTimes: tidings.RepeatUrgentTimes}
	err := db.row(ctx, `INSERT INTO projects (account_id, name, created_at) VALUES ($1, $2, $3) RETURNING id`,
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
	return findProject(ctx, db.pool, accountID, name)
}

// ListProjects returns the account's projects by name.
func (db *DB) ListProjects(ctx context.Context, accountID int64) ([]*tidings.Project, error) {
	return orNil(query(ctx, db.pool, scanProject(accountID),
		`SELECT `+projectColumns+` FROM projects WHERE account_id = $1 ORDER BY name COLLATE "C"`, accountID))
}

// setProject sets one column of the account's project (column is a constant of ours).
func (db *DB) setProject(ctx context.Context, accountID int64, project, column string, value any) error {
	tag, err := db.exec(ctx, `UPDATE projects SET `+column+` = $1 WHERE account_id = $2 AND name = $3`, value, accountID, project)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.ProjectNotFound(project)
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
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	c := &tidings.Channel{ProjectID: p.ID, Project: p.Name, Name: name, CreatedAt: db.stamp()}
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		id, err := roomForChannel(ctx, tx, p, name)
		if err != nil {
			return err
		}
		if id != 0 {
			return tidings.ChannelExists(project, name)
		}
		return tx.QueryRow(ctx, `INSERT INTO channels (project_id, name, created_at) VALUES ($1, $2, $3) RETURNING id`,
			p.ID, name, ms(c.CreatedAt)).Scan(&c.ID)
	})
	if isUnique(err) {
		return nil, tidings.ChannelExists(project, name)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ListChannels returns the project's channels by name.
func (db *DB) ListChannels(ctx context.Context, accountID int64, project string) ([]*tidings.Channel, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	return orNil(query(ctx, db.pool, channelScanner(p), `SELECT id, name, created_at FROM channels WHERE project_id = $1 ORDER BY name COLLATE "C"`, p.ID))
}

// channelScanner reads rows of (id, name, created_at) as channels of the project p.
func channelScanner(p *tidings.Project) func(pgx.Row) (*tidings.Channel, error) {
	return func(r pgx.Row) (*tidings.Channel, error) {
		c := &tidings.Channel{ProjectID: p.ID, Project: p.Name}
		var created int64
		err := r.Scan(&c.ID, &c.Name, &created)
		c.CreatedAt = fromMS(created)
		return c, err
	}
}

// channelID resolves a channel of a project.
func (db *DB) channelID(ctx context.Context, p *tidings.Project, name string) (int64, error) {
	var id int64
	err := db.row(ctx, sqlFindChannel, p.ID, name).Scan(&id)
	if noRows(err) {
		return 0, tidings.ChannelNotFound(p.Name, name)
	}
	return id, err
}

// CountEvents returns how many events the project or channel holds.
func (db *DB) CountEvents(ctx context.Context, accountID int64, project, channel string) (int, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return 0, err
	}
	// From the hourly counts, kept with every batch of events: no event is read.
	var n int
	if channel == "" {
		err = db.row(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts
			WHERE channel_id IN (SELECT id FROM channels WHERE project_id = $1)`, p.ID).Scan(&n)
		return n, err
	}
	cid, err := db.channelID(ctx, p, channel)
	if err != nil {
		return 0, err
	}
	err = db.row(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts WHERE channel_id = $1`, cid).Scan(&n)
	return n, err
}

// DeleteProject deletes the project; foreign keys take everything in it along, and the
// pending deliveries of its events go in the same transaction.
func (db *DB) DeleteProject(ctx context.Context, accountID int64, project string) error {
	found := false
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM projects WHERE account_id = $1 AND name = $2`, accountID, project)
		if found = err == nil && tag.RowsAffected() > 0; !found {
			return err
		}
		_, err = tx.Exec(ctx, sqlDropOrphanDeliveries, accountID)
		return err
	})
	db.tokensInvalidated(ctx) // tokens limited to the project went with it
	if err != nil {
		return err
	}
	if !found {
		return tidings.ProjectNotFound(project)
	}
	return nil
}

// DeleteChannel deletes the channel with its events and the tokens limited to it.
func (db *DB) DeleteChannel(ctx context.Context, accountID int64, project, channel string) error {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return err
	}
	found := false
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		// Locking the channel first waits for the batches writing to it and keeps new
		// ones out, so the tag counts lose exactly the rows that go.
		var cid int64
		err := tx.QueryRow(ctx, `SELECT id FROM channels WHERE project_id = $1 AND name = $2 FOR UPDATE`, p.ID, channel).Scan(&cid)
		if noRows(err) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		// Its events are locked first: an event deleted meanwhile by itself or by the
		// retention purge would otherwise leave the counts twice.
		if _, err := tx.Exec(ctx, `WITH l AS (SELECT 1 FROM events WHERE channel_id = $1 FOR UPDATE) SELECT count(*) FROM l`, cid); err != nil {
			return err
		}
		// Its events leave their users' counts and minutes, then the tag counts: the
		// order in which batches lock those rows, each in key order.
		if _, err := tx.Exec(ctx, `WITH g AS (SELECT user_id, count(*) AS n FROM events WHERE channel_id = $2 AND user_id <> '' GROUP BY 1),
			locked AS (SELECT p.user_id, g.n FROM people p JOIN g USING (user_id) WHERE p.project_id = $1 ORDER BY 1 FOR UPDATE OF p)
			UPDATE people SET events = greatest(people.events - locked.n, 0) FROM locked
			WHERE people.project_id = $1 AND people.user_id = locked.user_id`, p.ID, cid); err != nil {
			return err
		}
		if err := uncountEventMinutes(ctx, tx, `SELECT user_id AS u, ts - ts % 60000 AS m, count(*) AS n FROM events
			WHERE channel_id = $2 AND user_id <> '' GROUP BY 1, 2`, p.ID, cid); err != nil {
			return err
		}
		if err := uncountTags(ctx, tx, p.ID, sqlUncountChannelTags, []any{p.ID, cid}, `t.channel_id = $4`, cid); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM channels WHERE id = $1`, cid); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, sqlDropOrphanDeliveries, accountID)
		return err
	})
	db.tokensInvalidated(ctx) // tokens limited to the channel went with it
	if err != nil {
		return err
	}
	if !found {
		return tidings.ChannelNotFound(project, channel)
	}
	return nil
}

// sqlUncountChannelTags takes a channel's tag rows off the project's tag counts.
const sqlUncountChannelTags = `WITH gone AS (
	  SELECT key, value, count(*) AS n FROM event_tags WHERE project_id = $1 AND channel_id = $2 GROUP BY 1, 2),
	locked AS (
	  SELECT c.key, c.value, gone.n FROM tag_counts c JOIN gone ON c.key = gone.key AND c.value = gone.value
	  WHERE c.project_id = $1 ORDER BY c.key, c.value FOR UPDATE OF c)
	UPDATE tag_counts c SET n = c.n - locked.n FROM locked
	WHERE c.project_id = $1 AND c.key = locked.key AND c.value = locked.value
	RETURNING c.key, c.value, c.n, c.rolled`

// uncountTags runs a statement that takes rows off a project's tag counts and returns
// each count it changed (key, value, n, rolled), deletes the counts it left at 0, and
// takes the event_tags rows that gone selects ($4 is goneArg) off the hourly counts of
// the rolled ones (uncountTagHours).
func uncountTags(ctx context.Context, tx pgx.Tx, project int64, q string, args []any, gone string, goneArg any) error {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	var keys, values, rolledKeys, rolledValues []string
	for rows.Next() {
		var key, value string
		var n int64
		var rolled bool
		if err := rows.Scan(&key, &value, &n, &rolled); err != nil {
			rows.Close()
			return err
		}
		if n <= 0 {
			keys, values = append(keys, key), append(values, value)
		}
		if rolled {
			rolledKeys, rolledValues = append(rolledKeys, key), append(rolledValues, value)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(keys) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM tag_counts c USING unnest($2::text[], $3::text[]) AS x(key, value)
			WHERE c.project_id = $1 AND c.key = x.key AND c.value = x.value AND c.n <= 0`, project, keys, values); err != nil {
			return err
		}
	}
	if len(rolledKeys) == 0 {
		return nil
	}
	return uncountTagHours(ctx, tx, project, rolledKeys, rolledValues, gone, goneArg)
}

// uncountTagHours takes the event_tags rows of the given rolled tags that gone selects
// off their hourly counts, and deletes the counts it leaves at 0. It runs after their
// tag counts are locked: the order in which batches lock them.
func uncountTagHours(ctx context.Context, tx pgx.Tx, project int64, keys, values []string, gone string, goneArg any) error {
	rows, err := tx.Query(ctx, `WITH gone AS (SELECT t.key, t.value, t.ts - t.ts % 3600000 AS hour, count(*) AS n
		  FROM event_tags t JOIN unnest($2::text[], $3::text[]) AS r(key, value) ON t.key = r.key AND t.value = r.value
		  WHERE t.project_id = $1 AND `+gone+` GROUP BY 1, 2, 3),
		locked AS (SELECT h.key, h.value, h.hour, gone.n FROM tag_hours h JOIN gone USING (key, value, hour)
		  WHERE h.project_id = $1 ORDER BY 1, 2, 3 FOR UPDATE OF h)
		UPDATE tag_hours h SET n = h.n - locked.n FROM locked
		WHERE h.project_id = $1 AND h.key = locked.key AND h.value = locked.value AND h.hour = locked.hour
		RETURNING h.key, h.value, h.hour, h.n`, project, keys, values, goneArg)
	if err != nil {
		return err
	}
	var zk, zv []string
	var zh []int64
	for rows.Next() {
		var key, value string
		var hour, n int64
		if err := rows.Scan(&key, &value, &hour, &n); err != nil {
			rows.Close()
			return err
		}
		if n <= 0 {
			zk, zv, zh = append(zk, key), append(zv, value), append(zh, hour)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(zk) == 0 {
		return err
	}
	_, err = tx.Exec(ctx, `DELETE FROM tag_hours h USING unnest($2::text[], $3::text[], $4::bigint[]) AS x(key, value, hour)
		WHERE h.project_id = $1 AND h.key = x.key AND h.value = x.value AND h.hour = x.hour AND h.n <= 0`, project, zk, zv, zh)
	return err
}
