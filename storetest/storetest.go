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

// Run runs the whole suite against stores made by open. Each part has a store of its
// own, and the parts run side by side.
func Run(t *testing.T, open Opener) {
	run := func(name string, part func(*testing.T, Opener)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			part(t, open)
		})
	}
	run("Accounts", testAccounts)
	run("Projects", testProjects)
	run("Tokens", testTokens)
	run("Events", testEvents)
	run("EventQueries", testEventQueries)
	run("Pagination", testPagination)
	run("FilteredPagination", testFilteredPagination)
	run("Search", testSearch)
	run("DeleteOne", testDeleteOne)
	run("Retention", testRetention)
	run("People", testPeople)
	run("Journey", testJourney)
	run("PageViews", testPageViews)
	run("PageViewCaps", testPageViewCaps)
	run("Sessions", testSessions)
	run("UserActivity", testUserActivity)
	run("PageStats", testPageStats)
	run("PageRetention", testPageRetention)
	run("PeopleSort", testPeopleSort)
	run("Insights", testInsights)
	run("ConcurrentIncrements", testConcurrentIncrements)
	run("InsightCap", testInsightCap)
	run("ChannelCap", testChannelCap)
	run("InsightPages", testInsightPages)
	run("ChannelPages", testChannelPages)
	run("Tenancy", testTenancy)
	run("BatchIsolation", testBatchIsolation)
	run("SessionsAndMembers", testSessionsAndMembers)
	run("Checklist", testChecklist)
	run("Deletes", testDeletes)
	run("FeedReads", testFeedReads)
	run("Webhooks", testWebhooks)
	run("Outbox", testOutbox)
	run("WebhookRetries", testWebhookRetries)
	run("Push", testPush)
	run("Idempotency", testIdempotency)
	run("HookKeyExpiry", testHookKeyExpiry)
	run("BatchPublish", testBatchPublish)
	run("ConcurrentKeys", testConcurrentKeys)
	run("ChartsMatchFeed", testChartsMatchFeed)
	run("ChartBudget", testChartBudget)
	run("Funnels", testFunnels)
	run("Board", testBoard)
	run("IntentFields", testIntentFields)
	run("Versions", testVersions)
	run("PriorityFilters", testPriorityFilters)
	run("Acknowledge", testAcknowledge)
	run("AckRacesRepeat", testAckRacesRepeat)
	run("Presses", testPresses)
	run("IntentSettings", testIntentSettings)
	run("IntentDeletes", testIntentDeletes)
	run("Recipients", testRecipients)
	run("ChatWebhooks", testChatWebhooks)
	run("Routes", func(t *testing.T, open Opener) { Routes(t, open) })
	run("Hooks", func(t *testing.T, open Opener) { Hooks(t, open) })
	run("Workload", testWorkload)
	run("Close", testClose)
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
