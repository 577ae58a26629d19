package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// hookWorkload is the workload's part about inbound hooks (issue 40). In every account
// a project "hooked" (channel "alerts") and a channel "hooked" of "shop" are made and
// deleted over and over (the same names in every account), while hooks are created on
// them, delivered to with keyed batches (the idempotency key hook:ID:DELIVERY, each
// delivery sent twice as a provider's retry), logged, and deleted. A hook on
// my-saas/#payments lives all along and is delivered to as well. Afterwards the
// check's hook.tenant must have run and found nothing, no hook of a deleted project or
// channel may be found by any way in, and the lasting hooks keep their own bounded log.
type hookWorkload struct {
	s      tidings.Store
	fail   func(format string, args ...any)
	record func(acked)
	seq    *atomic.Int64

	mu      sync.Mutex
	churned []*tidings.Hook         // hooks made on the churned scopes: all gone at the end
	lasting map[int64]*tidings.Hook // per account, the hook on my-saas/#payments
	logged  map[string]int          // attempts recorded per lasting hook
	stored  atomic.Int64            // events stored by keyed deliveries
	retried atomic.Int64            // retries that found their delivery's key taken
	made    atomic.Int64            // hooks created on churned scopes
	refused atomic.Int64            // hooks refused because their scope went meanwhile
	ctx     context.Context         // the workload's
	sources [5]string               // every source, in turn
}

// hookScopes are the churned scopes hooks are made on: project/channel pairs.
var hookScopes = [][2]string{{"hooked", "alerts"}, {"shop", "hooked"}}

func newHookWorkload(ctx context.Context, s tidings.Store, fail func(string, ...any), record func(acked), seq *atomic.Int64) *hookWorkload {
	return &hookWorkload{s: s, fail: fail, record: record, seq: seq, ctx: ctx, lasting: map[int64]*tidings.Hook{}, logged: map[string]int{},
		sources: [5]string{tidings.HookStripe, tidings.HookGitHub, tidings.HookAlertmanager, tidings.HookGrafana, tidings.HookJSON}}
}

// start makes a's lasting hook and starts its workers with run; gone marks the scopes
// the workload deletes, whose events are not read back.
func (w *hookWorkload) start(t *testing.T, a *tidings.Account, run func(func(int)), gone func(scope string)) {
	lasting := w.hook(a, "my-saas", "payments", tidings.HookGitHub)
	must(t, w.s.CreateHook(w.ctx, lasting))
	w.lasting[a.ID] = lasting
	gone(a.Name + "/hooked")
	gone(a.Name + "/shop/hooked")

	// The scopes, made and deleted again and again, each with a hook delivered to
	// before it goes: that one is made and stores its events whatever the timing.
	run(func(int) {
		for _, err := range []error{
			w.ignore(w.s.CreateProject(w.ctx, a.ID, "hooked")),
			w.ignore(w.s.CreateChannel(w.ctx, a.ID, "hooked", "alerts")),
			w.ignore(w.s.CreateChannel(w.ctx, a.ID, "shop", "hooked")),
		} {
			if err != nil {
				w.fail("hooks: make the churned scopes: %v", err)
			}
		}
		for _, scope := range hookScopes {
			if h := w.makeOn(a, scope, true); h != nil && !w.deliver(a, h, w.seq.Add(1)) {
				w.fail("hooks: a delivery to %s on %s/#%s, which its scope's only deleter has not deleted yet, stored nothing", h.ID, scope[0], scope[1])
			}
		}
		if err := w.s.DeleteChannel(w.ctx, a.ID, "shop", "hooked"); err != nil {
			w.fail("hooks: delete channel shop/hooked: %v", err)
		}
		if err := w.s.DeleteProject(w.ctx, a.ID, "hooked"); err != nil {
			w.fail("hooks: delete project hooked: %v", err)
		}
	})
	// More hooks made on them as they come and go, and delivered to. Most go with
	// their scope; beyond five kept, the oldest is deleted (it may be gone already), so
	// that the account's hook limit is never what refuses one.
	var alive []*tidings.Hook
	run(func(int) {
		for _, scope := range hookScopes {
			if h := w.makeOn(a, scope, false); h != nil {
				alive = append(alive, h)
				w.deliver(a, h, w.seq.Add(1))
			}
		}
		for ; len(alive) > 5; alive = alive[1:] {
			if err := w.s.DeleteHook(w.ctx, a.ID, alive[0].ID); err != nil && tidings.ErrorCode(err) != tidings.ENotFound {
				w.fail("hooks: delete hook %s: %v", alive[0].ID, err)
			}
		}
	})
	// The lasting hook's deliveries.
	run(func(int) {
		if w.deliver(a, lasting, w.seq.Add(1)) {
			w.mu.Lock()
			w.logged[lasting.ID] += 2
			w.mu.Unlock()
		}
	})
}

