package charts

import (
	"context"
	"sync/atomic"

	"github.com/tidings-dev/tidings"
)

// MaxPageScan is how many events the questions of one dashboard page (a board of up
// to tidings.MaxBoardCards cards) may read together: each question reads at most
// tidings.MaxChartScan, and a page of many costly cards stops when the page's budget
// is spent, its other cards saying so.
const MaxPageScan = 1_000_000

type budgetKey struct{}

// WithBudget bounds the events all the questions asked with the returned context read
// together.
func WithBudget(ctx context.Context, events int64) context.Context {
	b := &atomic.Int64{}
	b.Store(events)
	return context.WithValue(ctx, budgetKey{}, b)
}

// allowance is how many events the next question may read: its own budget, or what
// is left of its context's, and the counter to charge (nil without one).
func allowance(ctx context.Context) (int, *atomic.Int64) {
	b, _ := ctx.Value(budgetKey{}).(*atomic.Int64)
	if b == nil {
		return tidings.MaxChartScan, nil
	}
	return int(min(int64(tidings.MaxChartScan), max(0, b.Load()))), b
}

// spent refuses a question asked once its context's budget is spent.
func spent() error {
	var p tidings.Problems
	p.Add("from", "too_costly", "the other questions of this page read the %d events a page may: open this one alone to see it", MaxPageScan)
	return p.Err()
}
