package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
)

// TestDigests: set, listed with the member's email, zone and project, changed, off;
// refusals; another account's member cannot be given one.
func TestDigests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	ada, bob, eve := f.user(t, "ada@example.com"), f.user(t, "bob@example.com"), f.user(t, "eve@example.com")
	_, err := db.CreateProject(ctx, f.acme, "blog")
	noErr(t, err)
	noErr(t, db.SetNotifyPrefs(ctx, ada, &tidings.NotifyPrefs{TimeZone: "Asia/Kolkata"}))
	noErr(t, db.SetDigest(ctx, f.acme, ada, "my-saas", "Daily"))
	noErr(t, db.SetDigest(ctx, f.acme, ada, "blog", tidings.DigestWeekly))
	noErr(t, db.SetDigest(ctx, f.acme, bob, "blog", tidings.DigestDaily))
	noErr(t, db.SetDigest(ctx, f.globex, eve, "my-saas", tidings.DigestWeekly))
	noErr(t, db.SetDigest(ctx, f.acme, bob, "my-saas", tidings.DigestOff)) // none to forget
	wantValidation(t, db.SetDigest(ctx, f.acme, bob, "my-saas", "hourly"), "digest", "off, daily or weekly")
	wantErrCode(t, db.SetDigest(ctx, f.acme, eve, "my-saas", tidings.DigestDaily), tidings.ENotFound)
	wantErrCode(t, db.SetDigest(ctx, f.globex, ada, "my-saas", tidings.DigestDaily), tidings.ENotFound)
	wantErrCode(t, db.SetDigest(ctx, f.acme, ada, "nope", tidings.DigestDaily), tidings.EProjectNotFound)

	list := func() string {
		t.Helper()
		ds, err := db.ListDigests(ctx)
		noErr(t, err)
		var out []string
		for _, d := range ds {
			out = append(out, fmt.Sprintf("%d/%d %s %s %s %q %v", d.AccountID, d.UserID, d.Email, d.Project, d.Every, d.TimeZone, d.LastPeriod.IsZero()))
		}
		slices.Sort(out)
		return fmt.Sprint(out)
	}
	want := fmt.Sprint([]string{
		fmt.Sprintf("%d/%d Ada@Example.com blog weekly \"Asia/Kolkata\" true", f.acme, ada),
		fmt.Sprintf("%d/%d Ada@Example.com my-saas daily \"Asia/Kolkata\" true", f.acme, ada),
		fmt.Sprintf("%d/%d bob@example.com blog daily \"\" true", f.acme, bob),
		fmt.Sprintf("%d/%d eve@example.com my-saas weekly \"\" true", f.globex, eve),
	})
	if got := list(); got != want {
		t.Fatalf("ListDigests:\n got %s\nwant %s", got, want)
	}
	mine := func(account, user int64, want map[string]string) {
		t.Helper()
		got, err := db.MemberDigests(ctx, account, user)
		noErr(t, err)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("MemberDigests(%d) = %v, want %v", user, got, want)
		}
	}
	mine(f.acme, ada, map[string]string{"blog": "weekly", "my-saas": "daily"})
	mine(f.acme, bob, map[string]string{"blog": "daily"})
	mine(f.acme, eve, map[string]string{}) // another account's member: none of theirs
	noErr(t, db.SetDigest(ctx, f.acme, ada, "blog", tidings.DigestOff))
	noErr(t, db.SetDigest(ctx, f.acme, ada, "my-saas", tidings.DigestWeekly))
	mine(f.acme, ada, map[string]string{"my-saas": "weekly"})
}

