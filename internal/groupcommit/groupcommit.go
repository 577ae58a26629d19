// Package groupcommit batches concurrent writes into shared transactions: one writer
// goroutine takes every job that is waiting, commits them together, and only then
// answers each. One fsync then acknowledges many requests.
package groupcommit

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
)

// ErrClosed is returned for jobs submitted after Close.
var ErrClosed = errors.New("groupcommit: closed")

// Job is one unit of work with its result.
type Job[T, R any] struct {
	In  T
	Out R
	Err error
	// done receives one value once Out/Err are final (after the batch committed or
	// failed); a job answered is reused for a later Submit (Committer.jobs).
	done chan struct{}
}

// CommitFunc runs a batch in one transaction. It sets Out or Err of each job: a job's
// own error (say, unknown project) must not fail the others. A returned error fails
// every job that has no error of its own — nothing of the batch was committed.
type CommitFunc[T, R any] func(ctx context.Context, jobs []*Job[T, R]) error

// Stats is told the size and duration of every batch.
type Stats func(size int, d time.Duration, err error)

// Committer is the single writer.
type Committer[T, R any] struct {
	commit   CommitFunc[T, R]
	stats    Stats
	maxBatch int
	queue    chan *Job[T, R]
	mu       sync.RWMutex // guards closed against concurrent Submit
	closed   bool
	stopped  chan struct{}
	// jobs are answered jobs, ready for reuse: a Submit allocates neither its job nor
	// its channel (a job whose submitter gave up is never reused).
	jobs sync.Pool
}

// New starts a committer that commits at most maxBatch jobs per transaction and keeps
// at most queueLen jobs waiting.
func New[T, R any](commit CommitFunc[T, R], maxBatch, queueLen int, stats Stats) *Committer[T, R] {
	c := &Committer[T, R]{
		commit: commit, stats: stats, maxBatch: maxBatch,
		queue:   make(chan *Job[T, R], queueLen),
		stopped: make(chan struct{}),
	}
	go c.run()
	return c
}

// Submit queues in and waits until its batch is committed. If ctx ends first the
// job may still be committed; the caller only stops waiting.
func (c *Committer[T, R]) Submit(ctx context.Context, in T) (R, error) {
	j, ok := c.jobs.Get().(*Job[T, R])
	if !ok {
		j = &Job[T, R]{done: make(chan struct{}, 1)}
	}
	j.In = in
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		var zero R
		return zero, ErrClosed
	}
	select {
	case c.queue <- j:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.mu.RUnlock()
		var zero R
		return zero, ctx.Err()
	}
	select {
	case <-j.done:
		out, err := j.Out, j.Err
		*j = Job[T, R]{done: j.done}
		c.jobs.Put(j)
		return out, err
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// QueueLen is the number of jobs waiting for the writer.
func (c *Committer[T, R]) QueueLen() int { return len(c.queue) }

// Close refuses new jobs, commits every queued one, and waits for the writer to stop.
func (c *Committer[T, R]) Close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.stopped
}

func (c *Committer[T, R]) run() {
	defer close(c.stopped)
	batch := make([]*Job[T, R], 0, c.maxBatch)
	for j := range c.queue {
		batch = append(batch[:0], j)
		for {
			n := len(batch)
			batch = c.drain(batch)
			if len(batch) == c.maxBatch || len(batch) == n && n > 1 {
				break
			}
			// Let the goroutines that are about to submit run first. On one CPU the
			// writer would otherwise commit each job alone, paying an fsync per job,
			// because the submitters never got the processor while it worked; with
			// more CPUs this costs a yield. It stops as soon as a yield brings nothing.
			runtime.Gosched()
			if len(c.queue) == 0 && len(batch) == n {
				break
			}
		}
		c.runBatch(batch)
	}
}

// drain adds the queued jobs to batch without waiting, up to maxBatch.
func (c *Committer[T, R]) drain(batch []*Job[T, R]) []*Job[T, R] {
	for len(batch) < c.maxBatch {
		select {
		case j, ok := <-c.queue:
			if !ok {
				return batch
			}
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

func (c *Committer[T, R]) runBatch(batch []*Job[T, R]) {
	start := time.Now()
	// The batch is committed even when its submitters have gone: they were told
	// nothing, and a committed write must not depend on who is still listening.
	err := c.commit(context.Background(), batch)
	if c.stats != nil {
		c.stats(len(batch), time.Since(start), err)
	}
	for _, j := range batch {
		if err != nil && j.Err == nil {
			j.Err = err
		}
		j.done <- struct{}{} // never blocks: one answer per Submit, room for one
	}
}
