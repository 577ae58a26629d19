package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestCapsAcrossInstances: two instances creating insights and channels in one project
// at once stop at the caps together (each instance's group committer serialises only
// its own writes: the project's row lock serialises the two).
func TestCapsAcrossInstances(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	ctx := t.Context()
	if err := p.a.SetAutoCreateChannels(ctx, p.account.ID, "my-saas", true); err != nil {
		t.Fatal(err)
	}
	const over = 40
	var insights, channels, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2*(tidings.MaxInsightsPerProject+over))
	count := func(n *atomic.Int64, err error) {
		switch tidings.ErrorCode(err) {
		case "":
			n.Add(1)
		case tidings.ELimitReached:
			refused.Add(1)
		default:
			errs <- err
		}
	}
	for i := range tidings.MaxInsightsPerProject + over {
		db := p.a
		if i%2 == 1 {
			db = p.b
		}
		wg.Go(func() {
			_, err := db.ApplyInsight(ctx, p.account.ID, &tidings.InsightChange{Project: "my-saas",
				Title: fmt.Sprintf("I%d", i), Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
			count(&insights, err)
		})
	}
	for i := range tidings.MaxChannelsPerProject - 1 + over {
		db := p.b
		if i%2 == 1 {
			db = p.a
		}
		wg.Go(func() {
			name := fmt.Sprintf("c%d", i)
			var err error
			if i%4 < 2 {
				_, err = db.PublishEvent(ctx, p.account.ID, &tidings.NewEvent{Project: "my-saas", Channel: name, Event: "x",
					Parser: tidings.ParserText})
			} else {
				_, err = db.CreateChannel(context.Background(), p.account.ID, "my-saas", name)
			}
			count(&channels, err)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if insights.Load() != tidings.MaxInsightsPerProject || channels.Load() != tidings.MaxChannelsPerProject-1 || refused.Load() != 2*over {
		t.Fatalf("%d insights and %d channels created, %d refused; want %d, %d and %d", insights.Load(), channels.Load(),
			refused.Load(), tidings.MaxInsightsPerProject, tidings.MaxChannelsPerProject-1, 2*over)
	}
	cs, err := p.b.ListChannels(ctx, p.account.ID, "my-saas")
	if err != nil || len(cs) != tidings.MaxChannelsPerProject {
		t.Fatalf("%d channels (%v)", len(cs), err)
	}
}
