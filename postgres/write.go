package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/groupcommit"
)

// writeJob is one event or insight change waiting for the group committer.
type writeJob struct {
	accountID int64
	event     *tidings.NewEvent
	events    *tidings.NewBatch
	insight   *tidings.InsightChange
	views     *tidings.NewPageViews
	// fn is any other small write (the outbox's bookkeeping): it shares the batch's
	// transaction and commit instead of paying its own.
	fn func(ctx context.Context, tx pgx.Tx) error
}

type writeResult struct {
	event     *tidings.Event
	published []tidings.Published
	insight   *tidings.Insight
}

type job = groupcommit.Job[*writeJob, *writeResult]

var errClosing = tidings.ErrShuttingDown

func (db *DB) submit(ctx context.Context, w *writeJob) (*writeResult, error) {
	res, err := db.writer.Submit(ctx, w)
	if errors.Is(err, groupcommit.ErrClosed) {
		return nil, errClosing
	}
	return res, mapErr(err)
}

// inBatch runs fn in the next group-committed transaction and waits for its commit.
func (db *DB) inBatch(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	_, err := db.submit(ctx, &writeJob{fn: fn})
	return err
}

// batch is one group-committed transaction and what it has looked up.
type batch struct {
	db       *DB
	tx       pgx.Tx
	now      int64 // milliseconds
	careful  bool  // each job in a savepoint of its own, its rows written at once
	projects map[projectKey]*tidings.Project
	channels map[channelKey]int64
	// allWebhooks caches whether a project has a webhook for every event.
	allWebhooks map[int64]bool
	rows        eventRows
	views       viewRows
	jobsOut     int // outbox jobs of events
	notices     []notice
}

type projectKey struct {
	account int64
	name    string
}

type channelKey struct {
	project int64
	name    string
}

// eventRows are the batch's events, tags and outbox jobs as columns: each goes into
// its table in one statement (INSERT … SELECT FROM unnest), whatever the batch's size.
type eventRows struct {
	id, event, description, icon, tags, parser, userID []string
	search                                             []string // folded words, for the tsvector
	project, channel, ts                               []int64
	notify                                             []bool
	priority                                           []int16
	url, actions, key                                  []*string // NULL for none
	tagEvent, tagKey, tagValue                         []string
	tagProject, tagChannel, tagTS                      []int64
	outAccount                                         []int64
	outEvent                                           []string
}

func (r *eventRows) reset() { *r = eventRows{} }

const sqlInsertEvents = `INSERT INTO events (id, project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at, search,
	  priority, url, actions, thread_key)
	SELECT e.id, e.p, e.c, e.ev, e.d, e.i, e.n, e.t, e.pa, e.u, e.ts, $12::bigint, to_tsvector('simple', e.s), e.pr, e.url, e.a, e.k
	FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bool[],
	  $8::text[], $9::text[], $10::text[], $11::bigint[], $13::text[], $14::smallint[], $15::text[], $16::text[], $17::text[])
	  AS e(id, p, c, ev, d, i, n, t, pa, u, ts, s, pr, url, a, k)`

const sqlInsertTags = `INSERT INTO event_tags (event_id, key, value, project_id, channel_id, ts)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])`

// sqlCountTags adds a batch's tags to their counts, in key order like sqlCountEvents,
// and the events of its rolled tags to their hourly counts (tag_hours), one row per
// tag and hour, after every count row is locked (h reads the whole of c before its
// aggregate gives a row), so in the order deletions lock them too. The rolled flag
// RETURNING gives is the row's latest, under its lock. It returns the tags this batch
// takes to tagRollup ($5) that are not rolled yet: rollTags rolls them.
const sqlCountTags = `WITH c AS (INSERT INTO tag_counts (project_id, key, value, n)
	  SELECT p, k, v, count(*) FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(p, k, v) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
	  ON CONFLICT (project_id, key, value) DO UPDATE SET n = tag_counts.n + excluded.n
	  RETURNING project_id, key, value, n, rolled),
	h AS (INSERT INTO tag_hours (project_id, key, value, hour, n)
	  SELECT u.p, u.k, u.v, u.t - u.t % 3600000, count(*) FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS u(p, k, v, t)
	    JOIN c ON c.project_id = u.p AND c.key = u.k AND c.value = u.v AND c.rolled
	  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
	  ON CONFLICT (project_id, key, value, hour) DO UPDATE SET n = tag_hours.n + excluded.n)
	SELECT project_id, key, value FROM c WHERE NOT rolled AND n >= $5`

