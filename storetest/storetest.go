// Package storetest is the behaviour every tidings.Store must show. Each backend's tests
// call Run with a function that opens a fresh, empty store.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// Opener returns a fresh, empty store; it registers its own cleanup.
type Opener func(t *testing.T) tidings.Store

// Run runs the whole suite against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Accounts", func(t *testing.T) { testAccounts(t, open) })
	t.Run("Projects", func(t *testing.T) { testProjects(t, open) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, open) })
	t.Run("Events", func(t *testing.T) { testEvents(t, open) })
	t.Run("EventQueries", func(t *testing.T) { testEventQueries(t, open) })
	t.Run("Pagination", func(t *testing.T) { testPagination(t, open) })
	t.Run("FilteredPagination", func(t *testing.T) { testFilteredPagination(t, open) })
	t.Run("Search", func(t *testing.T) { testSearch(t, open) })
	t.Run("DeleteOne", func(t *testing.T) { testDeleteOne(t, open) })
	t.Run("Retention", func(t *testing.T) { testRetention(t, open) })
	t.Run("People", func(t *testing.T) { testPeople(t, open) })
	t.Run("Journey", func(t *testing.T) { testJourney(t, open) })
	t.Run("Insights", func(t *testing.T) { testInsights(t, open) })
	t.Run("ConcurrentIncrements", func(t *testing.T) { testConcurrentIncrements(t, open) })
	t.Run("Tenancy", func(t *testing.T) { testTenancy(t, open) })
	t.Run("BatchIsolation", func(t *testing.T) { testBatchIsolation(t, open) })
	t.Run("SessionsAndMembers", func(t *testing.T) { testSessionsAndMembers(t, open) })
	t.Run("Deletes", func(t *testing.T) { testDeletes(t, open) })
	t.Run("FeedReads", func(t *testing.T) { testFeedReads(t, open) })
	t.Run("Webhooks", func(t *testing.T) { testWebhooks(t, open) })
	t.Run("Outbox", func(t *testing.T) { testOutbox(t, open) })
	t.Run("Push", func(t *testing.T) { testPush(t, open) })
	t.Run("Workload", func(t *testing.T) { testWorkload(t, open) })
	t.Run("Close", func(t *testing.T) { testClose(t, open) })
}

// fixture is an account with project "my-saas" and channel "payments".
type fixture struct {
	s       tidings.Store
	account *tidings.Account
}

func setup(t *testing.T, open Opener) fixture {
	t.Helper()
	s := open(t)
	return fixture{s: s, account: newAccount(t, s, "acme")}
}

func newAccount(t *testing.T, s tidings.Store, name string) *tidings.Account {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, name)
	must(t, err)
	_, err = s.CreateProject(ctx, a.ID, "my-saas")
	must(t, err)
	_, err = s.CreateChannel(ctx, a.ID, "my-saas", "payments")
	must(t, err)
	return a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := tidings.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func (f fixture) publish(t *testing.T, e tidings.NewEvent) *tidings.Event {
	t.Helper()
	if e.Project == "" {
		e.Project = "my-saas"
	}
	if e.Channel == "" {
		e.Channel = "payments"
	}
	if e.Parser == "" {
		e.Parser = tidings.ParserText
	}
	ev, err := f.s.PublishEvent(context.Background(), f.account.ID, &e)
	must(t, err)
	return ev
}

func testClose(t *testing.T, open Opener) {
	f := setup(t, open)
	ev := f.publish(t, tidings.NewEvent{Event: "before close"})
	if ev.ID == "" {
		t.Fatal("no id")
	}
	must(t, f.s.Close())
	_, err := f.s.PublishEvent(context.Background(), f.account.ID,
		&tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "after", Parser: "text"})
	wantCode(t, err, tidings.EUnavailable)
}

var epoch = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
