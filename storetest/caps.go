package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidings-dev/tidings"
)

// over is how many creations past a cap the concurrent tests try.
const over = 50

// wantLimit checks that err is the cap's refusal, saying the cap and what to do.
func wantLimit(t *testing.T, err error, what string, max int) {
	t.Helper()
	wantCode(t, err, tidings.ELimitReached)
	msg := tidings.ErrorMessage(err)
	if !strings.Contains(msg, fmt.Sprintf("%d %s", max, what)) || !strings.Contains(msg, "delete") {
		t.Fatalf("message %q does not say the cap (%d %s) and what to do", msg, max, what)
	}
}

// createAtOnce runs create(i) for i in [0, n) at once and counts the creations made
// and those refused for the cap; any other error fails the test.
func createAtOnce(t *testing.T, n int, create func(i int) error) (made, refused int) {
	t.Helper()
	var m, r atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			err := create(i)
			switch tidings.ErrorCode(err) {
			case "":
				m.Add(1)
			case tidings.ELimitReached:
				r.Add(1)
			default:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return int(m.Load()), int(r.Load())
}

// testInsightCap: a project holds at most MaxInsightsPerProject insights, even when
// more are created at once; the existing ones can still be changed; a deletion makes room.
func testInsightCap(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	max := tidings.MaxInsightsPerProject
	made, refused := createAtOnce(t, max+over, func(i int) error {
		c := tidings.InsightChange{Project: "my-saas", Title: fmt.Sprintf("Insight %d", i), Value: "1",
			ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement}
		_, err := f.s.ApplyInsight(ctx, f.account.ID, &c)
		return err
	})
	if made != max || refused != over {
		t.Fatalf("%d insights created and %d refused, want %d and %d", made, refused, max, over)
	}
	list, err := f.s.ListInsights(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(list) != max {
		t.Fatalf("%d insights kept, want %d", len(list), max)
	}
	_, err = f.insight(t, tidings.InsightChange{Title: "One too many", Value: "1", Change: tidings.ChangeUpdate})
	wantLimit(t, err, "insights", max)
	// Changing one that exists is no creation.
	in, err := f.insight(t, tidings.InsightChange{Title: list[0].Title, Value: "41", Change: tidings.ChangeIncrement})
	must(t, err)
	if in.Value != "42" {
		t.Fatalf("increment of a full project's insight: %q", in.Value)
	}
	must(t, f.s.DeleteInsight(ctx, f.account.ID, "my-saas", list[0].Title))
	_, err = f.insight(t, tidings.InsightChange{Title: "One too many", Value: "1", Change: tidings.ChangeUpdate})
	must(t, err)
	// Another project has its own cap.
	_, err = f.s.CreateProject(ctx, f.account.ID, "other")
	must(t, err)
	_, err = f.insight(t, tidings.InsightChange{Project: "other", Title: "First", Value: "1", Change: tidings.ChangeUpdate})
	must(t, err)
}

// testChannelCap: a project holds at most MaxChannelsPerProject channels, whether they
// are created by hand or on first event, even at once; events to existing channels
// are still accepted.
func testChannelCap(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open) // "payments" is the first channel
	max := tidings.MaxChannelsPerProject
	must(t, f.s.SetAutoCreateChannels(ctx, f.account.ID, "my-saas", true))
	made, refused := createAtOnce(t, max-1+over, func(i int) error {
		name := fmt.Sprintf("c%d", i)
		switch i % 3 {
		case 0:
			_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", name)
			return err
		case 1:
			_, err := f.s.PublishEvent(ctx, f.account.ID, newEvent(name, "first"))
			return err
		}
		res, err := f.s.PublishEvents(ctx, f.account.ID, &tidings.NewBatch{Events: []*tidings.NewEvent{newEvent(name, "first")}})
		if err == nil {
			err = res[0].Err
		}
		return err
	})
	if made != max-1 || refused != over {
		t.Fatalf("%d channels created and %d refused, want %d and %d", made, refused, max-1, over)
	}
	cs, err := f.s.ListChannels(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(cs) != max {
		t.Fatalf("%d channels kept, want %d", len(cs), max)
	}
	_, err = f.s.CreateChannel(ctx, f.account.ID, "my-saas", "one-too-many")
	wantLimit(t, err, "channels", max)
	_, err = f.s.CreateChannel(ctx, f.account.ID, "my-saas", "payments")
	wantCode(t, err, tidings.EConflict)
	_, err = f.s.PublishEvent(ctx, f.account.ID, newEvent("one-too-many", "x"))
	wantLimit(t, err, "channels", max)
	// In a batch the new channel's event is refused alone.
	res, err := f.s.PublishEvents(ctx, f.account.ID, &tidings.NewBatch{Events: []*tidings.NewEvent{
		newEvent("one-too-many", "x"), newEvent("payments", "kept"), newEvent(cs[1].Name, "kept too")}})
	must(t, err)
	if res[0].Event != nil || res[1].Event == nil || res[2].Event == nil {
		t.Fatalf("batch in a full project: %+v", res)
	}
	wantLimit(t, res[0].Err, "channels", max)
	f.publish(t, tidings.NewEvent{Channel: cs[2].Name, Event: "still accepted"})
	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", cs[3].Name))
	f.publish(t, tidings.NewEvent{Channel: "one-too-many", Event: "room again"})
}