// sqlRollTags rolls tags: sets their flag and fills their hourly counts from their
// event_tags rows, this batch's included. It runs after sqlCountTags has locked their
// count rows, so its snapshot holds every committed row of theirs; a batch that adds
// rows of theirs later waits for that lock and then finds them rolled. A tag that is
// not rolled has no rows (ON CONFLICT only mends a row left by a fault).
const sqlRollTags = `WITH r AS (UPDATE tag_counts c SET rolled = true FROM unnest($1::bigint[], $2::text[], $3::text[]) AS x(p, k, v)
	  WHERE c.project_id = x.p AND c.key = x.k AND c.value = x.v AND NOT c.rolled
	  RETURNING c.project_id, c.key, c.value)
	INSERT INTO tag_hours (project_id, key, value, hour, n)
	SELECT t.project_id, t.key, t.value, t.ts - t.ts % 3600000, count(*)
	FROM r JOIN event_tags t ON t.project_id = r.project_id AND t.key = r.key AND t.value = r.value
	GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
	ON CONFLICT (project_id, key, value, hour) DO UPDATE SET n = excluded.n`

const sqlInsertEventJobs = `INSERT INTO deliveries (kind, account_id, event_id, next_at, created_at)
	SELECT 'event', a, e, $3, $3 FROM unnest($1::bigint[], $2::text[]) AS j(a, e)`

// sqlCountEvents adds a batch's events to the hourly counts, in key order so that two
// instances' batches lock the rows they share in the same order.
const sqlCountEvents = `INSERT INTO event_counts (channel_id, hour, n)
	SELECT c, t - t % 3600000, count(*) FROM unnest($1::bigint[], $2::bigint[]) AS u(c, t) GROUP BY 1, 2 ORDER BY 1, 2
	ON CONFLICT (channel_id, hour) DO UPDATE SET n = event_counts.n + excluded.n`

// flush writes the events and page views gathered so far. Every writer locks the
// rows it shares with others in one order, each table's in key order: page_texts,
// event_counts, people, user_minutes (then the people's sessions, locked already), the
// page counts (flushViews), tag_counts, tag_hours. Deletions take the same order, so
// no two transactions wait for each other in a circle.
func (b *batch) flush(ctx context.Context) error {
	r, v := &b.rows, &b.views
	if len(r.id) == 0 && len(v.user) == 0 {
		return nil
	}
	defer r.reset()
	defer v.reset()
	var texts map[textKey]int32
	if len(v.user) > 0 {
		var err error
		if texts, err = b.pageTexts(ctx); err != nil {
			return err
		}
	}
	if len(r.id) > 0 {
		if _, err := b.tx.Exec(ctx, sqlInsertEvents, r.id, r.project, r.channel, r.event, r.description, r.icon, r.notify,
			r.tags, r.parser, r.userID, r.ts, b.now, r.search, r.priority, r.url, r.actions, r.key); err != nil {
			return err
		}
		if _, err := b.tx.Exec(ctx, sqlCountEvents, r.channel, r.ts); err != nil {
			return err
		}
	}
	people, err := b.countPeople(ctx)
	if err != nil {
		return err
	}
	if len(v.user) > 0 {
		if err := b.flushViews(ctx, texts, people); err != nil {
			return err
		}
	}
	if len(r.tagEvent) > 0 {
		if _, err := b.tx.Exec(ctx, sqlInsertTags, r.tagEvent, r.tagKey, r.tagValue, r.tagProject, r.tagChannel, r.tagTS); err != nil {
			return err
		}
		if err := b.countTags(ctx); err != nil {
			return err
		}
	}
	if len(r.outEvent) > 0 {
		if _, err := b.tx.Exec(ctx, sqlInsertEventJobs, r.outAccount, r.outEvent, b.now); err != nil {
			return err
		}
	}
	return nil
}

