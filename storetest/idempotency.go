package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// keyed is an idempotency key whose answer is the result as JSON.
func keyed[T any](key string) *tidings.Keyed[T] {
	return &tidings.Keyed[T]{Key: key, Fingerprint: "fp-" + key, Status: 200,
		Render: func(v T) ([]byte, error) { return json.Marshal(v) }}
}

// wantKept checks that the account's key keeps an answer that decodes into out.
func (f fixture) wantKept(t *testing.T, account int64, key string, out any) {
	t.Helper()
	a, err := f.s.FindAnswer(context.Background(), account, key)
	must(t, err)
	if a.Fingerprint != "fp-"+key || a.Status != 200 || a.CreatedAt.IsZero() {
		t.Fatalf("answer of %q: %+v", key, a)
	}
	must(t, json.Unmarshal(a.Body, out))
}

func (f fixture) wantNotKept(t *testing.T, key string) {
	t.Helper()
	_, err := f.s.FindAnswer(context.Background(), f.account.ID, key)
	wantCode(t, err, tidings.ENotFound)
}

func (f fixture) countEvents(t *testing.T) int {
	t.Helper()
	n, err := f.s.CountEvents(context.Background(), f.account.ID, "my-saas", "")
	must(t, err)
	return n
}

func newEvent(channel, name string) *tidings.NewEvent {
	return &tidings.NewEvent{Project: "my-saas", Channel: channel, Event: name, Parser: tidings.ParserText}
}

// testIdempotency: a keyed write keeps its answer with its effect; the key, once kept,
// refuses a second write (ErrKeyTaken) that changes nothing; a refused write keeps
// nothing; keys are the account's own; expired answers go in small batches.
func testIdempotency(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID

	// An event: kept, then the key refuses a second publish.
	e := newEvent("payments", "Paid")
	e.Key = keyed[*tidings.Event]("k-event")
	ev, err := f.s.PublishEvent(ctx, acct, e)
	must(t, err)
	var kept tidings.Event
	f.wantKept(t, acct, "k-event", &kept)
	if kept.ID != ev.ID || kept.Event != "Paid" {
		t.Fatalf("kept %+v, published %+v", kept, ev)
	}
	again := newEvent("payments", "Paid")
	again.Key = keyed[*tidings.Event]("k-event")
	_, err = f.s.PublishEvent(ctx, acct, again)
	if err != tidings.ErrKeyTaken {
		t.Fatalf("second publish with the key: %v, want ErrKeyTaken", err)
	}
	if n := f.countEvents(t); n != 1 {
		t.Fatalf("%d events after a replayed key, want 1", n)
	}

	// A refused publish keeps nothing: the same key works once the channel exists.
	lost := newEvent("nowhere", "Lost")
	lost.Key = keyed[*tidings.Event]("k-refused")
	_, err = f.s.PublishEvent(ctx, acct, lost)
	wantCode(t, err, tidings.EChannelNotFound)
	f.wantNotKept(t, "k-refused")
	_, err = f.s.CreateChannel(ctx, acct, "my-saas", "nowhere")
	must(t, err)
	lost = newEvent("nowhere", "Lost")
	lost.Key = keyed[*tidings.Event]("k-refused")
	_, err = f.s.PublishEvent(ctx, acct, lost)
	must(t, err)

	// An increment: applied once, one history point.
	inc := func() error {
		c := &tidings.InsightChange{Project: "my-saas", Title: "Signups", Value: "1", ValueKind: tidings.KindNumber,
			Change: tidings.ChangeIncrement, Key: keyed[*tidings.Insight]("k-inc")}
		_, err := f.s.ApplyInsight(ctx, acct, c)
		return err
	}
	must(t, inc())
	if err := inc(); err != tidings.ErrKeyTaken {
		t.Fatalf("second increment: %v", err)
	}
	var in tidings.Insight
	f.wantKept(t, acct, "k-inc", &in)
	hist, err := f.s.InsightHistory(ctx, acct, "my-saas", "Signups", 10)
	must(t, err)
	if in.Value != "1" || len(hist) != 1 || hist[0].Value != "1" {
		t.Fatalf("kept %+v, history %+v", in, hist)
	}
	// A refused change (not a number) keeps nothing.
	_, err = f.s.ApplyInsight(ctx, acct, &tidings.InsightChange{Project: "my-saas", Title: "Status", Value: "up",
		ValueKind: tidings.KindString, Change: tidings.ChangeUpdate})
	must(t, err)
	_, err = f.s.ApplyInsight(ctx, acct, &tidings.InsightChange{Project: "my-saas", Title: "Status", Value: "1",
		ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement, Key: keyed[*tidings.Insight]("k-not-numeric")})
	wantCode(t, err, tidings.EInsightNotNumeric)
	f.wantNotKept(t, "k-not-numeric")

	// Identify and group: the answer is the user or group after the change.
	_, err = f.s.Identify(ctx, acct, &tidings.Identify{Project: "my-saas", UserID: "u1",
		Properties: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}, Key: keyed[*tidings.Person]("k-id")})
	must(t, err)
	var person tidings.Person
	f.wantKept(t, acct, "k-id", &person)
	if person.UserID != "u1" || len(person.Properties) != 1 {
		t.Fatalf("kept person %+v", person)
	}
	_, err = f.s.Identify(ctx, acct, &tidings.Identify{Project: "my-saas", UserID: "u1", Key: keyed[*tidings.Person]("k-id")})
	if err != tidings.ErrKeyTaken {
		t.Fatalf("second identify: %v", err)
	}
	_, err = f.s.Group(ctx, acct, &tidings.GroupChange{Project: "my-saas", GroupID: "g1", UserID: "u1", Key: keyed[*tidings.Group]("k-group")})
	must(t, err)
	var group tidings.Group
	f.wantKept(t, acct, "k-group", &group)
	if group.GroupID != "g1" || group.Members != 1 {
		t.Fatalf("kept group %+v", group)
	}
	_, err = f.s.Group(ctx, acct, &tidings.GroupChange{Project: "my-saas", GroupID: "g2", Key: keyed[*tidings.Group]("k-group")})
	if err != tidings.ErrKeyTaken {
		t.Fatalf("second group: %v", err)
	}
	if _, err := f.s.FindGroup(ctx, acct, "my-saas", "g2"); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("the refused group call made its group: %v", err)
	}

	// Keys are the account's own: another account's same key is another key.
	other := newAccount(t, f.s, "globex")
	e = newEvent("payments", "Theirs")
	e.Key = keyed[*tidings.Event]("k-event")
	_, err = f.s.PublishEvent(ctx, other.ID, e)
	must(t, err)
	f.wantKept(t, other.ID, "k-event", &kept)
	if kept.Event != "Theirs" {
		t.Fatalf("the other account's key keeps %+v", kept)
	}

	// Expiry: answers kept before the cut go, a few at a time.
	total := 0
	for {
		n, err := f.s.ExpireAnswers(ctx, time.Now().Add(48*time.Hour), time.Now().Add(48*time.Hour), 2)
		must(t, err)
		if n > 2 {
			t.Fatalf("expired %d at once, max 2", n)
		}
		if n == 0 {
			break
		}
		total += n
	}
	if total != 6 { // k-event twice (two accounts), k-refused, k-inc, k-id, k-group
		t.Fatalf("expired %d answers, want 6", total)
	}
	f.wantNotKept(t, "k-event")
	if n, err := f.s.ExpireAnswers(ctx, time.Now().Add(48*time.Hour), time.Now().Add(48*time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("nothing left to expire: %d, %v", n, err)
	}
}