// TestClaimDigest: a period is claimed once (again: false, an earlier one: false, the
// next: true), with its job; of racing claims one wins and one job is queued; a digest
// switched off or of a deleted member claims nothing.
func TestClaimDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	ada, bob := f.user(t, "ada@example.com"), f.user(t, "bob@example.com")
	noErr(t, db.SetDigest(ctx, f.acme, ada, "my-saas", tidings.DigestDaily))
	noErr(t, db.SetDigest(ctx, f.acme, bob, "my-saas", tidings.DigestDaily))
	pref := func(user int64) *tidings.DigestPref {
		t.Helper()
		ds, err := db.ListDigests(ctx)
		noErr(t, err)
		for _, d := range ds {
			if d.UserID == user {
				return d
			}
		}
		t.Fatalf("no digest of %d", user)
		return nil
	}
	job := func(user int64, end time.Time) *tidings.Delivery {
		return &tidings.Delivery{Kind: tidings.DeliverDigest, AccountID: f.acme, Target: tidings.MailTarget(user), Ref: "my-saas",
			Count: 24, MessageID: fmt.Sprintf("<digest.%d.my-saas.%d@tidings.invalid>", user, end.Unix())}
	}
	jobs := func(user int64) []string {
		t.Helper()
		ids, err := postgres.QueryStringsForTest(db, `SELECT message_id || ' ' || next_at || ' ' || ref || ' ' || count FROM deliveries
			WHERE kind = $1 AND target = $2 ORDER BY id`, tidings.DeliverDigest, tidings.MailTarget(user))
		noErr(t, err)
		return ids
	}
	claim := func(p *tidings.DigestPref, end time.Time, want bool) {
		t.Helper()
		ok, err := db.ClaimDigest(ctx, p, end, job(p.UserID, end))
		noErr(t, err)
		if ok != want {
			t.Fatalf("ClaimDigest(%d, %v) = %v, want %v", p.UserID, end, ok, want)
		}
	}
	day1 := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	p := pref(ada)
	claim(p, day1, true)
	claim(p, day1, false)
	claim(p, day1.Add(-24*time.Hour), false)
	if got := pref(ada).LastPeriod; !got.Equal(day1) {
		t.Fatalf("LastPeriod %v, want %v", got, day1)
	}
	claim(p, day2, true)
	wantJobs := []string{
		fmt.Sprintf("<digest.%d.my-saas.%d@tidings.invalid> %d my-saas 24", ada, day1.Unix(), day1.UnixMilli()),
		fmt.Sprintf("<digest.%d.my-saas.%d@tidings.invalid> %d my-saas 24", ada, day2.Unix(), day2.UnixMilli()),
	}
	if got := jobs(ada); !slices.Equal(got, wantJobs) {
		t.Fatalf("jobs %v, want %v", got, wantJobs)
	}

	// Racing claims of one period: one wins, one job.
	b := pref(bob)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := db.ClaimDigest(ctx, b, day1, job(bob, day1))
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || len(jobs(bob)) != 1 {
		t.Fatalf("racing claims: %d won, %d jobs", wins.Load(), len(jobs(bob)))
	}

	// Gone: off, or the member deleted.
	noErr(t, db.SetDigest(ctx, f.acme, ada, "my-saas", tidings.DigestOff))
	claim(p, day2.AddDate(0, 0, 1), false)
	noErr(t, db.DeleteUser(ctx, f.acme, bob))
	claim(b, day2, false)
	// Another account's claim of the same member and project names nothing.
	noErr(t, db.SetDigest(ctx, f.acme, ada, "my-saas", tidings.DigestDaily))
	stranger := *pref(ada)
	stranger.AccountID = f.globex
	claim(&stranger, day2.AddDate(0, 0, 5), false)
}

// digestEvent is an event seeded for TestDigestOf.
type digestEvent struct {
	channel, name, icon string
	at                  time.Time
}