// countTags adds the batch's tag rows to the tag counts and the rolled tags' hourly
// counts, and rolls the tags it takes to tagRollup.
func (b *batch) countTags(ctx context.Context) error {
	r := &b.rows
	rows, err := b.tx.Query(ctx, sqlCountTags, r.tagProject, r.tagKey, r.tagValue, r.tagTS, b.db.tagRollup)
	if err != nil {
		return err
	}
	var projects []int64
	var keys, values []string
	for rows.Next() {
		var p int64
		var k, v string
		if err := rows.Scan(&p, &k, &v); err != nil {
			rows.Close()
			return err
		}
		projects, keys, values = append(projects, p), append(keys, k), append(values, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(keys) == 0 {
		return err
	}
	_, err = b.tx.Exec(ctx, sqlRollTags, projects, keys, values)
	return err
}

// commitBatch commits every job in one transaction. It first tries the fast way: the
// events of the batch in three statements, no savepoints. If a statement fails (a
// project deleted meanwhile), it tries again carefully, one savepoint per job, so that
// only the job at fault fails. A deadlock with another instance's batch is retried.
func (db *DB) commitBatch(ctx context.Context, jobs []*job) error {
	careful := false
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		for _, j := range jobs {
			j.Out, j.Err = nil, nil
		}
		err = db.tryBatch(ctx, jobs, careful)
		switch {
		case err == nil:
			return nil
		case isConnError(err):
			return mapErr(err)
		case pgCode(err) == "40P01" || pgCode(err) == "40001": // deadlock, serialization
			continue
		case !careful:
			careful = true
			continue
		}
		return err
	}
	return err
}

func (db *DB) tryBatch(ctx context.Context, jobs []*job, careful bool) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback(context.Background())
	b := &batch{db: db, tx: tx, now: ms(db.stamp()), careful: careful,
		projects: map[projectKey]*tidings.Project{}, channels: map[channelKey]int64{}, allWebhooks: map[int64]bool{}}
	deliveries := false
	for _, j := range jobs {
		if careful {
			if _, err := tx.Exec(ctx, `SAVEPOINT job`); err != nil {
				return err
			}
		}
		res := &writeResult{}
		var jerr error
		if j.In.fn != nil {
			jerr = j.In.fn(ctx, tx)
			deliveries = true
		} else {
			res, jerr = b.apply(ctx, j.In)
		}
		if jerr != nil && !careful {
			if isDomainError(jerr) {
				j.Err = jerr // nothing was written for it
				continue
			}
			return jerr
		}
		if careful {
			if jerr != nil {
				if isConnError(jerr) || pgCode(jerr) == "40P01" {
					return jerr
				}
				if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT job`); err != nil {
					return err
				}
				clear(b.projects)
				clear(b.channels)
				b.rows.reset()
				b.views.reset()
				j.Err = jerr
				continue
			}
			if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT job`); err != nil {
				return err
			}
		}
		j.Out = res
	}
	for _, j := range jobs {
		if j.Out != nil && j.Out.event != nil {
			b.notices = append(b.notices, notice{Account: j.In.accountID, Event: j.Out.event.ID})
		}
		for _, p := range j.Out.publishedEvents() {
			b.notices = append(b.notices, notice{Account: j.In.accountID, Event: p.ID})
		}
		if j.Out != nil && j.Out.insight != nil {
			b.notices = append(b.notices, notice{Account: j.In.accountID, Project: j.Out.insight.Project, Title: j.Out.insight.Title})
		}
	}
	if b.jobsOut > 0 {
		deliveries = true
	}
	if err := b.flush(ctx); err != nil {
		return err
	}
	if err := b.announce(ctx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	if deliveries {
		db.notifyOutbox()
	}
	return nil
}

// publishedEvents are the events a batch job stored.
func (r *writeResult) publishedEvents() []*tidings.Event {
	if r == nil {
		return nil
	}
	var out []*tidings.Event
	for _, p := range r.published {
		if p.Event != nil {
			out = append(out, p.Event)
		}
	}
	return out
}

// apply runs an event, batch, page views or insight job, with its idempotency key:
// claimed before the job writes, dropped when the job is refused, kept with its answer
// otherwise. A domain error is the job's refusal (nothing was written for it).
func (b *batch) apply(ctx context.Context, w *writeJob) (*writeResult, error) {
	var claim *keyClaim
	var err error
	switch {
	case w.views != nil: // page views have no idempotency key: a view sent twice is two views
	case w.event != nil:
		claim, err = claimFor(ctx, b.tx, w.accountID, w.event.Key, b.now)
	case w.events != nil:
		claim, err = claimFor(ctx, b.tx, w.accountID, w.events.Key, b.now)
	default:
		claim, err = claimFor(ctx, b.tx, w.accountID, w.insight.Key, b.now)
	}
	if err != nil {
		return nil, err
	}
	res := &writeResult{}
	var refusal error
	switch {
	case w.views != nil:
		err = b.insertViews(ctx, w.accountID, w.views)
		if err == nil && b.careful {
			err = b.flush(ctx)
		}
		refusal, err = refused(err)
	case w.event != nil:
		res.event, err = b.insertEvent(ctx, w.accountID, w.event)
		if err == nil && b.careful {
			err = b.flush(ctx)
		}
		if refusal, err = refused(err); err == nil {
			err = settle(ctx, b.tx, claim, w.event.Key, res.event, refusal)
		}
	case w.events != nil:
		res.published, err = b.insertEvents(ctx, w.accountID, w.events.Events)
		if err == nil && b.careful {
			err = b.flush(ctx)
		}
		if err == nil {
			refusal = tidings.NoneStored(res.published)
			err = settle(ctx, b.tx, claim, w.events.Key, res.published, refusal)
			refusal = nil // the batch's own outcome: its events' refusals are in it
		}
	default:
		res.insight, err = b.applyInsight(ctx, w.accountID, w.insight)
		if refusal, err = refused(err); err == nil {
			err = settle(ctx, b.tx, claim, w.insight.Key, res.insight, refusal)
		}
	}
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, refusal
	}
	return res, nil
}

