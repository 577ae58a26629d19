package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidings-dev/tidings"
)

// The full-text index trails the events. A publish commits its event, its tag rows
// and counts; the event's row of events_fts is written a moment later by the indexer,
// for every event committed meanwhile in one step inside one batch of the group
// committer. FTS5 pays for each transaction that adds rows (it flushes a new segment
// and merges the old ones), so rows added a hundred at a time cost far less than rows
// added with each batch of publishes (docs/performance.md, "Search indexing after the
// commit").
//
// search_indexed holds the watermark: the events up to it (after the backfill's) have
// their rows, those above it none. A step reads which events above the watermark
// exist, indexes them and moves the watermark in the same transaction, so a crash
// loses nothing: the next start indexes from the watermark. The rows are made by the
// writer as it writes each event and kept in memory until the step; an event the
// memory does not hold (after a restart, past maxPendingBytes, or published by another
// process on the same folder) is read back from the events table.
//
// A search waits for the steps to cover the events committed before it began
// (waitIndexed), so it never misses an event whose publish was answered.
const (
	// indexDelay is how long the indexer lets events gather after a commit before it
	// indexes them, unless a search is waiting (Options.IndexDelay).
	indexDelay = 100 * time.Millisecond
	// indexPoll is how often the indexer looks for events another process committed.
	indexPoll = time.Second
	// maxIndexWait bounds how long a search waits for the index.
	maxIndexWait = 5 * time.Second
)

const (
	indexChunk = 4096 // events one step indexes at most
	// maxPendingBytes bounds the text of the rows held in memory for the indexer (events
	// of 9 KB descriptions at full load fill it in about a second); beyond, the rows
	// are read back from the events table at the step.
	maxPendingBytes = 16 << 20
)

const (
	sqlSearchMark    = `SELECT seq FROM search_indexed`
	sqlSetSearchMark = `UPDATE search_indexed SET seq = ?`
	sqlEventsAbove   = `SELECT seq FROM events WHERE seq > ? ORDER BY seq LIMIT ?`
)

// searchRow is an event's row of the full-text index.
type searchRow struct {
	seq         int64
	text, scope string
	at          int64 // when its event was committed, unix ms (the indexer's lag)
}

// size is what the row holds in memory, about.
func (r searchRow) size() int { return len(r.text) + len(r.scope) + 64 }

// indexer is the trailing indexer's state.
type indexer struct {
	// pending and step belong to the writer goroutine (commitBatch and the steps it
	// runs): rows of committed events above the watermark, in seq order, and the step
	// of the batch being committed.
	pending      []searchRow
	pendingBytes int
	maxBytes     int           // maxPendingBytes (smaller in a test)
	delay        time.Duration // how long events gather after a commit (indexDelay)
	maxWait      time.Duration // how long a search waits for the index (maxIndexWait; shorter in a test)
	wrote        atomic.Bool   // this process committed events (Close indexes them before it stops)

	mark      atomic.Int64 // the watermark, as committed
	committed atomic.Int64 // the last seq this process committed, or found at Open
	oldest    atomic.Int64 // commit time (unix ms) of the oldest row not indexed, 0: none
	mu        sync.Mutex
	advanced  chan struct{} // closed (and replaced) when the watermark moves

	wake    chan struct{} // events were committed
	urgent  chan struct{} // a search waits
	stop    chan struct{}
	stopped chan struct{}
	closing sync.Once
	// onIndexed is told about each step that indexed rows: how many, and how long
	// the oldest waited since its commit.
	onIndexed func(rows int, lag time.Duration)
}

// indexStep is what a batch's step did, applied to the indexer when the batch commits.
type indexStep struct {
	through int64 // the new watermark
	rows    int
	oldest  int64 // commit time of the oldest row indexed (unix ms)
	more    bool  // events above through remain
}

// startIndexer reads the watermark and starts the indexer's goroutine.
func (db *DB) startIndexer(ctx context.Context, delay time.Duration, onIndexed func(int, time.Duration)) error {
	ix := &db.ix
	var mark, last int64
	if err := db.write.QueryRowContext(ctx, sqlSearchMark).Scan(&mark); err != nil {
		return fmt.Errorf("search watermark: %w", err)
	}
	if err := db.write.QueryRowContext(ctx, sqlLastSeq).Scan(&last); err != nil {
		return fmt.Errorf("event_seq: %w", err)
	}
	ix.mark.Store(mark)
	ix.committed.Store(last)
	ix.advanced = make(chan struct{})
	ix.wake, ix.urgent = make(chan struct{}, 1), make(chan struct{}, 1)
	ix.stop, ix.stopped = make(chan struct{}), make(chan struct{})
	ix.onIndexed = onIndexed
	ix.delay = cmp.Or(delay, indexDelay)
	ix.maxWait = maxIndexWait
	ix.maxBytes = maxPendingBytes
	if last > mark {
		ix.wake <- struct{}{} // a crash left events unindexed
	}
	go db.runIndexer()
	return nil
}