// testHookKeyExpiry: the keys of hooks' deliveries (tidings.HookKeyPrefix) expire on
// their own cut, kept when clients' keys of the same age go and gone when those are
// kept, a few at a time; a client's key that merely looks alike ("HOOK:", "hook-")
// is a client's.
func testHookKeyExpiry(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	hookKeys := []string{tidings.HookKeyPrefix + "hook_0a1b2c3d4e5f:evt_1", tidings.HookKeyPrefix + "hook_0a1b2c3d4e5f:evt_2",
		tidings.HookKeyPrefix + "hook_0a1b2c3d4e5f:evt_3"}
	clientKeys := []string{"client-1", "HOOK:upper", "hook-dash"}
	for i, k := range append(append([]string(nil), hookKeys...), clientKeys...) {
		e := newEvent("payments", fmt.Sprint("Paid ", i))
		e.Key = keyed[*tidings.Event](k)
		_, err := f.s.PublishEvent(ctx, acct, e)
		must(t, err)
	}
	kept := func(keys []string) int {
		t.Helper()
		n := 0
		for _, k := range keys {
			_, err := f.s.FindAnswer(ctx, acct, k)
			if err == nil {
				n++
			} else if tidings.ErrorCode(err) != tidings.ENotFound {
				t.Fatal(err)
			}
		}
		return n
	}
	later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)

	// Clients' keys past their cut, hooks' not: only the clients' go.
	n, err := f.s.ExpireAnswers(ctx, later, earlier, 10)
	must(t, err)
	if n != 3 || kept(clientKeys) != 0 || kept(hookKeys) != 3 {
		t.Fatalf("expired %d; clients' keys kept %d (want 0), hooks' %d (want 3)", n, kept(clientKeys), kept(hookKeys))
	}
	// Hooks' past theirs: they go, at most max at a time.
	total := 0
	for {
		n, err := f.s.ExpireAnswers(ctx, earlier, later, 2)
		must(t, err)
		if n > 2 {
			t.Fatalf("expired %d at once, max 2", n)
		}
		if n == 0 {
			break
		}
		total += n
	}
	if total != 3 || kept(hookKeys) != 0 {
		t.Fatalf("expired %d hooks' keys, want 3; %d kept", total, kept(hookKeys))
	}

	// And the other way round: hooks' keys past their cut, clients' not.
	e := newEvent("payments", "Paid again")
	e.Key = keyed[*tidings.Event]("client-2")
	_, err = f.s.PublishEvent(ctx, acct, e)
	must(t, err)
	e = newEvent("payments", "Hooked again")
	e.Key = keyed[*tidings.Event](hookKeys[0])
	_, err = f.s.PublishEvent(ctx, acct, e)
	must(t, err)
	n, err = f.s.ExpireAnswers(ctx, earlier, later, 10)
	must(t, err)
	if n != 1 || kept(hookKeys) != 0 || kept([]string{"client-2"}) != 1 {
		t.Fatalf("expired %d; hooks' keys kept %d (want 0), the client's %d (want 1)", n, kept(hookKeys), kept([]string{"client-2"}))
	}
}