// refused splits err: a domain error is a refusal, anything else an error.
func refused(err error) (refusal, other error) {
	if err != nil && isDomainError(err) {
		return err, nil
	}
	return nil, err
}

// insertEvents adds a batch's events; a refused one fails alone, with nothing written.
func (b *batch) insertEvents(ctx context.Context, accountID int64, events []*tidings.NewEvent) ([]tidings.Published, error) {
	out := make([]tidings.Published, len(events))
	for i, e := range events {
		ev, err := b.insertEvent(ctx, accountID, e)
		if err != nil && !isDomainError(err) {
			return nil, err
		}
		out[i] = tidings.Published{Event: ev, Err: err}
	}
	return out, nil
}

// isDomainError is an error found before anything was written: the job fails alone.
func isDomainError(err error) bool {
	var e *tidings.Error
	return errors.As(err, &e)
}

// project resolves an account's project once per batch.
func (b *batch) project(ctx context.Context, accountID int64, name string) (*tidings.Project, error) {
	k := projectKey{accountID, name}
	if p, ok := b.projects[k]; ok {
		return p, nil
	}
	p, err := findProject(ctx, b.tx, accountID, name)
	if err != nil {
		return nil, err
	}
	b.projects[k] = p
	return p, nil
}

// channel resolves a project's channel once per batch, creating it when allowed. Two
// instances creating one channel at once agree: the second insert waits for the first
// and then finds its row.
func (b *batch) channel(ctx context.Context, p *tidings.Project, name string) (int64, error) {
	k := channelKey{p.ID, name}
	if id, ok := b.channels[k]; ok {
		return id, nil
	}
	var id int64
	err := b.tx.QueryRow(ctx, sqlFindChannel, p.ID, name).Scan(&id)
	if noRows(err) {
		if !p.AutoCreateChannels {
			return 0, tidings.ChannelNotFound(p.Name, name)
		}
		if id, err = roomForChannel(ctx, b.tx, p, name); err != nil {
			return 0, err
		}
		if id != 0 {
			b.channels[k] = id
			return id, nil
		}
		err = b.tx.QueryRow(ctx, `INSERT INTO channels (project_id, name, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (project_id, name) DO NOTHING RETURNING id`, p.ID, name, b.now).Scan(&id)
		if noRows(err) {
			err = b.tx.QueryRow(ctx, sqlFindChannel, p.ID, name).Scan(&id)
		}
	}
	if err != nil {
		return 0, err
	}
	b.channels[k] = id
	return id, nil
}

