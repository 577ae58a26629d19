package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// The hourly counts of common tags (migration 20): a tag of the dictionary that has had
// at least Options.TagRollup events is "rolled" (tags.rolled), and tag_hours holds its
// events counted per UTC hour, so that a chart of a tag of millions of events reads a
// few hundred rows. A tag becomes rolled in the batch whose events bring its count to
// the threshold: that batch fills its rows from its rows of the tag index (its own
// events' included), and from then on every batch adds its events per hour, and every
// deletion subtracts them (an hour that reaches 0 loses its row). A rolled tag stays
// rolled when its count falls below the threshold later: its rows stay exact.

var _ tidings.TagHourCounter = (*DB)(nil)

// tagEntry is a dictionary entry as a batch knows it: count is the transaction's, with
// the batch's events added as writeCounts writes them.
type tagEntry struct {
	id, count int64
	rolled    bool
}

type tagHourKey struct{ tag, hour int64 }

func rollupOf(opts Options) int64 {
	if opts.TagRollup > 0 {
		return opts.TagRollup
	}
	return tidings.TagRollup
}

const (
	// sqlCountTagHour adds a batch's events of a rolled tag in one hour.
	sqlCountTagHour = `INSERT INTO tag_hours (tag_id, hour, n) VALUES (?, ?, ?)
		ON CONFLICT (tag_id, hour) DO UPDATE SET n = n + excluded.n`
	// sqlRollTag fills a tag's hourly counts from its rows of the tag index, in the
	// index's order (a stray row left from before is replaced).
	sqlRollTag = `INSERT INTO tag_hours (tag_id, hour, n) SELECT tag_id, ts - ts % 3600000, count(*) FROM event_tags WHERE tag_id = ? GROUP BY 2`
)

// countTag notes that n of the batch's events, just written, have tag t: when they bring
// its count to the threshold, it becomes rolled and its hourly counts are filled.
func (b *batch) countTag(ctx context.Context, t *tagEntry, n int64) error {
	t.count += n
	if t.rolled || t.count < b.db.tagRollup {
		return nil
	}
	// Rare (once per tag): not prepared statements.
	for _, q := range []string{`DELETE FROM tag_hours WHERE tag_id = ?`, sqlRollTag, `UPDATE tags SET rolled = 1 WHERE id = ?`} {
		if _, err := b.tx.ExecContext(ctx, q, t.id); err != nil {
			return err
		}
	}
	t.rolled = true
	return nil
}

// writeTagHours adds the batch's events of rolled tags to their hourly counts: one
// upsert per tag and hour.
func (b *batch) writeTagHours(ctx context.Context) error {
	for k, n := range b.tagHours {
		if err := b.exec(ctx, sqlCountTagHour, k.tag, k.hour, n); err != nil {
			return err
		}
	}
	return nil
}

// subtractTagHours takes deleted events out of their rolled tags' hourly counts; an
// hour left without events loses its row.
func subtractTagHours(ctx context.Context, tx *sql.Tx, gone map[tagHourKey]int64) error {
	for k, n := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tag_hours WHERE tag_id = ? AND hour = ? AND n <= ?`, k.tag, k.hour, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tag_hours SET n = n - ? WHERE tag_id = ? AND hour = ?`, n, k.tag, k.hour); err != nil {
			return err
		}
	}
	return nil
}

// sqlChannelTagHoursGone takes the events of a channel about to be deleted (?1 project,
// ?2 channel name) out of the hourly counts of the project's rolled tags, read from
// the channel's rows of the tag index before they go; then the hours left at 0 go.
const sqlChannelTagHoursGone = `WITH gone AS (SELECT t.tag_id, t.ts - t.ts % 3600000 AS hour, count(*) AS n FROM event_tags t
		WHERE t.tag_id IN (SELECT id FROM tags WHERE project_id = ?1 AND rolled)
		  AND t.channel_id = (SELECT id FROM channels WHERE project_id = ?1 AND name = ?2)
		GROUP BY 1, 2)
	UPDATE tag_hours SET n = tag_hours.n - gone.n FROM gone WHERE tag_hours.tag_id = gone.tag_id AND tag_hours.hour = gone.hour`

