package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// EnvWorkload sets how long the concurrent workload runs (a Go duration, "10m" for a
// soak run); by default it runs for a few seconds, within go test's time.
const EnvWorkload = "TIDINGS_WORKLOAD_DURATION"

func workloadDuration(t *testing.T) time.Duration {
	if v := os.Getenv(EnvWorkload); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", EnvWorkload, v, err)
		}
		return d
	}
	return 3 * time.Second
}

// acked is an acknowledged event the workload expects to read back (or not).
type acked struct {
	account *tidings.Account
	project string
	ev      *tidings.Event
	old     bool // backdated: the retention purge may take it
}

// workload provokes races on purpose: several accounts and projects, fresh and
// backdated publishers, retention purges running all the time, deletes of events,
// channels and projects, insight increments, identify and group, inbound hooks made
// on channels and projects being deleted, their keyed deliveries and logs
// (workload_hooks.go). Then the store's own check must find nothing, every
// acknowledged event that was neither deleted nor expired must be readable in its own
// project, and no read of a project may return an event of another.
func testWorkload(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	var accounts []*tidings.Account
	var members []int64 // one per account
	for _, name := range []string{"acme", "globex", "initech"} {
		a := newAccount(t, s, name)
		// Every account has a project "shop" too (names are per account), keeping 7 days.
		_, err := s.CreateProject(ctx, a.ID, "shop")
		must(t, err)
		_, err = s.CreateChannel(ctx, a.ID, "shop", "orders")
		must(t, err)
		must(t, s.SetRetention(ctx, a.ID, "shop", 7))
		accounts = append(accounts, a)
		// A member whose routes and digests come and go with the churned projects.
		u := &tidings.User{AccountID: a.ID, Email: "ada@" + name + ".example", PasswordHash: "x", Role: tidings.UserOwner}
		must(t, s.CreateUser(ctx, u))
		members = append(members, u.ID)
	}
	d := workloadDuration(t)
	deadline := time.Now().Add(d)
	running := func() bool { return time.Now().Before(deadline) }
	var (
		mu         sync.Mutex
		events     []acked
		deleted    = map[string]bool{} // event ids deleted one at a time
		goneScopes = map[string]bool{} // "account/project" and "account/project/channel" deleted
		increments = map[string]int{}  // acknowledged increments per "account/project/title"
		failures   atomic.Int64
		seq        atomic.Int64
		viewsAdded atomic.Int64
	)
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 20 {
			t.Errorf(format, args...)
		}
	}
	record := func(a acked) {
		mu.Lock()
		events = append(events, a)
		mu.Unlock()
	}
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	publish := func(a *tidings.Account, project, channel string, old bool, worker int) (*tidings.Event, error) {
		n := seq.Add(1)
		e := &tidings.NewEvent{Project: project, Channel: channel, Parser: tidings.ParserText,
			Event: fmt.Sprintf("%s %s %d", a.Name, project, n), UserID: fmt.Sprintf("user-%d", n%7),
			Tags: tidings.Tags{str("era", "new"), str("k", "new"), str("acct", a.Name), str("worker", fmt.Sprint(worker))}}
		if old {
			e.Timestamp = time.Now().Add(-60 * 24 * time.Hour).Add(time.Duration(n) * time.Millisecond)
			e.Tags = tidings.Tags{str("era", "ancient"), str("k", "old"), str("acct", a.Name)}
			e.Description = "ancient history of " + a.Name
		} else {
			e.Description = "fresh news of " + a.Name
			e.Notify = n%3 == 0 // an outbox job, for the expander below
		}
		if n%4 == 0 { // some events mean more: a priority, a link, buttons, a key
			e.Priority = []string{"urgent", "high", "low", "min"}[n/4%4]
			e.URL = fmt.Sprint("https://ci.example/", n)
			e.Actions = []tidings.Action{{Label: "Approve", ID: "approve"}, {Label: "Open", URL: "https://ci.example/"}}
			e.ThreadKey = fmt.Sprint("thing-", n%5)
		}
		return s.PublishEvent(ctx, a.ID, e)
	}
	var wg sync.WaitGroup
	run := func(fn func(w int)) {
		wg.Add(1)
		w := int(seq.Add(1))
		go func() {
			defer wg.Done()
			for running() {
				fn(w)
			}
		}()
	}
	hooks := newHookWorkload(ctx, s, fail, record, &seq)
	for _, a := range accounts {
		hooks.start(t, a, run, func(scope string) {
			mu.Lock()
			goneScopes[scope] = true
			mu.Unlock()
		})
	}
	for i, a := range accounts {
		// Fresh and backdated publishers into the purged project, and fresh ones elsewhere.
		for range 2 {
			run(func(w int) {
				ev, err := publish(a, "shop", "orders", true, w)
				if err != nil {
					fail("backdated publish: %v", err)
					return
				}
				record(acked{a, "shop", ev, true})
			})
			run(func(w int) {
				ev, err := publish(a, "shop", "orders", false, w)
				if err != nil {
					fail("publish: %v", err)
					return
				}
				record(acked{a, "shop", ev, false})
			})
		}
		run(func(w int) {
			ev, err := publish(a, "my-saas", "payments", i%2 == 0, w)
			if err != nil {
				fail("publish: %v", err)
				return
			}
			record(acked{a, "my-saas", ev, false}) // my-saas keeps its events forever
		})
		// Keyed batches, each sent twice: the second finds its key taken and writes
		// nothing; the expiry of old keys runs beside them.
		run(func(w int) {
			n := seq.Add(1)
			var batch []*tidings.NewEvent
			for j := range 5 {
				batch = append(batch, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Parser: tidings.ParserText,
					Event: fmt.Sprintf("%s my-saas batch %d/%d", a.Name, n, j), Tags: tidings.Tags{str("acct", a.Name), str("k", "batch")},
					Priority: []string{"", "high", "urgent"}[j%3], ThreadKey: []string{"", "batch-key"}[j%2]})
			}
			key := &tidings.Keyed[[]tidings.Published]{Key: fmt.Sprint("batch-", n), Fingerprint: "f", Status: 200,
				Render: func([]tidings.Published) ([]byte, error) { return []byte("[]"), nil }}
			res, err := s.PublishEvents(ctx, a.ID, &tidings.NewBatch{Events: batch, Key: key})
			if err != nil {
				fail("batch: %v", err)
				return
			}
			for _, p := range res {
				if p.Event == nil {
					fail("batch event refused: %v", p.Err)
					continue
				}
				record(acked{a, "my-saas", p.Event, false})
			}
			if _, err := s.PublishEvents(ctx, a.ID, &tidings.NewBatch{Events: batch, Key: key}); err != tidings.ErrKeyTaken {
				fail("the batch's key again: %v", err)
			}
			if n%5 == 0 {
				if _, err := s.ExpireAnswers(ctx, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour), 10); err != nil { // the young keys stay
					fail("expire keys: %v", err)
				}
			}
		})
		// Increments, identify and group.
		run(func(w int) {
			title := fmt.Sprintf("Signups %d", w%2)
			_, err := s.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "shop", Title: title, Value: "1",
				ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement})
			if err != nil {
				fail("increment: %v", err)
				return
			}
			mu.Lock()
			increments[a.Name+"/shop/"+title]++
			mu.Unlock()
		})
		run(func(w int) {
			n := seq.Add(1)
			user := fmt.Sprintf("user-%d", n%7)
			if _, err := s.Identify(ctx, a.ID, &tidings.Identify{Project: "shop", UserID: user,
				Properties: tidings.Tags{str("plan", []string{"free", "pro"}[n%2])}}); err != nil {
				fail("identify: %v", err)
			}
			if _, err := s.Group(ctx, a.ID, &tidings.GroupChange{Project: "shop", GroupID: fmt.Sprintf("team-%d", n%3), UserID: user}); err != nil {
				fail("group: %v", err)
			}
		})
		// Page views of the events' users, fresh and backdated (purged): their activity
		// minutes are shared with events deleted and purged meanwhile.
		run(func(w int) {
			n := seq.Add(1)
			c := &tidings.NewPageViews{Project: "shop", Host: "shop.example"}
			for j := range 3 {
				at := time.Now().Add(-time.Duration(j) * time.Minute)
				if (n+int64(j))%2 == 0 {
					at = time.Now().Add(-60 * 24 * time.Hour).Add(time.Duration(n) * time.Millisecond)
				}
				c.Views = append(c.Views, tidings.PageView{UserID: fmt.Sprintf("user-%d", (n+int64(j))%7), Path: fmt.Sprintf("/p/%d", n%5),
					Referrer: []string{"", "https://ref.example/", "/in"}[j], Timestamp: at})
			}
			if err := addWorkloadViews(ctx, s, a.ID, c); err != nil {
				fail("page views: %v", err)
				return
			}
			viewsAdded.Add(int64(len(c.Views)))
		})
		// Deletes of single events, just published ones among them.
		run(func(w int) {
			mu.Lock()
			var victim *acked
			if len(events) > 0 {
				c := events[len(events)-1-rand.IntN(min(len(events), 50))]
				if c.account == a && !deleted[c.ev.ID] {
					victim = &c
					deleted[c.ev.ID] = true
				}
			}
			mu.Unlock()
			if victim == nil {
				time.Sleep(time.Millisecond)
				return
			}
			err := s.DeleteEvent(ctx, a.ID, victim.project, victim.ev.ID)
			if code := tidings.ErrorCode(err); err != nil && code != tidings.ENotFound && code != tidings.EProjectNotFound {
				fail("delete event: %v", err)
			}
		})
		// Acknowledgements and presses of recent events, racing their deletion: each
		// leaves jobs and rows that must go with their event.
		run(func(w int) {
			mu.Lock()
			var pick *acked
			if len(events) > 0 {
				c := events[len(events)-1-rand.IntN(min(len(events), 50))]
				if c.account == a {
					pick = &c
				}
			}
			mu.Unlock()
			if pick == nil {
				time.Sleep(time.Millisecond)
				return
			}
			_, _, err := s.AcknowledgeEvent(ctx, a.ID, pick.ev.ID, "ada@x.io", time.Now())
			if err != nil && tidings.ErrorCode(err) != tidings.ENotFound {
				fail("acknowledge: %v", err)
			}
			_, err = s.PressAction(ctx, &tidings.ActionPress{AccountID: a.ID, EventID: pick.ev.ID, ActionID: "approve", By: "ada@x.io", Via: "API"})
			if err != nil && tidings.ErrorCode(err) != tidings.ENotFound {
				fail("press: %v", err)
			}
		})
		// Channels and projects made, published to and deleted again.
		run(func(w int) {
			n := seq.Add(1)
			project, channel := fmt.Sprintf("tmp-%d", n), "c"
			if _, err := s.CreateProject(ctx, a.ID, project); err != nil {
				fail("create project: %v", err)
				return
			}
			must2 := func(err error) bool {
				if err != nil {
					fail("churn: %v", err)
				}
				return err == nil
			}
			if _, err := s.CreateChannel(ctx, a.ID, project, channel); !must2(err) {
				return
			}
			if _, err := s.CreateChannel(ctx, a.ID, "shop", fmt.Sprintf("tmp-%d", n)); !must2(err) {
				return
			}
			for j := range 3 {
				if ev, err := publish(a, project, channel, j == 0, w); must2(err) {
					record(acked{a, project, ev, false})
				}
				if ev, err := publish(a, "shop", fmt.Sprintf("tmp-%d", n), j == 0, w); must2(err) {
					record(acked{a, "shop", ev, true})
				}
			}
			// A member's routes and digest of the project and its channel, and a digest
			// claimed with its job: rows that must go with them (route.tenant,
			// digest.tenant).
			email := tidings.Routes{Email: true}
			must2(s.SetRoutes(ctx, a.ID, members[i], project, "", &email))
			must2(s.SetRoutes(ctx, a.ID, members[i], project, channel, &tidings.Routes{Push: true}))
			must2(s.SetRoutes(ctx, a.ID, members[i], "shop", fmt.Sprintf("tmp-%d", n), &email))
			must2(s.SetDigest(ctx, a.ID, members[i], project, tidings.DigestDaily))
			if _, err := s.ClaimDigest(ctx, &tidings.DigestPref{AccountID: a.ID, UserID: members[i], Project: project, Every: tidings.DigestDaily},
				time.Now(), &tidings.Delivery{Kind: tidings.DeliverDigest, AccountID: a.ID, Target: tidings.MailTarget(members[i]), Ref: project,
					MessageID: fmt.Sprintf("<digest.%d.%s@test>", members[i], project), Count: 24, NextAt: time.Now(), CreatedAt: time.Now()}); err != nil {
				fail("claim digest: %v", err)
			}
			must2(addWorkloadViews(ctx, s, a.ID, &tidings.NewPageViews{Project: project, Views: []tidings.PageView{
				{UserID: "user-1", Path: "/tmp"}, {UserID: "user-2", Path: "/tmp", Timestamp: time.Now().Add(-30 * 24 * time.Hour)}}}))
			mu.Lock()
			goneScopes[a.Name+"/shop/"+fmt.Sprintf("tmp-%d", n)] = true
			goneScopes[a.Name+"/"+project] = true
			mu.Unlock()
			must2(s.DeleteChannel(ctx, a.ID, "shop", fmt.Sprintf("tmp-%d", n)))
			must2(s.DeleteProject(ctx, a.ID, project))
		})
	}
	// The outbox expanded as the delivery runner does, while its events are deleted one
	// at a time and with their channels and projects: a job of an event deleted
	// meanwhile must not leave jobs behind (the check's outbox.event).
	run(func(int) {
		jobs, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 20)
		if err != nil {
			fail("claim: %v", err)
			return
		}
		if len(jobs) == 0 {
			time.Sleep(time.Millisecond)
		}
		for _, j := range jobs {
			if j.Kind != tidings.DeliverEvent {
				outboxOK(s.FinishDelivery(ctx, j.ID), fail)
				continue
			}
			ev, err := s.FindEventByID(ctx, j.AccountID, j.EventID)
			if tidings.ErrorCode(err) == tidings.ENotFound {
				outboxOK(s.FinishDelivery(ctx, j.ID), fail)
				continue
			}
			if err != nil {
				fail("find the job's event: %v", err)
				continue
			}
			now := time.Now()
			outboxOK(s.ReplaceDelivery(ctx, j.ID, []*tidings.Delivery{{Kind: tidings.DeliverWebhook, AccountID: j.AccountID, EventID: ev.ID,
				Target: "wh", MessageID: tidings.NewID("msg_"), NextAt: now, CreatedAt: now}}, nil), fail)
		}
	})
	// Charts asked all along: never an error, whatever is being written or purged.
	run(func(int) {
		for _, a := range accounts {
			q, err := tidings.ParseChart(tidings.ChartParams{Project: "shop", Measure: "users", Split: "tag:k", Range: "90d"}, time.Now())
			if err != nil {
				fail("chart: %v", err)
				return
			}
			if _, err := charts.Answer(ctx, s, a.ID, q); err != nil && tidings.ErrorCode(err) != tidings.EProjectNotFound {
				fail("chart: %v", err)
			}
		}
	})
	// Page views and profiles read all along.
	run(func(int) {
		for _, a := range accounts {
			_, err := s.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "shop", From: time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -90),
				To: time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)})
			if err != nil {
				fail("page stats: %v", err)
			}
			if _, err := s.ListPageViews(ctx, a.ID, tidings.PageViewQuery{Project: "shop", UserID: "user-3", Limit: 50}); err != nil {
				fail("list page views: %v", err)
			}
			if _, err := s.UserActivity(ctx, a.ID, "shop", "user-3", time.Now().AddDate(0, 0, -90)); err != nil && tidings.ErrorCode(err) != tidings.ENotFound {
				fail("user activity: %v", err)
			}
		}
	})
	// The retention purge, all the time, in small batches.
	purged := atomic.Int64{}
	run(func(int) {
		n, err := s.PurgeExpired(ctx, time.Now(), 5)
		if err != nil {
			fail("purge: %v", err)
		}
		purged.Add(int64(n))
	})
	wg.Wait()
	if t.Failed() {
		return
	}

	// The store's own check finds nothing.
	report, err := s.Check(ctx)
	must(t, err)
	for _, p := range report.Problems {
		t.Errorf("check: %s", p)
	}
	if report.Omitted > 0 {
		t.Errorf("check: %d more inconsistencies", report.Omitted)
	}
	hooks.verify(t, report, accounts)
	// The Pages view counts what the list of views holds.
	for _, a := range accounts {
		today := time.Now().UTC().Truncate(24 * time.Hour)
		st, err := s.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "shop", From: today.AddDate(0, 0, -90), To: today.AddDate(0, 0, 2)})
		must(t, err)
		listed := 0
		q := tidings.PageViewQuery{Project: "shop", Limit: tidings.MaxPageViewsRead}
		for {
			pg, err := s.ListPageViews(ctx, a.ID, q)
			must(t, err)
			listed += len(pg.Views)
			if pg.Next == "" {
				break
			}
			q.Before = pg.Next
		}
		if st.Views != int64(listed) {
			t.Errorf("%s: the Pages view counts %d views, the list holds %d", a.Name, st.Views, listed)
		}
	}
	// Charts still count what the feed lists.
	for _, a := range accounts {
		if !goneScopes[a.Name+"/shop"] {
			chartsAgree(t, fixture{s: s, account: a}, "shop")
		}
	}

	// Every acknowledged event is where it belongs, or was deleted or expired.
	kept, expired := 0, 0
	for _, a := range events {
		if deleted[a.ev.ID] || goneScopes[a.account.Name+"/"+a.project] || goneScopes[a.account.Name+"/"+a.project+"/"+a.ev.Channel] {
			continue
		}
		got, err := s.FindEvent(ctx, a.account.ID, a.project, a.ev.ID)
		switch {
		case err == nil && got.Event != a.ev.Event:
			t.Errorf("event %s of %s/%s reads back as %q, want %q", a.ev.ID, a.account.Name, a.project, got.Event, a.ev.Event)
		case err == nil:
			kept++
		case a.old && tidings.ErrorCode(err) == tidings.ENotFound:
			expired++
		default:
			t.Errorf("acknowledged event %s of %s/%s: %v", a.ev.ID, a.account.Name, a.project, err)
		}
	}
	// Reads through every index hand out only the project's own events.
	for _, a := range accounts {
		for _, project := range []string{"shop", "my-saas"} {
			for _, q := range workloadQueries(t) {
				q.Project = project
				n := 0
				for page := 0; ; page++ {
					p, err := s.ListEvents(ctx, a.ID, q)
					must(t, err)
					for _, ev := range p.Events {
						n++
						if !strings.HasPrefix(ev.Event, a.Name+" "+project+" ") || ev.Project != project {
							t.Errorf("%s/%s with %s returned %q (project %q): another project's event", a.Name, project, queryName(q), ev.Event, ev.Project)
						}
						if !q.Matches(ev) {
							t.Errorf("%s/%s with %s returned %q %v, which does not match", a.Name, project, queryName(q), ev.Event, ev.Tags)
						}
					}
					if p.Next == "" || page > 1000 {
						break
					}
					q.Before = p.Next
				}
			}
		}
	}
	t.Logf("workload %v: %d events acknowledged (%d read back, %d expired), %d page views, %d purged, %d deleted one at a time, %d channels and projects churned, increments %v",
		d, len(events), kept, expired, viewsAdded.Load(), purged.Load(), len(deleted), len(goneScopes), len(increments))
	for key, n := range increments {
		parts := strings.SplitN(key, "/", 3)
		for _, a := range accounts {
			if a.Name != parts[0] {
				continue
			}
			ins, err := s.ListInsights(ctx, a.ID, parts[1])
			must(t, err)
			found := false
			for _, in := range ins {
				if in.Title == parts[2] {
					found = true
					if in.Value != fmt.Sprint(n) {
						t.Errorf("insight %s = %s after %d acknowledged increments", key, in.Value, n)
					}
				}
			}
			if !found {
				t.Errorf("insight %s is missing", key)
			}
		}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal(ctx.Err())
	}
}

