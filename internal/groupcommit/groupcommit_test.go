package groupcommit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBatchesAndAnswersAfterCommit(t *testing.T) {
	var committed atomic.Int64
	var batches atomic.Int64
	release := make(chan struct{})
	c := New(func(ctx context.Context, jobs []*Job[int, int]) error {
		<-release // hold the first batch so that the rest queue up behind it
		batches.Add(1)
		for _, j := range jobs {
			if j.In < 0 {
				j.Err = errors.New("negative")
				continue
			}
			j.Out = j.In * 2
		}
		committed.Add(int64(len(jobs)))
		return nil
	}, 64, 128, nil)
	var wg sync.WaitGroup
	for i := -1; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := c.Submit(context.Background(), i)
			if i < 0 {
				if err == nil {
					t.Error("the job's own error was not returned")
				}
				return
			}
			if err != nil || out != i*2 {
				t.Errorf("job %d: %d %v", i, out, err)
			}
			if committed.Load() == 0 {
				t.Error("answered before its batch committed")
			}
		}(i)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	c.Close()
	if n := batches.Load(); n >= 101 || n < 2 {
		t.Fatalf("%d batches for 101 jobs: no batching happened", n)
	}
}

func TestBatchErrorFailsEveryJobAndCloseRefuses(t *testing.T) {
	boom := errors.New("disk full")
	var sizes []int
	c := New(func(ctx context.Context, jobs []*Job[int, int]) error { return boom }, 8, 8,
		func(size int, d time.Duration, err error) { sizes = append(sizes, size) })
	if _, err := c.Submit(context.Background(), 1); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	c.Close()
	c.Close()
	if _, err := c.Submit(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if len(sizes) != 1 || sizes[0] != 1 {
		t.Fatalf("stats = %v", sizes)
	}
}
