package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/tidings-dev/tidings"
)

type tagKey struct {
	project    int64
	key, value string
}

type hourKey struct{ channel, hour int64 }

type userKey struct {
	project int64
	id      string
}

type userMinuteKey struct {
	project int64
	id      string
	minute  int64 // unix minutes
}

// hourOf is the start of ts's hour (UTC), in unix ms: event_counts' key.
func hourOf(ts int64) int64 { return ts - ts%3_600_000 }

type projectKey struct {
	account int64
	name    string
}

type channelKey struct {
	project int64
	name    string
}

// tagChunk is how many rows of the tag index one statement writes (4 parameters each).
const tagChunk = 128

// insertTags is the statement that writes n rows of the tag index at once.
func insertTags(n int) string {
	return `INSERT INTO event_tags (tag_id, ts, seq, channel_id) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", n), ", ")
}

// eventChunk is how many events one statement writes (eventWidth parameters each).
const eventChunk = 32

// insertEventRows is the statement that writes n events at once.
func insertEventRows(n int) string {
	return `INSERT INTO events (seq, id, project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at,
		priority, url, actions, thread_key) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ")
}

// eventWidth is how many values an event's row takes in a batch's eventRows.
const eventWidth = 17

// searchChunk is how many rows of the full-text index one statement writes.
const searchChunk = 64

func insertSearch(n int) string {
	return `INSERT INTO events_fts (rowid, text, scope) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ")
}

// eventStatements, tagStatements and searchStatements write 32 (128, 64), … 1 rows at once: all are
// prepared at Open, so that a batch's rows of any count are written by prepared
// statements (parsing a statement of the batch's odd count each time was 5% of a
// publish's CPU).
var (
	eventStatements  = rowStatements(insertEventRows, eventChunk)
	tagStatements    = rowStatements(insertTags, tagChunk)
	searchStatements = rowStatements(insertSearch, searchChunk)
)

func rowStatements(build func(int) string, chunk int) []string {
	var qs []string
	for n := chunk; n >= 1; n /= 2 {
		qs = append(qs, build(n))
	}
	return qs
}

// execRows writes rows of width values each with stmts (rowStatements' of chunk): full
// chunks first, then the rest by halves.
func (b *batch) execRows(ctx context.Context, stmts []string, chunk, width int, rows []any) error {
	for i, q := range stmts {
		n := (chunk >> i) * width
		for len(rows) >= n {
			if err := b.exec(ctx, q, rows[:n]...); err != nil {
				return err
			}
			rows = rows[n:]
		}
	}
	return nil
}

// project resolves an account's project once per batch.
func (b *batch) project(ctx context.Context, accountID int64, name string) (*tidings.Project, error) {
	k := projectKey{accountID, name}
	if p, ok := b.projects[k]; ok {
		return p, nil
	}
	p, err := findProject(ctx, b, accountID, name)
	if err != nil {
		return nil, err
	}
	b.projects[k] = p
	return p, nil
}

// channel resolves a project's channel once per batch, creating it when allowed.
func (b *batch) channel(ctx context.Context, p *tidings.Project, name string) (int64, error) {
	k := channelKey{p.ID, name}
	if id, ok := b.channels[k]; ok {
		return id, nil
	}
	var id int64
	err := b.queryRow(ctx, sqlFindChannel, p.ID, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if !p.AutoCreateChannels {
			return 0, tidings.ChannelNotFound(p.Name, name)
		}
		err = b.queryRow(ctx, sqlCreateChannel, p.ID, name, ms(b.now), tidings.MaxChannelsPerProject).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, tidings.ChannelLimitReached(p.Name, name, tidings.MaxChannelsPerProject)
		}
	}
	if err != nil {
		return 0, err
	}
	b.channels[k] = id
	return id, nil
}

// tag resolves a project's tag (key and value) to its dictionary entry once per batch,
// adding it when new.
func (b *batch) tag(ctx context.Context, project int64, key, value string) (*tagEntry, error) {
	k := tagKey{project, key, value}
	if t, ok := b.tags[k]; ok {
		return t, nil
	}
	t := &tagEntry{}
	err := b.queryRow(ctx, sqlFindTagEntry, project, key, value).Scan(&t.id, &t.count, &t.rolled)
	if errors.Is(err, sql.ErrNoRows) {
		err = b.queryRow(ctx, sqlCreateTag, project, key, value).Scan(&t.id)
	}
	if err != nil {
		return nil, err
	}
	b.tags[k] = t
	return t, nil
}

// keepJobCounts adds the job that just succeeded to the batch's counts.
func (b *batch) keepJobCounts() {
	for k, n := range b.jobHours {
		b.hours[k] += n
	}
	for k, n := range b.jobTag {
		b.tagUses[k] += n
	}
	clear(b.jobHours)
	clear(b.jobTag)
}

// writeTagRows writes the batch's rows of the tag index.
func (b *batch) writeTagRows(ctx context.Context) error {
	return b.execRows(ctx, tagStatements, tagChunk, 4, b.tagRows)
}

// writeDerived writes what the batch's events so far add to the tag index and to the
// counts (their full-text rows wait for the indexer: indexer.go). It runs before any job that is not an event (a deletion,
// a retention purge) and at the end: such a job may delete an event of this batch,
// and must find its index rows and counts written, or they would outlive it.
func (b *batch) writeDerived(ctx context.Context) error {
	if err := b.flushInsights(ctx); err != nil {
		return err
	}
	// The events first: the tag index's rows and the counts are of these events.
	if err := b.execRows(ctx, eventStatements, eventChunk, eventWidth, b.eventRows); err != nil {
		return err
	}
	clear(b.eventRows) // let the texts go
	b.eventRows = b.eventRows[:0]
	if err := b.writeTagRows(ctx); err != nil {
		return err
	}
	if err := b.writeCounts(ctx); err != nil {
		return err
	}
	if err := b.writeViews(ctx); err != nil {
		return err
	}
	b.tagRows = b.tagRows[:0]
	clear(b.users)
	clear(b.userMinutes)
	clear(b.hours)
	clear(b.tagUses)
	clear(b.tagHours)
	if b.seq != b.seqRead {
		if err := b.exec(ctx, sqlSetSeq, b.seq); err != nil {
			return err
		}
		b.seqRead = b.seq
	}
	return nil
}

// writeCounts adds the batch's events to the hourly and per-tag counts, and to their
// users' (creating the users that events name first).
func (b *batch) writeCounts(ctx context.Context) error {
	now := ms(b.now)
	refs := make(map[userKey]int64, len(b.users))
	for k, n := range b.users {
		var ref int64
		if err := b.queryRow(ctx, sqlCountPerson, k.project, k.id, now, now, n).Scan(&ref); err != nil {
			return err
		}
		refs[k] = ref
	}
	sessions := sessionCounts{}
	for k, n := range b.userMinutes {
		if err := sessions.addMinute(ctx, b, refs[userKey{k.project, k.id}], k.minute, n, 0); err != nil {
			return err
		}
	}
	if err := sessions.write(ctx, b); err != nil {
		return err
	}
	for k, n := range b.hours {
		if err := b.exec(ctx, sqlCountHour, k.channel, k.hour, n); err != nil {
			return err
		}
	}
	for t, n := range b.tagUses {
		if err := b.exec(ctx, sqlCountTag, n, t.id); err != nil {
			return err
		}
		if err := b.countTag(ctx, t, n); err != nil {
			return err
		}
	}
	return b.writeTagHours(ctx)
}
