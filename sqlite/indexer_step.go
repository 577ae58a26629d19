// The indexer's step: run by the writer inside a batch of the group committer, it
// indexes the events above the watermark; after the commit, afterCommit moves the
// watermark and keeps the batch's own rows in memory (within maxPendingBytes) for the
// next step.

package sqlite

import (
	"context"
	"slices"
	"time"
)

// indexStep is what a batch's step did, applied to the indexer when the batch commits.
type indexStep struct {
	through int64 // the new watermark
	rows    int
	oldest  int64 // commit time of the oldest row indexed (unix ms)
	more    bool  // events above through remain
}

// indexSearch is a step, run by the writer inside a batch (after writeDerived, so
// event_seq is current): it indexes up to indexChunk events above the watermark.
func (b *batch) indexSearch(ctx context.Context) error {
	ix := &b.db.ix
	var mark, last int64
	if err := b.queryRow(ctx, sqlSearchMark).Scan(&mark); err != nil {
		return err
	}
	if err := b.queryRow(ctx, sqlLastSeq).Scan(&last); err != nil {
		return err
	}
	b.indexed = &indexStep{through: mark}
	if last <= mark {
		return nil
	}
	seqs, err := b.eventsAbove(ctx, mark)
	if err != nil {
		return err
	}
	step := &indexStep{through: last}
	if len(seqs) == indexChunk {
		step.through, step.more = seqs[len(seqs)-1], true
	}
	// The events that exist, from memory where it has them: a row in memory whose event
	// is gone (deleted since) is skipped.
	rows := make([]searchRow, 0, len(seqs))
	var missing []int64
	p := ix.pending
	i := 0
	for _, s := range seqs {
		for i < len(p) && p[i].seq < s {
			i++
		}
		if i < len(p) && p[i].seq == s {
			rows = append(rows, p[i])
			i++
			continue
		}
		missing = append(missing, s)
	}
	if len(missing) > 0 {
		read, err := searchRowsOf(ctx, b.tx, `SELECT seq, project_id, channel_id, event, description, tags, user_id, created_at
			FROM events WHERE seq >= ? AND seq <= ?`, missing[0], missing[len(missing)-1])
		if err != nil {
			return err
		}
		want := make(map[int64]bool, len(missing))
		for _, s := range missing {
			want[s] = true
		}
		for _, r := range read {
			if want[r.seq] {
				rows = append(rows, r)
			}
		}
		slices.SortFunc(rows, func(a, b searchRow) int { return int(a.seq - b.seq) })
	}
	for _, r := range rows {
		if step.oldest == 0 || r.at < step.oldest {
			step.oldest = r.at
		}
	}
	step.rows = len(rows)
	args := make([]any, 0, 3*len(rows))
	for _, r := range rows {
		args = append(args, r.seq, r.text, r.scope)
	}
	if err := b.execRows(ctx, searchStatements, searchChunk, 3, args); err != nil {
		return err
	}
	if err := b.exec(ctx, sqlSetSearchMark, step.through); err != nil {
		return err
	}
	b.indexed = step
	return nil
}

// eventsAbove lists the seqs of up to indexChunk events above mark.
func (b *batch) eventsAbove(ctx context.Context, mark int64) ([]int64, error) {
	s, err := b.stmt(ctx, sqlEventsAbove)
	if err != nil {
		return nil, err
	}
	rs, err := s.QueryContext(ctx, mark, indexChunk)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var seqs []int64
	for rs.Next() {
		var s int64
		if err := rs.Scan(&s); err != nil {
			return nil, err
		}
		seqs = append(seqs, s)
	}
	return seqs, rs.Err()
}

// afterCommit hands the indexer what a committed batch did: its step, and its events'
// rows for the next one. It runs on the writer goroutine.
func (ix *indexer) afterCommit(b *batch) {
	if s := b.indexed; s != nil {
		i := 0
		for i < len(ix.pending) && ix.pending[i].seq <= s.through {
			ix.pendingBytes -= ix.pending[i].size()
			i++
		}
		ix.pending = slices.Delete(ix.pending, 0, i)
		ix.setMark(s.through)
		if s.rows > 0 && ix.onIndexed != nil {
			ix.onIndexed(s.rows, time.Duration(max(time.Now().UnixMilli()-s.oldest, 0))*time.Millisecond)
		}
	}
	mark := ix.mark.Load()
	for _, r := range b.searchRows {
		if r.seq > mark && ix.pendingBytes+r.size() <= ix.maxBytes {
			ix.pending = append(ix.pending, r)
			ix.pendingBytes += r.size()
		}
	}
	if len(ix.pending) > 0 {
		ix.oldest.Store(ix.pending[0].at)
	} else {
		ix.oldest.Store(0)
	}
	if len(b.searchRows) > 0 || b.indexed != nil && b.indexed.more {
		if len(b.searchRows) > 0 {
			ix.wrote.Store(true)
		}
		select {
		case ix.wake <- struct{}{}:
		default:
		}
	}
	if b.seq > 0 {
		b.db.setCommitted(b.seq)
	}
}