func (b *batch) insertEvent(ctx context.Context, accountID int64, e *tidings.NewEvent) (*tidings.Event, error) {
	p, err := b.project(ctx, accountID, e.Project)
	if err != nil {
		return nil, err
	}
	channelID, err := b.channel(ctx, p, e.Channel)
	if err != nil {
		return nil, err
	}
	ev, err := e.Accept(fromMS(b.now))
	if err != nil {
		return nil, err
	}
	tags := ev.Tags.JSON()
	r := &b.rows
	r.id = append(r.id, ev.ID)
	r.project = append(r.project, p.ID)
	r.channel = append(r.channel, channelID)
	r.event = append(r.event, ev.Event)
	r.description = append(r.description, ev.Description)
	r.icon = append(r.icon, ev.Icon)
	r.notify = append(r.notify, ev.Notify)
	r.priority = append(r.priority, int16(ev.Priority))
	r.url = append(r.url, nullText(ev.URL))
	r.actions = append(r.actions, actionsText(ev.Actions))
	r.key = append(r.key, nullText(ev.ThreadKey))
	r.tags = append(r.tags, string(tags))
	r.parser = append(r.parser, ev.Parser)
	r.userID = append(r.userID, ev.UserID)
	ts := ms(ev.Timestamp)
	r.ts = append(r.ts, ts)
	r.search = append(r.search, searchText(ev))
	for _, t := range ev.Tags {
		r.tagEvent = append(r.tagEvent, ev.ID)
		r.tagKey = append(r.tagKey, t.Key)
		r.tagValue = append(r.tagValue, t.Value)
		r.tagProject = append(r.tagProject, p.ID)
		r.tagChannel = append(r.tagChannel, channelID)
		r.tagTS = append(r.tagTS, ts)
	}
	goes, err := b.goesOut(ctx, p, ev)
	if err != nil {
		return nil, err
	}
	if goes {
		b.jobsOut++
		r.outAccount = append(r.outAccount, accountID)
		r.outEvent = append(r.outEvent, ev.ID)
	}
	return ev, nil
}

// goesOut tells whether the event gets an outbox job: recent (a backfill never
// notifies) and either sent with notify or in a project with a webhook for every event.
func (b *batch) goesOut(ctx context.Context, p *tidings.Project, ev *tidings.Event) (bool, error) {
	if b.now-ms(ev.Timestamp) > tidings.BackfillAge.Milliseconds() {
		return false, nil
	}
	if ev.Notify {
		return true, nil
	}
	all, ok := b.allWebhooks[p.ID]
	if !ok {
		if err := b.tx.QueryRow(ctx, sqlProjectHasAllWebhook, p.ID).Scan(&all); err != nil {
			return false, err
		}
		b.allWebhooks[p.ID] = all
	}
	return all, nil
}
