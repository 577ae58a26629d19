package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
