package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/groupcommit"
)

// writeJob is one event or insight change waiting for the group committer.
type writeJob struct {
	accountID int64
	event     *tidings.NewEvent
	events    *tidings.NewBatch
	insight   *tidings.InsightChange
	views     *tidings.NewPageViews // checked page views (pageviews.go)
	probe     bool                  // a write that only checks the disk takes writes (readiness)
	index     bool                  // a step of the full-text indexer (indexer.go)
	// fn is any other small write (the outbox's bookkeeping): it shares the batch's
	// transaction and fsync instead of paying its own.
	fn func(ctx context.Context, tx *sql.Tx) error
}

type writeResult struct {
	event     *tidings.Event
	published []tidings.Published
	insight   *tidings.Insight
	indexed   *indexStep
}

type job = groupcommit.Job[*writeJob, *writeResult]

func (db *DB) submit(ctx context.Context, w *writeJob) (*writeResult, error) {
	res, err := db.writer.Submit(ctx, w)
	if errors.Is(err, groupcommit.ErrClosed) {
		return nil, tidings.ErrShuttingDown
	}
	if isStorageError(err) {
		return nil, errCannotWrite
	}
	return res, err
}

// Statements of the write path, prepared once on the writing connection.
const (
	sqlFindChannel = `SELECT id FROM channels WHERE project_id = ? AND name = ?`
	// sqlCreateChannel inserts nothing (no row) when the project holds
	// MaxChannelsPerProject channels: the count and the insert are one statement.
	sqlCreateChannel = `INSERT INTO channels (project_id, name, created_at) SELECT ?1, ?2, ?3
		WHERE (SELECT count(*) FROM channels WHERE project_id = ?1) < ?4 RETURNING id`
	sqlCountInsights = `SELECT count(*) FROM insights WHERE project_id = ?`
	// An event's seq is taken from event_seq, never from max(seq)+1 (SQLite's default
	// for a rowid): a seq freed by a deletion is never given again, so a row of an index
	// written for a deleted event can never be taken for a new one.
	sqlLastSeq = `SELECT last FROM event_seq`
	sqlSetSeq  = `UPDATE event_seq SET last = ?`
	sqlFindTag = `SELECT id FROM tags WHERE project_id = ? AND key = ? AND value = ?`
	// sqlFindTagEntry is a tag with its count and rolled flag (tag_hours.go).
	sqlFindTagEntry = `SELECT id, count, rolled FROM tags WHERE project_id = ? AND key = ? AND value = ?`
	sqlCreateTag    = `INSERT INTO tags (project_id, key, value) VALUES (?, ?, ?) RETURNING id`

	// sqlCountPerson creates or counts the user an event names: once per user a batch
	// (a statement parsed each time cost as much as the row).
	sqlCountPerson = `INSERT INTO people (project_id, user_id, first_seen, last_seen, events) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, user_id) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen), events = events + excluded.events
		RETURNING id`
	sqlCountHour = `INSERT INTO event_counts (channel_id, hour, n) VALUES (?, ?, ?)
		ON CONFLICT (channel_id, hour) DO UPDATE SET n = n + excluded.n`
	sqlCountTag      = `UPDATE tags SET count = count + ? WHERE id = ?`
	sqlFindInsight   = `SELECT title, value, prefix, suffix, icon, change, updated_at FROM insights WHERE project_id = ? AND title = ?`
	sqlUpsertInsight = `INSERT INTO insights (project_id, title, value, prefix, suffix, icon, change, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project_id, title) DO UPDATE SET value = excluded.value, prefix = excluded.prefix,
		  suffix = excluded.suffix, icon = excluded.icon, change = excluded.change, updated_at = excluded.updated_at
		RETURNING id`
	sqlInsertPoint = `INSERT INTO insight_points (insight_id, ts, value) VALUES (?, ?, ?)`
	sqlSavepoint   = `SAVEPOINT job`
	sqlRelease     = `RELEASE job`
	sqlRollbackTo  = `ROLLBACK TO job`
	sqlFindProject = `SELECT ` + projectColumns + ` FROM projects WHERE account_id = ? AND name = ?`
)

