// The rows of the full-text index: made from events read back from the events table
// (after a restart, past the indexer's memory, or by the backfill), and written many
// per statement.

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/tidings-dev/tidings"
)

// searchRow is an event's row of the full-text index.
type searchRow struct {
	seq         int64
	text, scope string
	at          int64 // when its event was committed, unix ms (the indexer's lag)
}

// size is what the row holds in memory, about.
func (r searchRow) size() int { return len(r.text) + len(r.scope) + 64 }

// searchRowsOf reads events (seq, project_id, channel_id, event, description, tags,
// user_id, created_at, in that order) and makes their rows of the full-text index,
// looking their tags up in the dictionary.
func searchRowsOf(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]searchRow, error) {
	type event struct {
		seq, project, channel, at int64
		ev                        tidings.Event
	}
	rs, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var evs []event
	for rs.Next() {
		var e event
		var tags string
		if err := rs.Scan(&e.seq, &e.project, &e.channel, &e.ev.Event, &e.ev.Description, &tags, &e.ev.UserID, &e.at); err != nil {
			rs.Close()
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &e.ev.Tags); err != nil {
			rs.Close()
			return nil, err
		}
		evs = append(evs, e)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	findTag, err := tx.PrepareContext(ctx, sqlFindTag)
	if err != nil {
		return nil, err
	}
	defer findTag.Close()
	tagIDs := map[tagKey]int64{}
	out := make([]searchRow, 0, len(evs))
	for _, e := range evs {
		ids := make([]int64, 0, len(e.ev.Tags))
		for _, t := range e.ev.Tags {
			k := tagKey{e.project, t.Key, t.Value}
			id, ok := tagIDs[k]
			if !ok {
				if err := findTag.QueryRowContext(ctx, e.project, t.Key, t.Value).Scan(&id); err != nil && !errors.Is(err, sql.ErrNoRows) {
					return nil, err
				}
				tagIDs[k] = id
			}
			if id != 0 {
				ids = append(ids, id)
			}
		}
		out = append(out, searchRow{seq: e.seq, text: searchText(&e.ev), scope: searchScope(e.project, e.channel, ids, e.ev.UserID), at: e.at})
	}
	return out, nil
}

// writeSearchRows writes rows of the full-text index, searchChunk per statement, with
// exec (n rows, 3n arguments).
func writeSearchRows(rows []searchRow, exec func(n int, args []any) error) error {
	args := make([]any, 0, 3*searchChunk)
	for len(rows) > 0 {
		n := min(len(rows), searchChunk)
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.seq, r.text, r.scope)
		}
		if err := exec(n, args); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
