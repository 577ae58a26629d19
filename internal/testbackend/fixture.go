package testbackend

import (
	"context"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

// Fixture is where most tests start: an account with a project "my-saas" and its
// channel "payments", in a store.
type Fixture struct {
	Store   tidings.Store
	Account *tidings.Account
	// Published, when set, is called with each event Publish stored, at once and from
	// the goroutine that stored it (a test's broker hears of events as the API's would).
	Published func(*tidings.Event)
}

// Project and Channel are the fixture's project and channel.
const (
	Project = "my-saas"
	Channel = "payments"
)

// Seed creates the account name with the project "my-saas" and its channel "payments".
func Seed(t testing.TB, s tidings.Store, name string) *Fixture {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateProject(ctx, a.ID, Project); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateChannel(ctx, a.ID, Project, Channel); err != nil {
		t.Fatal(err)
	}
	return &Fixture{Store: s, Account: a}
}

// Token creates a token of the account (access full or public; with no roles, log and
// insight) and returns its secret. project and channel scope it when not empty.
func (f *Fixture) Token(t testing.TB, access, project, channel string, roles ...string) string {
	t.Helper()
	if len(roles) == 0 {
		roles = []string{tidings.RoleLog, tidings.RoleInsight}
	}
	id, secret, hash := tidings.NewTokenSecret()
	if err := f.Store.CreateToken(context.Background(), &tidings.Token{ID: id, AccountID: f.Account.ID, Access: access,
		Project: project, Channel: channel, Roles: roles, Hash: hash}); err != nil {
		t.Fatal(err)
	}
	return secret
}

// publishers is how many events Publish has in flight at once.
const publishers = 32

// Publish stores the events as concurrent API requests would: many in flight at once,
// so that the store's group commit writes them in a few batches rather than one commit
// each. An event without a project or channel goes to the fixture's. It returns the
// stored events in the order given (their arrival order is not that order).
func (f *Fixture) Publish(t testing.TB, events ...tidings.NewEvent) []*tidings.Event {
	t.Helper()
	stored := make([]*tidings.Event, len(events))
	errs := make([]error, len(events))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(publishers, len(events)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ev := events[i]
				if ev.Project == "" {
					ev.Project = Project
				}
				if ev.Channel == "" {
					ev.Channel = Channel
				}
				if ev.Parser == "" {
					ev.Parser = tidings.ParserText
				}
				stored[i], errs[i] = f.Store.PublishEvent(context.Background(), f.Account.ID, &ev)
				if errs[i] == nil && f.Published != nil {
					f.Published(stored[i])
				}
			}
		}()
	}
	for i := range events {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("event %d (%q): %v", i, events[i].Event, err)
		}
	}
	return stored
}