// batch is one group-committed transaction: its statements and what it has looked up.
type batch struct {
	db       *DB
	tx       *sql.Tx
	bound    map[string]*sql.Stmt // prepared statements bound to tx (stmt)
	now      time.Time
	projects map[projectKey]*tidings.Project
	channels map[channelKey]int64
	// tags are the dictionary entries the batch's events named, with their counts and
	// rolled flags as the transaction holds them (tag_hours.go); cleared after any job
	// that is not an event, which may have changed them.
	tags map[tagKey]*tagEntry
	// allWebhooks caches whether a project has a webhook for every event.
	allWebhooks map[int64]bool
	deliveries  int // outbox jobs written
	// Counts of the batch's events per channel and hour, and per tag, written once at
	// the end of the batch; job* are the current job's, kept only if it succeeds.
	hours, jobHours map[hourKey]int64
	tagUses, jobTag map[*tagEntry]int64
	// tagHours counts the batch's events of rolled tags per tag and hour (an event is
	// never rolled back alone: no job copy needed).
	tagHours map[tagHourKey]int64
	// users counts the batch's events per (project, user_id): people rows are
	// created or counted once per batch, not once per event.
	users map[userKey]int64
	// userMinutes counts the batch's events per (project, user_id, minute of their
	// timestamp): the users' activity minutes (user_minutes), written with the users.
	userMinutes map[userMinuteKey]int64
	// eventRows are the batch's events (eventWidth values each), written together by
	// writeDerived: one statement per eventChunk events, not one per event. Nothing in
	// the batch reads an event before then: a job that is not an event runs after it.
	eventRows []any
	// tagRows are the batch's rows of the tag index (4 values each), written together
	// at the end of the batch: one statement per tagChunk rows, not one per tag.
	tagRows []any
	// searchRows are the batch's events' rows of the full-text index, handed to the
	// indexer when the batch commits; indexed is the indexer's step run in the batch.
	searchRows []searchRow
	indexed    *indexStep
	// insights are the batch's insight changes, written by flushInsights.
	insights     map[insightKey]*pendingInsight
	insightOrder []*pendingInsight
	// insightCounts are projects' insights, written and pending, as far as counted.
	insightCounts map[int64]int
	// views are the batch's page views, written with their users and counts by
	// writeViews (pageviews.go) at the end of the batch, like events; pageTexts are the
	// dictionary's entries they named (kept through other jobs: none deletes an entry,
	// and views write theirs outside any savepoint).
	views     []pendingView
	viewUsers map[userKey]*viewSeen
	pageTexts map[pageTextKey]int64
	// seq is the last seq given to an event (0: not read yet); seqRead is its value
	// in event_seq, written back at the end of the batch when it moved.
	seq, seqRead int64
}

// nextSeq gives the next event its seq.
func (b *batch) nextSeq(ctx context.Context) (int64, error) {
	if b.seq == 0 {
		if err := b.queryRow(ctx, sqlLastSeq).Scan(&b.seq); err != nil {
			return 0, fmt.Errorf("event_seq: %w", err)
		}
		b.seqRead = b.seq
	}
	b.seq++
	return b.seq, nil
}

var writeStatements = []string{sqlFindChannel, sqlCreateChannel, sqlCountInsights, sqlFindTag, sqlFindTagEntry, sqlCreateTag,
	sqlCountHour, sqlCountTag, sqlCountTagHour, sqlCountPerson, sqlFindInsight,
	sqlUpsertInsight, sqlInsertPoint, sqlSavepoint, sqlRelease, sqlRollbackTo, sqlFindProject, sqlLastSeq, sqlSetSeq,
	sqlInsertDelivery, sqlProjectHasAllWebhook, sqlClaimKey, sqlDropClaim, sqlKeepAnswer,
	sqlSearchMark, sqlSetSearchMark, sqlEventsAbove}