// TestDigestOf seeds events at and around the edges of periods (one of a zone half
// an hour off UTC, whose ends are not on the hour, so that the hourly roll-up and the
// edges' events both count), people first seen and insights changed at set times,
// and compares each period's digest with what the seeds say.
func TestDigestOf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clock atomic.Int64
	now := func() time.Time { return time.UnixMilli(clock.Load()).UTC() }
	set := func(at time.Time) { clock.Store(at.UnixMilli()) }
	set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	db, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{Now: now})
	noErr(t, err)
	t.Cleanup(func() { db.Close() })
	var acme, globex int64
	for _, acc := range []struct {
		name string
		id   *int64
	}{{"acme", &acme}, {"globex", &globex}} {
		a, err := db.CreateAccount(ctx, acc.name)
		noErr(t, err)
		*acc.id = a.ID
		for _, p := range []string{"shop", "blog"} {
			_, err := db.CreateProject(ctx, a.ID, p)
			noErr(t, err)
			for _, c := range []string{"payments", "deploys", "quiet"} {
				_, err := db.CreateChannel(ctx, a.ID, p, c)
				noErr(t, err)
			}
		}
	}
	ist, err := time.LoadLocation("Asia/Kolkata")
	noErr(t, err)
	from, to := tidings.DigestPeriod(tidings.DigestDaily, time.Date(2026, 1, 6, 9, 0, 0, 0, ist), ist)
	if from.UnixMilli()%3600000 == 0 {
		t.Fatalf("the period %v–%v is on the hour: the edges are not tested", from, to)
	}
	mid := from.Add(12 * time.Hour)
	seeds := []digestEvent{
		{"payments", "before", "", from.Add(-time.Millisecond)},
		{"payments", "paid", "", from},
		{"payments", "paid", "💰", from.Add(10 * time.Minute)},
		{"deploys", "signup", "", from.Add(40 * time.Minute)},
		{"payments", "paid", "", mid},
		{"deploys", "deploy", "🚀", mid},
		{"deploys", "deploy", "", mid.Add(time.Minute)},
		{"payments", "e1", "", mid.Add(2 * time.Hour)},
		{"payments", "e2", "", mid.Add(2 * time.Hour)},
		{"payments", "e3", "", mid.Add(2 * time.Hour)},
		{"payments", "signup", "", to.Add(-time.Millisecond)},
		{"payments", "after", "", to},
		{"quiet", "later", "", to.Add(time.Hour)},
		{"quiet", "earlier", "", from.Add(-30 * time.Hour)},
	}
	// The same events in the other project and the other account: never counted.
	for _, acc := range []int64{acme, globex} {
		for _, project := range []string{"shop", "blog"} {
			if acc == acme && project == "blog" {
				continue
			}
			for _, e := range seeds {
				_, err := db.PublishEvent(ctx, acc, &tidings.NewEvent{Project: project, Channel: e.channel, Event: e.name, Icon: e.icon,
					Parser: tidings.ParserText, Timestamp: e.at})
				noErr(t, err)
			}
		}
	}
	// People first seen (the clock at their first event) and insights changed.
	person := func(at time.Time, id string) {
		set(at)
		_, err := db.Identify(ctx, acme, &tidings.Identify{Project: "shop", UserID: id})
		noErr(t, err)
	}
	insight := func(at time.Time, title string) {
		set(at)
		_, err := db.ApplyInsight(ctx, acme, &tidings.InsightChange{Project: "shop", Title: title, Value: "1",
			ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement})
		noErr(t, err)
	}
	person(from.Add(-time.Millisecond), "old")
	person(from, "first")
	for i := range 11 {
		person(mid.Add(time.Duration(i)*time.Minute), fmt.Sprintf("u%02d", i))
	}
	person(to.Add(-time.Millisecond), "last")
	person(to, "too-late")
	person(mid, "old") // seen again: not new
	insight(from.Add(-time.Hour), "Before")
	insight(from, "Revenue")
	insight(mid, "Signups")
	insight(to.Add(-time.Hour), "Revenue") // twice in the period: once, by its latest point
	insight(to, "After")
	insight(mid.Add(time.Hour), "Both")
	insight(to.Add(time.Hour), "Both") // changed since: still changed in the period

	wantDigest := func(from, to time.Time) *tidings.DigestContent {
		w := &tidings.DigestContent{Project: "shop", From: from, To: to}
		channels, names, icons := map[string]int{}, map[string]int{}, map[string]string{}
		for _, e := range seeds {
			if e.at.Before(from) || !e.at.Before(to) {
				continue
			}
			w.Events++
			channels[e.channel]++
			names[e.name]++
			icons[e.name] = max(icons[e.name], e.icon)
		}
		sorted := func(m map[string]int, limit int) []tidings.DigestCount {
			out := []tidings.DigestCount{}
			for k, n := range m {
				out = append(out, tidings.DigestCount{Name: k, Count: n, Icon: icons[k]})
			}
			slices.SortFunc(out, func(a, b tidings.DigestCount) int {
				if a.Count != b.Count {
					return b.Count - a.Count
				}
				return compareStrings(a.Name, b.Name)
			})
			return out[:min(limit, len(out))]
		}
		w.Channels = sorted(channels, 100)
		for i := range w.Channels {
			w.Channels[i].Icon = ""
		}
		w.TopEvents = sorted(names, 5)
		return w
	}
	check := func(name string, from, to time.Time, insights, users []string, newUsers int) {
		t.Helper()
		got, err := db.DigestOf(ctx, acme, "shop", from, to)
		noErr(t, err)
		w := wantDigest(from, to)
		if got.Project != w.Project || !got.From.Equal(from) || !got.To.Equal(to) || got.Events != w.Events ||
			fmt.Sprint(got.Channels) != fmt.Sprint(w.Channels) || fmt.Sprint(got.TopEvents) != fmt.Sprint(w.TopEvents) {
			t.Fatalf("%s: digest\n got %d %v %v\nwant %d %v %v", name, got.Events, got.Channels, got.TopEvents, w.Events, w.Channels, w.TopEvents)
		}
		var titles []string
		for _, in := range got.Insights {
			titles = append(titles, in.Title)
			if in.Project != "shop" {
				t.Fatalf("%s: insight %+v", name, in)
			}
		}
		if fmt.Sprint(titles) != fmt.Sprint(insights) || got.NewUsers != newUsers || fmt.Sprint(got.NewUserIDs) != fmt.Sprint(users) {
			t.Fatalf("%s: insights %v, %d new users %v; want %v, %d %v", name, titles, got.NewUsers, got.NewUserIDs, insights, newUsers, users)
		}
	}
	check("the day in India", from, to, []string{"Revenue", "Both", "Signups"},
		[]string{"last", "u10", "u09", "u08", "u07", "u06", "u05", "u04", "u03", "u02"}, 13)
	hour := from.Truncate(time.Hour).Add(time.Hour)
	check("whole hours", hour, hour.Add(24*time.Hour), []string{"After", "Revenue", "Both", "Signups"},
		[]string{"too-late", "last", "u10", "u09", "u08", "u07", "u06", "u05", "u04", "u03"}, 13)
	check("within an hour", from.Add(-time.Minute), from.Add(20*time.Minute), []string{"Revenue"}, []string{"first", "old"}, 2)
	check("a week", from.AddDate(0, 0, -3), to.AddDate(0, 0, 4), []string{"Both", "After", "Revenue", "Signups", "Before"},
		[]string{"too-late", "last", "u10", "u09", "u08", "u07", "u06", "u05", "u04", "u03"}, 15)
	empty, err := db.DigestOf(ctx, acme, "shop", to, to)
	noErr(t, err)
	if empty.Events != 0 || len(empty.Channels)+len(empty.TopEvents)+len(empty.Insights)+len(empty.NewUserIDs) != 0 || empty.NewUsers != 0 {
		t.Fatalf("an empty period: %+v", empty)
	}
	_, err = db.DigestOf(ctx, acme, "nope", from, to)
	wantErrCode(t, err, tidings.EProjectNotFound)
	mustCheck(t, db, "after the seeds")
}

// compareStrings orders as Go (and COLLATE "C") do: by bytes.
func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