// runIndexer indexes the committed events a moment after their commit, at once when
// a search waits for them.
func (db *DB) runIndexer() {
	ix := &db.ix
	defer close(ix.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	poll := time.NewTicker(indexPoll)
	defer poll.Stop()
	for {
		hurry := false
		select {
		case <-ix.stop:
			return
		case <-ix.wake:
		case <-ix.urgent:
			hurry = true
		case <-poll.C:
			if !db.foreignEvents(ctx) {
				continue
			}
		}
		if !hurry {
			t := time.NewTimer(ix.delay)
			select {
			case <-ix.stop:
				t.Stop()
				return
			case <-ix.urgent:
			case <-t.C:
			}
			t.Stop()
		}
		for {
			step, err := db.indexOnce(ctx)
			if err != nil {
				// The disk refuses or the store closes: try again later (a search
				// waiting meanwhile gives up after maxIndexWait and says nothing wrong,
				// it only misses the newest events).
				select {
				case <-ix.stop:
					return
				case <-time.After(time.Second):
				}
				break
			}
			if !step.more {
				break
			}
		}
	}
}

// foreignEvents reports whether events are committed above the watermark that this
// process did not commit (a management command writing beside the server).
func (db *DB) foreignEvents(ctx context.Context) bool {
	var last int64
	if err := db.read.QueryRowContext(ctx, sqlLastSeq).Scan(&last); err != nil {
		return false
	}
	if last > db.ix.committed.Load() {
		db.setCommitted(last)
	}
	return last > db.ix.mark.Load()
}

func (db *DB) setCommitted(seq int64) {
	for {
		c := db.ix.committed.Load()
		if seq <= c || db.ix.committed.CompareAndSwap(c, seq) {
			return
		}
	}
}

// indexOnce runs one step in the next batch.
func (db *DB) indexOnce(ctx context.Context) (indexStep, error) {
	res, err := db.submit(ctx, &writeJob{index: true})
	if err != nil || res.indexed == nil {
		return indexStep{}, err
	}
	return *res.indexed, nil
}

// waitIndexed waits until the full-text index holds every event committed before it
// was called (at most ix.maxWait: then the search goes on without the newest).
func (db *DB) waitIndexed(ctx context.Context) {
	ix := &db.ix
	target := ix.committed.Load()
	if ix.mark.Load() >= target {
		return
	}
	timeout := time.NewTimer(ix.maxWait)
	defer timeout.Stop()
	for {
		ix.mu.Lock()
		advanced := ix.advanced
		ix.mu.Unlock()
		if ix.mark.Load() >= target {
			return
		}
		select {
		case ix.urgent <- struct{}{}:
		default:
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return
		case <-timeout.C:
			return
		}
	}
}

// SearchLag reports how many events are committed but not yet in the full-text index
// (deleted ones included), and when the oldest of them was committed.
func (db *DB) SearchLag() (int64, time.Time) {
	n := max(db.ix.committed.Load()-db.ix.mark.Load(), 0)
	var oldest time.Time
	if at := db.ix.oldest.Load(); n > 0 && at > 0 {
		oldest = fromMS(at)
	}
	return n, oldest
}

// stopIndexer stops the goroutine, then indexes what this process committed, so that
// the next start need not read it back.
func (db *DB) stopIndexer() {
	ix := &db.ix
	if ix.stop == nil {
		return
	}
	first := false
	ix.closing.Do(func() { close(ix.stop); first = true })
	<-ix.stopped
	if !first || !ix.wrote.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ix.mark.Load() < ix.committed.Load() {
		step, err := db.indexOnce(ctx)
		if err != nil || !step.more {
			return
		}
	}
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

// setMark moves the watermark and wakes the searches waiting for it.
func (ix *indexer) setMark(seq int64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if seq <= ix.mark.Load() {
		return
	}
	ix.mark.Store(seq)
	close(ix.advanced)
	ix.advanced = make(chan struct{})
}

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