func init() {
	writeStatements = slices.Concat(writeStatements, eventStatements, tagStatements, searchStatements, pageStatements, viewStatements, sessionStatements,
		[]string{sqlGroupMembership, sqlJoinGroup, sqlGroupSummary, sqlFindPerson, sqlPersonGroupCount, sqlPersonGroups,
			peopleTable.find, peopleTable.insert, peopleTable.update, groupsTable.find, groupsTable.insert, groupsTable.update,
			sqlDeleteDelivery, sqlRetryDelivery, sqlRecordPush})
}

// prepare readies the write path's statements on the writing connection. It runs
// before the writer starts: later, a batch's transaction holds that one connection.
func (db *DB) prepare(ctx context.Context) error {
	for _, q := range writeStatements {
		s, err := db.write.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		db.prepared[q] = s
	}
	return nil
}

// stmt returns the prepared statement for query, bound to the batch's transaction
// (same connection, so database/sql reuses the prepared statement).
func (b *batch) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	// Bound once per batch: binding allocates and takes locks, and a batch of page
	// views runs its few statements hundreds of times.
	if s, ok := b.bound[query]; ok {
		return s, nil
	}
	s, ok := b.db.prepared[query]
	if !ok {
		return nil, fmt.Errorf("statement not prepared: %q", query)
	}
	s = b.tx.StmtContext(ctx, s)
	b.bound[query] = s
	return s, nil
}

func (b *batch) exec(ctx context.Context, query string, args ...any) error {
	s, err := b.stmt(ctx, query)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(ctx, args...)
	return err
}

// ExecContext makes a batch an execer, running its prepared statements.
func (b *batch) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := b.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

// QueryRowContext makes a batch a querier, running its prepared statements.
func (b *batch) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return b.queryRow(ctx, query, args...)
}

func (b *batch) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := b.stmt(ctx, query)
	if err != nil {
		// A Row cannot carry the error; run the query unprepared to report it.
		return b.tx.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// inBatch runs fn in the next group-committed transaction and waits for its commit.
func (db *DB) inBatch(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	_, err := db.submit(ctx, &writeJob{fn: fn})
	return err
}

// commitBatch applies every job in one transaction, which commits once, with one
// fsync, for all. A job that is refused (unknown project, non-numeric insight) leaves
// no trace and does not fail its neighbours: events are checked before their first
// write (insertEvent), every other job runs inside a savepoint. An unexpected error
// fails the batch, and every job in it is answered with that error.
func (db *DB) commitBatch(ctx context.Context, jobs []*job) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback()
	b := &batch{db: db, tx: tx, bound: map[string]*sql.Stmt{}, now: db.stamp(),
		projects: map[projectKey]*tidings.Project{}, channels: map[channelKey]int64{}, tags: map[tagKey]*tagEntry{},
		allWebhooks: map[int64]bool{}, hours: map[hourKey]int64{}, jobHours: map[hourKey]int64{},
		tagUses: map[*tagEntry]int64{}, jobTag: map[*tagEntry]int64{}, tagHours: map[tagHourKey]int64{}, users: map[userKey]int64{}, userMinutes: map[userMinuteKey]int64{},
		viewUsers: map[userKey]*viewSeen{}, pageTexts: map[pageTextKey]int64{},
		insights: map[insightKey]*pendingInsight{}, insightCounts: map[int64]int{}, eventRows: db.spareRows.events, tagRows: db.spareRows.tags}
	defer db.spareRows.keep(b)
	for _, j := range jobs {
		if j.In.views != nil {
			refusal, err := b.addViews(ctx, j.In.accountID, j.In.views)
			if err != nil {
				return err
			}
			j.Out, j.Err = &writeResult{}, refusal // a refused call wrote nothing
			continue
		}
		if j.In.event != nil || j.In.events != nil || j.In.insight != nil {
			out, refusal, err := b.apply(ctx, j.In)
			if err != nil {
				return err
			}
			j.Out, j.Err = out, refusal // a refused job wrote nothing
			continue
		}
		// Any other job sees the events and insights of the batch so far in full:
		// their index rows and counts are written before it runs.
		if err := b.writeDerived(ctx); err != nil {
			return err
		}
		if err := b.exec(ctx, sqlSavepoint); err != nil {
			return err
		}
		res := &writeResult{}
		var jerr error
		switch {
		case j.In.probe:
			jerr = b.probe(ctx)
		case j.In.index:
			jerr = b.indexSearch(ctx)
			res.indexed = b.indexed
		case j.In.fn != nil:
			jerr = j.In.fn(ctx, b.tx)
		}
		if isStorageError(jerr) {
			// The disk refuses: the whole batch would fail at commit too. Fail it
			// now, so that every job is answered "unavailable" and nothing is half-done.
			return jerr
		}
		if jerr != nil {
			if err := errors.Join(b.exec(ctx, sqlRollbackTo), b.exec(ctx, sqlRelease)); err != nil {
				return err
			}
			// What this job looked up may have been rolled back with it (a channel it created).
			clear(b.projects)
			clear(b.channels)
			clear(b.tags)
			clear(b.jobHours)
			clear(b.jobTag)
			b.indexed = nil
			j.Err = jerr
			continue
		}
		if err := b.exec(ctx, sqlRelease); err != nil {
			return err
		}
		b.keepJobCounts()
		// It may have changed tags' counts (a deletion): the next event looks them up again.
		clear(b.tags)
		j.Out = res
	}
	if err := b.writeDerived(ctx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		for _, j := range jobs {
			j.Out = nil
		}
		return fmt.Errorf("commit batch: %w", err)
	}
	db.ix.afterCommit(b)
	if b.deliveries > 0 {
		db.notifyOutbox()
	}
	return nil
}

func nullIfNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// spareRows are the row buffers of the writer's last batch, emptied, for its next: a
// batch grew them from nothing, and they were a sixth of a publish's allocated bytes.
// Only the writer goroutine (commitBatch) uses them.
type spareRows struct{ events, tags []any }

// maxSpareRows bounds what a kept buffer may hold (values; 16 B each): a batch of large
// events with many tags does not pin its buffers' memory after it.
const maxSpareRows = 1 << 14

func (s *spareRows) keep(b *batch) {
	s.events, s.tags = spare(b.eventRows), spare(b.tagRows)
}

func spare(rows []any) []any {
	if cap(rows) > maxSpareRows {
		return nil
	}
	clear(rows[:cap(rows)]) // let the batch's texts go
	return rows[:0]
}

// prepared runs queries on a transaction or on the read pool, by prepared statements
// where the query is one of them and unprepared otherwise. modernc's driver caches no
// statement: a query run plainly is parsed each time, which cost as much as running it.
type prepared struct {
	raw interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
	tx    *sql.Tx // the statements are the writer's, bound to this transaction; nil on the read pool
	stmts map[string]*sql.Stmt
}

// preparedIn runs a job's queries (identify, group, the outbox's) in its transaction
// by the write path's statements.
func (db *DB) preparedIn(tx *sql.Tx) prepared { return prepared{raw: tx, tx: tx, stmts: db.prepared} }

func (p prepared) stmt(ctx context.Context, query string) *sql.Stmt {
	s := p.stmts[query]
	if s != nil && p.tx != nil {
		s = p.tx.StmtContext(ctx, s)
	}
	return s
}

func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.raw.ExecContext(ctx, query, args...)
}

func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.raw.QueryRowContext(ctx, query, args...)
}

func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.raw.QueryContext(ctx, query, args...)
}

// readStatements are prepared on the read pool at Open: every API request looks up its
// token, nearly every read its project.
var readStatements = []string{sqlFindToken, sqlFindProject, sqlFindPerson, sqlPersonGroupCount, sqlPersonGroups, sqlGroupSummary}

func prepareReads(ctx context.Context, read *sql.DB) (prepared, error) {
	r := prepared{raw: read, stmts: map[string]*sql.Stmt{}}
	for _, q := range readStatements {
		s, err := read.PrepareContext(ctx, q)
		if err != nil {
			r.close()
			return prepared{}, fmt.Errorf("prepare %q: %w", q, err)
		}
		r.stmts[q] = s
	}
	return r, nil
}

// close closes the read pool's statements (the writer's are closed by Close).
func (p prepared) close() {
	if p.tx != nil {
		return
	}
	for _, s := range p.stmts {
		s.Close()
	}
}