func outboxOK(err error, fail func(format string, args ...any)) {
	if err != nil {
		fail("outbox: %v", err)
	}
}

func workloadQueries(t *testing.T) []tidings.EventQuery {
	search := func(text string) tidings.EventQuery {
		s, err := tidings.ParseSearch(text, time.Now())
		must(t, err)
		q := tidings.EventQuery{Limit: 100}
		q.AddSearch(s)
		return q
	}
	return []tidings.EventQuery{
		{Limit: 100},
		{Limit: 100, Tags: []tidings.Tag{{Key: "era", Value: "ancient"}}},
		{Limit: 100, Tags: []tidings.Tag{{Key: "k", Value: "old"}}},
		{Limit: 100, Tags: []tidings.Tag{{Key: "k", Value: "new"}, {Key: "era", Value: "new"}}},
		search("ancient"),
		search("news"),
		search("era:ancient histor*"),
	}
}

func queryName(q tidings.EventQuery) string {
	var parts []string
	for _, t := range q.Tags {
		parts = append(parts, t.Key+":"+t.Value)
	}
	for _, t := range q.Terms {
		parts = append(parts, strings.Join(t.Words, " "))
	}
	if len(parts) == 0 {
		return "no filter"
	}
	return strings.Join(parts, " ")
}

// addWorkloadViews checks and stores page views as POST /v1/page does.
func addWorkloadViews(ctx context.Context, s tidings.Store, accountID int64, c *tidings.NewPageViews) error {
	var p tidings.Problems
	c.Check(&p, time.Now(), true)
	if err := p.Err(); err != nil {
		return err
	}
	return s.AddPageViews(ctx, accountID, c)
}
