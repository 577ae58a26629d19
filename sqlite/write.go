package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/groupcommit"
)

// writeJob is one event or insight change waiting for the group committer.
type writeJob struct {
	accountID int64
	event     *tidings.NewEvent
	insight   *tidings.InsightChange
}

type writeResult struct {
	event   *tidings.Event
	insight *tidings.Insight
}

type job = groupcommit.Job[*writeJob, *writeResult]

func (db *DB) submit(ctx context.Context, w *writeJob) (*writeResult, error) {
	res, err := db.writer.Submit(ctx, w)
	if errors.Is(err, groupcommit.ErrClosed) {
		return nil, tidings.Errorf(tidings.EUnavailable, "the service is shutting down; retry in a moment")
	}
	return res, err
}

// commitBatch applies every job in one transaction. Each job runs inside a savepoint,
// so a job that fails (unknown project, non-numeric insight) leaves no trace and does
// not fail its neighbours. The transaction commits once, with one fsync, for all.
func (db *DB) commitBatch(ctx context.Context, jobs []*job) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback()
	now := db.stamp()
	for _, j := range jobs {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT job"); err != nil {
			return err
		}
		res := &writeResult{}
		var jerr error
		switch {
		case j.In.event != nil:
			res.event, jerr = db.insertEvent(ctx, tx, j.In.accountID, j.In.event, now)
		case j.In.insight != nil:
			res.insight, jerr = db.applyInsight(ctx, tx, j.In.accountID, j.In.insight, now)
		}
		if jerr != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO job; RELEASE job"); err != nil {
				return err
			}
			j.Err = jerr
			continue
		}
		if _, err := tx.ExecContext(ctx, "RELEASE job"); err != nil {
			return err
		}
		j.Out = res
	}
	if err := tx.Commit(); err != nil {
		for _, j := range jobs {
			j.Out = nil
		}
		return fmt.Errorf("commit batch: %w", err)
	}
	return nil
}

func nullIfNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}