// makeOn creates a hook of a on a churned scope, from each source in turn. It returns
// nil when the scope is gone (a failure when sure, the scope being there).
func (w *hookWorkload) makeOn(a *tidings.Account, scope [2]string, sure bool) *tidings.Hook {
	h := w.hook(a, scope[0], scope[1], w.sources[w.seq.Add(1)%int64(len(w.sources))])
	err := w.s.CreateHook(w.ctx, h)
	switch code := tidings.ErrorCode(err); {
	case err == nil:
		w.made.Add(1)
		w.mu.Lock()
		w.churned = append(w.churned, h)
		w.mu.Unlock()
		return h
	case !sure && (code == tidings.EProjectNotFound || code == tidings.EChannelNotFound):
		w.refused.Add(1)
	default:
		w.fail("hooks: create a hook on %s/#%s: %v", scope[0], scope[1], err)
	}
	return nil
}

// ignore is err unless it says the scope is there already (a run cut short before).
func (w *hookWorkload) ignore(_ any, err error) error {
	if tidings.ErrorCode(err) == tidings.EConflict {
		return nil
	}
	return err
}

// hook is a new hook of a on project and channel from source, as the CLI makes one.
func (w *hookWorkload) hook(a *tidings.Account, project, channel, source string) *tidings.Hook {
	_, hash := tidings.NewHookPath()
	h := &tidings.Hook{PathHash: hash, AccountID: a.ID, Project: project, Channel: channel, Source: source,
		Secret: "workload-secret-0123456789"}
	switch source {
	case tidings.HookStripe:
		h.Secret, h.UserIDFrom = "whsec_workload", "customer"
	case tidings.HookJSON:
		h.Template = &tidings.HookTemplate{Event: "{{.event}}", Tags: `{"acct":"{{.acct}}"}`}
	}
	return h
}

// deliver does what POST /hooks/{id} does with delivery n to h: a keyed batch of two
// events into the hook's project and channel, logged; then the provider's retry, which
// must find the key taken and store nothing. It reports whether the first was stored
// (false: the hook's scope went meanwhile).
func (w *hookWorkload) deliver(a *tidings.Account, h *tidings.Hook, n int64) bool {
	delivery := fmt.Sprint("evt_", n)
	key := &tidings.Keyed[[]tidings.Published]{Key: "hook:" + h.ID + ":" + delivery, Fingerprint: "POST /hooks/" + h.ID + " " + delivery,
		Status: 200, Render: func([]tidings.Published) ([]byte, error) { return []byte(`{"events":[]}`), nil }}
	var batch []*tidings.NewEvent
	for j := range 2 {
		batch = append(batch, &tidings.NewEvent{Project: h.Project, Channel: h.Channel, Parser: tidings.ParserText,
			Event: fmt.Sprintf("%s %s hook %s/%d", a.Name, h.Project, delivery, j), UserID: fmt.Sprintf("user-%d", n%7),
			Tags: tidings.Tags{{Key: "acct", Kind: tidings.KindString, Value: a.Name}, {Key: "k", Kind: tidings.KindString, Value: "hook"}}})
	}
	attempt := &tidings.HookAttempt{HookID: h.ID, DeliveryID: delivery, Status: 200, At: time.Now()}
	published, err := w.s.PublishEvents(w.ctx, a.ID, &tidings.NewBatch{Events: batch, Key: key})
	switch code := tidings.ErrorCode(err); {
	case err == nil:
	case errors.Is(err, tidings.ErrNoneStored) || code == tidings.EProjectNotFound || code == tidings.EChannelNotFound:
		attempt.Status, attempt.Error = 404, "there is no hook at this address"
	default:
		w.fail("hooks: deliver to %s: %v", h.ID, err)
		return false
	}
	for _, p := range published {
		switch code := tidings.ErrorCode(p.Err); {
		case p.Event != nil:
			attempt.Events++
			w.record(acked{a, h.Project, p.Event, false})
		case code != tidings.EProjectNotFound && code != tidings.EChannelNotFound:
			w.fail("hooks: an event of a delivery to %s refused: %v", h.ID, p.Err)
		}
	}
	w.stored.Add(int64(attempt.Events))
	if err := w.s.RecordHookAttempt(w.ctx, a.ID, attempt); err != nil {
		w.fail("hooks: record an attempt of %s: %v", h.ID, err)
	}
	if attempt.Events == 0 {
		return false
	}
	if _, err := w.s.PublishEvents(w.ctx, a.ID, &tidings.NewBatch{Events: batch, Key: key}); err != tidings.ErrKeyTaken {
		w.fail("hooks: the retry of delivery %s to %s: %v, want its key taken", delivery, h.ID, err)
	}
	w.retried.Add(1)
	if err := w.s.RecordHookAttempt(w.ctx, a.ID, &tidings.HookAttempt{HookID: h.ID, DeliveryID: delivery, Status: 200, At: time.Now()}); err != nil {
		w.fail("hooks: record a retry of %s: %v", h.ID, err)
	}
	return true
}