// testBatchPublish: a batch's events are stored together, each refused alone; its key
// keeps the whole answer, unless no event was stored.
func testBatchPublish(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	b := &tidings.NewBatch{Events: []*tidings.NewEvent{
		newEvent("payments", "one"), newEvent("nowhere", "refused"), newEvent("payments", "three"),
	}, Key: keyed[[]tidings.Published]("k-batch")}
	b.Key.Render = func(ps []tidings.Published) ([]byte, error) {
		var out []string
		for _, p := range ps {
			if p.Event != nil {
				out = append(out, p.Event.Event)
			} else {
				out = append(out, tidings.ErrorCode(p.Err))
			}
		}
		return json.Marshal(out)
	}
	res, err := f.s.PublishEvents(ctx, acct, b)
	must(t, err)
	if len(res) != 3 || res[0].Event == nil || res[0].Event.Event != "one" || tidings.ErrorCode(res[1].Err) != tidings.EChannelNotFound ||
		res[1].Event != nil || res[2].Event == nil || res[2].Event.Event != "three" {
		t.Fatalf("results %+v", res)
	}
	if res[0].Event.ID >= res[2].Event.ID {
		t.Fatalf("a batch's events take IDs in order: %s, %s", res[0].Event.ID, res[2].Event.ID)
	}
	var kept []string
	f.wantKept(t, acct, "k-batch", &kept)
	if fmt.Sprint(kept) != "[one channel_not_found three]" {
		t.Fatalf("kept %v", kept)
	}
	if _, err := f.s.PublishEvents(ctx, acct, b); err != tidings.ErrKeyTaken {
		t.Fatalf("the batch again: %v", err)
	}
	if n := f.countEvents(t); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
	// A batch of which nothing is stored keeps no answer.
	none := &tidings.NewBatch{Events: []*tidings.NewEvent{newEvent("nowhere", "x")}, Key: keyed[[]tidings.Published]("k-none")}
	res, err = f.s.PublishEvents(ctx, acct, none)
	must(t, err)
	if len(res) != 1 || res[0].Event != nil {
		t.Fatalf("results %+v", res)
	}
	f.wantNotKept(t, "k-none")
	// Unkeyed, and with an unknown project: refused one by one too.
	res, err = f.s.PublishEvents(ctx, acct, &tidings.NewBatch{Events: []*tidings.NewEvent{
		{Project: "nope", Channel: "payments", Event: "x", Parser: tidings.ParserText}, newEvent("payments", "four")}})
	must(t, err)
	if tidings.ErrorCode(res[0].Err) != tidings.EProjectNotFound || res[1].Event == nil {
		t.Fatalf("results %+v", res)
	}
}

// testConcurrentKeys: many writers race with one key at once; exactly one writes, the
// others find the key taken.
func testConcurrentKeys(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				e := newEvent("payments", "race")
				e.Key = keyed[*tidings.Event]("k-race")
				_, err = f.s.PublishEvent(ctx, f.account.ID, e)
			} else {
				_, err = f.s.PublishEvents(ctx, f.account.ID, &tidings.NewBatch{Events: []*tidings.NewEvent{newEvent("payments", "race")},
					Key: &tidings.Keyed[[]tidings.Published]{Key: "k-race", Fingerprint: "fp-k-race", Status: 200,
						Render: func([]tidings.Published) ([]byte, error) { return []byte("[]"), nil }}})
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch err {
		case nil:
			ok++
		case tidings.ErrKeyTaken:
		default:
			t.Fatal(err)
		}
	}
	if ok != 1 || f.countEvents(t) != 1 {
		t.Fatalf("%d writes succeeded, %d events; want exactly one", ok, f.countEvents(t))
	}
}