const sqlDropEmptyTagHours = `DELETE FROM tag_hours WHERE n <= 0 AND tag_id IN (SELECT id FROM tags WHERE project_id = ?1 AND rolled)`

// hourBound is the first whole hour at or after ms: counts are kept per whole hour, so
// [from, to) is read as the hours that begin in it.
func hourBound(ms int64) int64 {
	if h := hourOf(ms); h != ms {
		return h + 3_600_000
	}
	return ms
}

// CountTagHours returns the counts per value and UTC hour, for the hours that begin in
// [from, to), of the project's events with tag key (and value, when not nil): the
// rolled values' from their hourly counts (one query, by the partial index
// tags_rolled: a key's rare values are not read for it), the others' from their rows
// of the tag index, read only when those values' counts add up to at most max
// (ErrScanBudget: the dictionary is read until the sum passes max, then the rows in
// one query). All run in one read transaction: a value rolled meanwhile is counted once.
func (db *DB) CountTagHours(ctx context.Context, accountID int64, project, key string, value *string, from, to time.Time, max int) ([]tidings.TagHourCount, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	lo, hi := hourBound(ms(from)), hourBound(ms(to))
	out := []tidings.TagHourCount{}
	if lo >= hi {
		return out, nil
	}
	if max < 0 {
		max = 0
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// A key without a value matches every value (a point lookup of the dictionary
	// with one, a range of its index without).
	of, v := "", ""
	if value != nil {
		of, v = " AND value = ?3", *value
	}
	rows, err := tx.QueryContext(ctx, `SELECT g.value, h.hour, h.n FROM tags g JOIN tag_hours h ON h.tag_id = g.id
		WHERE g.project_id = ?1 AND g.key = ?2 AND g.rolled`+strings.Replace(of, "value", "g.value", 1)+` AND h.hour >= ?4 AND h.hour < ?5`,
		p.ID, key, v, lo, hi)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c tidings.TagHourCount
		var hour int64
		if err := rows.Scan(&c.Value, &hour, &c.N); err != nil {
			rows.Close()
			return nil, err
		}
		c.Hour = fromMS(hour)
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The other values: their counts, read from the dictionary until they add up to
	// more than max (a key of 200,000 rare values is refused after a few thousand), are
	// the rows to read; then their rows of the tag index, read in one query.
	args := []any{p.ID, key}
	if value != nil {
		args = append(args, v)
	}
	rows, err = tx.QueryContext(ctx, `SELECT id, value, count FROM tags WHERE project_id = ?1 AND key = ?2 AND NOT rolled`+of+` AND count > 0`, args...)
	if err != nil {
		return nil, err
	}
	rare := map[int64]string{}
	ids := []byte{'['}
	var budget int64
	for rows.Next() {
		var id, n int64
		var v string
		if err := rows.Scan(&id, &v, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if budget += n; budget > int64(max) {
			rows.Close()
			return nil, tidings.ErrScanBudget
		}
		if len(rare) > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, id, 10)
		rare[id] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(rare) > 0 {
		rows, err := tx.QueryContext(ctx, `SELECT t.tag_id, t.ts - t.ts % 3600000, count(*) FROM event_tags t
			WHERE t.tag_id IN (SELECT value FROM json_each(?)) AND t.ts >= ? AND t.ts < ? GROUP BY 1, 2`, string(append(ids, ']')), lo, hi)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var id, hour, n int64
			if err := rows.Scan(&id, &hour, &n); err != nil {
				return nil, err
			}
			out = append(out, tidings.TagHourCount{Value: rare[id], Hour: fromMS(hour), N: n})
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b tidings.TagHourCount) int {
		return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Value, b.Value))
	})
	return out, nil
}