// verify runs after the workload and the store's check: report must have run
// hook.tenant (and found nothing, which the caller checks with every other kind).
func (w *hookWorkload) verify(t *testing.T, report *tidings.CheckReport, accounts []*tidings.Account) {
	if !slices.Contains(report.Checks, "hook.tenant") {
		t.Errorf("the check ran %v, not hook.tenant", report.Checks)
	}
	ctx := w.ctx
	// Every hook made on a churned scope went with it (or was deleted): by its path,
	// by its id, and with its log.
	for _, h := range w.churned {
		if got, err := w.s.FindHookByPath(ctx, h.PathHash); tidings.ErrorCode(err) != tidings.ENotFound {
			t.Errorf("hook %s of %s/#%s (account %d), whose scope was deleted, is found by its path: %+v, %v", h.ID, h.Project, h.Channel, h.AccountID, got, err)
		}
		if _, err := w.s.ListHookAttempts(ctx, h.AccountID, h.ID); tidings.ErrorCode(err) != tidings.ENotFound {
			t.Errorf("the log of hook %s, whose scope was deleted: %v, want not found", h.ID, err)
		}
	}
	// The lasting hooks are all that is left, each where it was made, with its own log
	// of at most MaxHookAttempts.
	for _, a := range accounts {
		want := w.lasting[a.ID]
		hs, err := w.s.ListHooks(ctx, a.ID)
		must(t, err)
		if len(hs) != 1 || hs[0].ID != want.ID {
			ids := []string{}
			for _, h := range hs {
				ids = append(ids, h.ID+" "+h.Project+"/#"+h.Channel)
			}
			t.Errorf("%s has hooks %v, want only %s (the others' scopes were deleted)", a.Name, ids, want.ID)
		}
		got, err := w.s.FindHookByPath(ctx, want.PathHash)
		if err != nil || got.ID != want.ID || got.AccountID != a.ID || got.Project != "my-saas" || got.Channel != "payments" {
			t.Errorf("%s's lasting hook by its path: %+v, %v", a.Name, got, err)
			continue
		}
		log, err := w.s.ListHookAttempts(ctx, a.ID, want.ID)
		must(t, err)
		if n := min(w.logged[want.ID], tidings.MaxHookAttempts); len(log) != n {
			t.Errorf("%s's lasting hook logs %d attempts after %d, want %d", a.Name, len(log), w.logged[want.ID], n)
		}
		for _, x := range log {
			if x.HookID != want.ID || x.Status != 200 {
				t.Errorf("%s's lasting hook logs %+v", a.Name, x)
			}
		}
	}
	t.Logf("hooks: %d made on churned scopes (%d refused, their scope gone), %d events stored by keyed deliveries, %d retries found their key",
		w.made.Load(), w.refused.Load(), w.stored.Load(), w.retried.Load())
}
