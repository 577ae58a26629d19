package tidings

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Inconsistency is one derived row (an index row, a count, a history point) that does
// not agree with what it is derived from.
type Inconsistency struct {
	Kind     string // what was checked, e.g. "tag_index.orphan"
	Where    string // the ids concerned, e.g. "project 3 tag 12 seq 40"
	Expected string
	Found    string
}

func (i Inconsistency) String() string {
	return fmt.Sprintf("%s: %s: expected %s, found %s", i.Kind, i.Where, i.Expected, i.Found)
}

// CheckReport is what a consistency check found.
type CheckReport struct {
	Events   int64           // events in the store
	Checks   []string        // the kinds of check that ran, in order
	Took     []time.Duration // how long each of Checks took
	Problems []Inconsistency // at most MaxReported of each kind
	// Omitted counts the inconsistencies found beyond MaxReported of a kind.
	Omitted int64
}

// MaxReported is how many inconsistencies of one kind a report lists; more are counted.
const MaxReported = 100

// Add records an inconsistency, listing at most MaxReported of a kind.
func (r *CheckReport) Add(i Inconsistency) {
	n := 0
	for _, p := range r.Problems {
		if p.Kind == i.Kind {
			n++
		}
	}
	if n >= MaxReported {
		r.Omitted++
		return
	}
	r.Problems = append(r.Problems, i)
}

// OK reports whether nothing was found.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 && r.Omitted == 0 }

// Checker verifies every structure a store derives from its events against them:
// tag-index rows and tag counts, full-text rows, hourly counts, per-user event counts
// and first/last seen, insight history against insight values, outbox rows against
// events, and that no derived row of one project names an event of another. It only
// reads, and is safe beside a running server: each check reads one snapshot.
// A new derived structure comes with a check here.
type Checker interface {
	Check(ctx context.Context) (*CheckReport, error)
}

// RunChecks runs the checks named kinds side by side, workers at a time; run(i, r)
// runs the i-th into its own report. The reports are joined in the order of kinds,
// with each check's time; the first error ends the check.
func RunChecks(ctx context.Context, kinds []string, workers int, run func(ctx context.Context, i int, r *CheckReport) error) (*CheckReport, error) {
	reports := make([]CheckReport, len(kinds))
	took := make([]time.Duration, len(kinds))
	errs := make([]error, len(kinds))
	next := make(chan int, len(kinds))
	for i := range kinds {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				errs[i] = run(ctx, i, &reports[i])
				took[i] = time.Since(start)
			}
		}()
	}
	wg.Wait()
	r := &CheckReport{}
	for i, kind := range kinds {
		if errs[i] != nil {
			return nil, fmt.Errorf("check %s: %w", kind, errs[i])
		}
		r.Checks, r.Took = append(r.Checks, kind), append(r.Took, took[i])
		for _, p := range reports[i].Problems {
			r.Add(p)
		}
		r.Omitted += reports[i].Omitted
	}
	return r, nil
}
