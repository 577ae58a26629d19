package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestHookLimitRaces: creations racing for an account's last hook (on separate
// connections, as instances would) make exactly one; a hook racing its channel's
// deletion is either refused or deleted with the channel, never left behind.
func TestHookLimitRaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	for range tidings.MaxHooksPerAccount - 1 {
		_, hash := tidings.NewHookPath()
		noErr(t, db.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.acme, Project: "my-saas", Channel: "payments", Source: tidings.HookGitHub}))
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, hash := tidings.NewHookPath()
			errs[i] = db.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.acme, Project: "my-saas", Channel: "deploys", Source: tidings.HookGrafana})
		}()
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		switch tidings.ErrorCode(err) {
		case "":
			made++
		case tidings.ELimitReached:
		default:
			t.Fatalf("a racing creation: %v", err)
		}
	}
	hs, err := db.ListHooks(ctx, f.acme)
	noErr(t, err)
	if made != 1 || len(hs) != tidings.MaxHooksPerAccount {
		t.Fatalf("%d made by the race, %d hooks", made, len(hs))
	}

	// The other account: hooks and their channel's deletion race.
	for i := range 5 {
		_, err := db.CreateChannel(ctx, f.globex, "my-saas", "doomed")
		noErr(t, err)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for j := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, hash := tidings.NewHookPath()
				errs[j] = db.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.globex, Project: "my-saas", Channel: "doomed", Source: tidings.HookGitHub})
			}()
		}
		noErr(t, db.DeleteChannel(ctx, f.globex, "my-saas", "doomed"))
		wg.Wait()
		for _, err := range errs {
			if err != nil && tidings.ErrorCode(err) != tidings.EChannelNotFound {
				t.Fatalf("round %d: a creation racing the channel's deletion: %v", i, err)
			}
		}
		if hs, err := db.ListHooks(ctx, f.globex); err != nil || len(hs) != 0 {
			t.Fatalf("round %d: hooks left of a deleted channel: %v, %v", i, hs, err)
		}
	}
	mustCheck(t, db, "after the races")
}
