package storetest

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// Members' routes and digests, projects' escalation and invitations' emails (issue
// 39); Run runs this part.

// Routes runs the routes' part of the suite against stores made by open.
func Routes(t *testing.T, open Opener) {
	run := func(name string, part func(*testing.T, Opener)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			part(t, open)
		})
	}
	run("MemberRoutes", testMemberRoutes)
	run("RouteDeletions", testRouteDeletions)
	run("Digests", testDigests)
	run("ClaimDigest", testClaimDigest)
	run("DigestOfEvents", testDigestOfEvents)
	run("DigestOfInsightsAndUsers", testDigestOfInsightsAndUsers)
	run("Escalation", testEscalation)
	run("InviteEmail", testInviteEmail)
}

// member adds a member to f's account.
func (f fixture) member(t *testing.T, email string) *tidings.User {
	t.Helper()
	u := &tidings.User{AccountID: f.account.ID, Email: email, PasswordHash: "x", Role: tidings.UserMember}
	must(t, f.s.CreateUser(context.Background(), u))
	return u
}

// wantRoutes fails unless AccountRoutes answers want, in any order.
func wantRoutes(t *testing.T, f fixture, want ...tidings.MemberRoute) {
	t.Helper()
	got, err := f.s.AccountRoutes(context.Background(), f.account.ID)
	must(t, err)
	var flat []tidings.MemberRoute
	for _, m := range got {
		flat = append(flat, *m)
	}
	order := func(a, b tidings.MemberRoute) int {
		return cmp.Or(cmp.Compare(a.UserID, b.UserID), strings.Compare(a.Project, b.Project), strings.Compare(a.Channel, b.Channel))
	}
	slices.SortFunc(flat, order)
	want = slices.Clone(want)
	slices.SortFunc(want, order)
	if len(flat) != len(want) || len(want) > 0 && !reflect.DeepEqual(flat, want) {
		t.Fatalf("AccountRoutes = %+v, want %+v", flat, want)
	}
}

// wantNotMember fails unless err is ENotFound naming the user's id.
func wantNotMember(t *testing.T, err error, userID int64) {
	t.Helper()
	wantCode(t, err, tidings.ENotFound)
	if id := strconv.FormatInt(userID, 10); !strings.Contains(err.Error(), id) {
		t.Fatalf("error %q does not name the user %s", err, id)
	}
}

var (
	pushOnly  = tidings.Routes{Push: true}
	emailOnly = tidings.Routes{Email: true}
	both      = tidings.Routes{Push: true, Email: true}
	noRoute   = tidings.Routes{}
)

func testMemberRoutes(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	_, err := f.s.CreateChannel(ctx, acct, "my-saas", "deploys")
	must(t, err)
	_, err = f.s.CreateProject(ctx, acct, "blog")
	must(t, err)
	ada, bob := f.member(t, "ada@example.com"), f.member(t, "bob@example.com")
	resolve := func(userID int64, project, channel string) tidings.Routes {
		t.Helper()
		saved, err := f.s.AccountRoutes(ctx, acct)
		must(t, err)
		return tidings.RoutesFor(saved, userID, project, channel)
	}

	// Nobody chose anything: no rows, push for everyone.
	wantRoutes(t, f)
	if r := resolve(ada.ID, "my-saas", "payments"); r != tidings.DefaultRoutes {
		t.Fatalf("routes of a member who chose nothing = %+v", r)
	}

	// A project's choice, a channel's own, another member's, another project's.
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "", &emailOnly))
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "payments", &both))
	must(t, f.s.SetRoutes(ctx, acct, bob.ID, "my-saas", "deploys", &noRoute))
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "blog", "", &pushOnly))
	wantRoutes(t, f,
		tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: ada.ID, Project: "my-saas", Routes: emailOnly},
		tidings.MemberRoute{UserID: ada.ID, Project: "my-saas", Channel: "payments", Routes: both},
		tidings.MemberRoute{UserID: bob.ID, Project: "my-saas", Channel: "deploys", Routes: noRoute})
	for _, c := range []struct {
		user             int64
		project, channel string
		want             tidings.Routes
	}{
		{ada.ID, "my-saas", "payments", both},     // the channel's own
		{ada.ID, "my-saas", "deploys", emailOnly}, // the project's
		{ada.ID, "my-saas", "", emailOnly},
		{ada.ID, "blog", "anything", pushOnly},
		{bob.ID, "my-saas", "deploys", noRoute}, // nothing, chosen: not the default
		{bob.ID, "my-saas", "payments", tidings.DefaultRoutes},
		{bob.ID, "blog", "", tidings.DefaultRoutes},
	} {
		if got := resolve(c.user, c.project, c.channel); got != c.want {
			t.Errorf("RoutesFor(%d, %s, %q) = %+v, want %+v", c.user, c.project, c.channel, got, c.want)
		}
	}

	// Saving again replaces; nil forgets: the channel follows the project again, the
	// project falls back to the default.
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "payments", &pushOnly))
	if r := resolve(ada.ID, "my-saas", "payments"); r != pushOnly {
		t.Fatalf("after replacing the channel's choice: %+v", r)
	}
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "payments", nil))
	if r := resolve(ada.ID, "my-saas", "payments"); r != emailOnly {
		t.Fatalf("a forgotten channel's choice: %+v, want the project's", r)
	}
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "", nil))
	must(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "", nil)) // forgetting nothing is fine
	if r := resolve(ada.ID, "my-saas", "payments"); r != tidings.DefaultRoutes {
		t.Fatalf("a forgotten project's choice: %+v, want the default", r)
	}
	wantRoutes(t, f,
		tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: bob.ID, Project: "my-saas", Channel: "deploys", Routes: noRoute})

	// Not a member, unknown project or channel: refused, nothing saved.
	other := newAccount(t, f.s, "globex")
	g := fixture{s: f.s, account: other}
	eve := g.member(t, "eve@globex.example")
	wantNotMember(t, f.s.SetRoutes(ctx, acct, eve.ID, "my-saas", "", &both), eve.ID)
	wantNotMember(t, f.s.SetRoutes(ctx, acct, 987654321, "my-saas", "", &both), 987654321)
	wantCode(t, f.s.SetRoutes(ctx, acct, ada.ID, "nope", "", &both), tidings.EProjectNotFound)
	wantCode(t, f.s.SetRoutes(ctx, acct, ada.ID, "nope", "payments", &both), tidings.EProjectNotFound)
	wantCode(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "nope", &both), tidings.EChannelNotFound)
	wantCode(t, f.s.SetRoutes(ctx, acct, ada.ID, "my-saas", "nope", nil), tidings.EChannelNotFound)
	wantCode(t, f.s.SetRoutes(ctx, acct, ada.ID, "blog", "payments", &both), tidings.EChannelNotFound) // another project's
	wantRoutes(t, f,
		tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: bob.ID, Project: "my-saas", Channel: "deploys", Routes: noRoute})

	// Another account: sees none of these, cannot set them for this account's members
	// (even on its own project of the same name), keeps its own.
	wantRoutes(t, g)
	wantNotMember(t, f.s.SetRoutes(ctx, other.ID, ada.ID, "my-saas", "", &both), ada.ID)
	wantCode(t, f.s.SetRoutes(ctx, other.ID, eve.ID, "blog", "", &both), tidings.EProjectNotFound)
	must(t, f.s.SetRoutes(ctx, other.ID, eve.ID, "my-saas", "payments", &emailOnly))
	wantRoutes(t, g, tidings.MemberRoute{UserID: eve.ID, Project: "my-saas", Channel: "payments", Routes: emailOnly})
	wantRoutes(t, f,
		tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: bob.ID, Project: "my-saas", Channel: "deploys", Routes: noRoute})
}

// A member's, a channel's and a project's deletion take their routes and digests along;
// another member's and another account's stay.
func testRouteDeletions(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	_, err := f.s.CreateChannel(ctx, acct, "my-saas", "deploys")
	must(t, err)
	_, err = f.s.CreateProject(ctx, acct, "blog")
	must(t, err)
	ada, bob := f.member(t, "ada@example.com"), f.member(t, "bob@example.com")
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	eve := g.member(t, "eve@globex.example")
	must(t, f.s.SetRoutes(ctx, g.account.ID, eve.ID, "my-saas", "payments", &emailOnly))
	must(t, f.s.SetDigest(ctx, g.account.ID, eve.ID, "my-saas", tidings.DigestDaily))
	for _, u := range []*tidings.User{ada, bob} {
		must(t, f.s.SetRoutes(ctx, acct, u.ID, "my-saas", "", &emailOnly))
		must(t, f.s.SetRoutes(ctx, acct, u.ID, "my-saas", "payments", &both))
		must(t, f.s.SetRoutes(ctx, acct, u.ID, "my-saas", "deploys", &noRoute))
		must(t, f.s.SetRoutes(ctx, acct, u.ID, "blog", "", &pushOnly))
		must(t, f.s.SetDigest(ctx, acct, u.ID, "my-saas", tidings.DigestWeekly))
		must(t, f.s.SetDigest(ctx, acct, u.ID, "blog", tidings.DigestDaily))
	}
	digestsOf := func(u *tidings.User) map[string]string {
		t.Helper()
		d, err := f.s.MemberDigests(ctx, acct, u.ID)
		must(t, err)
		return d
	}
	listed := func() []string {
		t.Helper()
		all, err := f.s.ListDigests(ctx)
		must(t, err)
		var out []string
		for _, d := range all {
			out = append(out, fmt.Sprintf("%s %s %s", d.Email, d.Project, d.Every))
		}
		slices.Sort(out)
		return out
	}

	// The channel: its choices go; one made again under the name has none.
	must(t, f.s.DeleteChannel(ctx, acct, "my-saas", "deploys"))
	_, err = f.s.CreateChannel(ctx, acct, "my-saas", "deploys")
	must(t, err)
	wantRoutes(t, f,
		tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: ada.ID, Project: "my-saas", Routes: emailOnly},
		tidings.MemberRoute{UserID: ada.ID, Project: "my-saas", Channel: "payments", Routes: both},
		tidings.MemberRoute{UserID: bob.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: bob.ID, Project: "my-saas", Routes: emailOnly},
		tidings.MemberRoute{UserID: bob.ID, Project: "my-saas", Channel: "payments", Routes: both})

	// The member: their routes and digests go, bob's stay.
	must(t, f.s.DeleteUser(ctx, acct, bob.ID))
	wantRoutes(t, f,
		tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly},
		tidings.MemberRoute{UserID: ada.ID, Project: "my-saas", Routes: emailOnly},
		tidings.MemberRoute{UserID: ada.ID, Project: "my-saas", Channel: "payments", Routes: both})
	if got := listed(); !slices.Equal(got, []string{"ada@example.com blog daily", "ada@example.com my-saas weekly",
		"eve@globex.example my-saas daily"}) {
		t.Fatalf("ListDigests after a member's deletion = %q", got)
	}
	if d := digestsOf(bob); len(d) != 0 {
		t.Fatalf("a deleted member's digests: %v", d)
	}

	// The project: its routes (the project's and its channels') and digests go; one
	// made again under the name has none.
	must(t, f.s.DeleteProject(ctx, acct, "my-saas"))
	_, err = f.s.CreateProject(ctx, acct, "my-saas")
	must(t, err)
	_, err = f.s.CreateChannel(ctx, acct, "my-saas", "payments")
	must(t, err)
	wantRoutes(t, f, tidings.MemberRoute{UserID: ada.ID, Project: "blog", Routes: pushOnly})
	if d := digestsOf(ada); !reflect.DeepEqual(d, map[string]string{"blog": tidings.DigestDaily}) {
		t.Fatalf("MemberDigests after the project's deletion = %v", d)
	}
	if got := listed(); !slices.Equal(got, []string{"ada@example.com blog daily", "eve@globex.example my-saas daily"}) {
		t.Fatalf("ListDigests after a project's deletion = %q", got)
	}
	// The other account's are untouched by all this.
	wantRoutes(t, g, tidings.MemberRoute{UserID: eve.ID, Project: "my-saas", Channel: "payments", Routes: emailOnly})
}

func testDigests(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	_, err := f.s.CreateProject(ctx, acct, "blog")
	must(t, err)
	ada, bob := f.member(t, "Ada@Example.com"), f.member(t, "bob@example.com")
	must(t, f.s.SetNotifyPrefs(ctx, ada.ID, &tidings.NotifyPrefs{TimeZone: "Asia/Kolkata"}))
	digests := func(u *tidings.User) map[string]string {
		t.Helper()
		d, err := f.s.MemberDigests(ctx, acct, u.ID)
		must(t, err)
		return d
	}
	if d := digests(ada); len(d) != 0 {
		t.Fatalf("digests of a member who chose none: %v", d)
	}
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "my-saas", tidings.DigestDaily))
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "blog", "Weekly")) // as ParseDigest reads it
	must(t, f.s.SetDigest(ctx, acct, bob.ID, "blog", tidings.DigestDaily))
	must(t, f.s.SetDigest(ctx, acct, bob.ID, "my-saas", tidings.DigestOff)) // off without a digest: nothing
	if d := digests(ada); !reflect.DeepEqual(d, map[string]string{"my-saas": "daily", "blog": "weekly"}) {
		t.Fatalf("MemberDigests(ada) = %v", d)
	}
	if d := digests(bob); !reflect.DeepEqual(d, map[string]string{"blog": "daily"}) {
		t.Fatalf("MemberDigests(bob) = %v", d)
	}

	// ListDigests: each with its account, member, email as saved, project, time zone
	// ("" without settings) and no period claimed yet.
	all, err := f.s.ListDigests(ctx)
	must(t, err)
	got := map[string]tidings.DigestPref{}
	for _, d := range all {
		got[fmt.Sprint(d.UserID, " ", d.Project)] = *d
	}
	want := map[string]tidings.DigestPref{
		fmt.Sprint(ada.ID, " my-saas"): {AccountID: acct, UserID: ada.ID, Email: "Ada@Example.com", Project: "my-saas", Every: "daily", TimeZone: "Asia/Kolkata"},
		fmt.Sprint(ada.ID, " blog"):    {AccountID: acct, UserID: ada.ID, Email: "Ada@Example.com", Project: "blog", Every: "weekly", TimeZone: "Asia/Kolkata"},
		fmt.Sprint(bob.ID, " blog"):    {AccountID: acct, UserID: bob.ID, Email: "bob@example.com", Project: "blog", Every: "daily"},
	}
	if len(all) != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("ListDigests = %+v, want %+v", got, want)
	}

	// Another frequency replaces; off forgets.
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "my-saas", tidings.DigestWeekly))
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "blog", tidings.DigestOff))
	if d := digests(ada); !reflect.DeepEqual(d, map[string]string{"my-saas": "weekly"}) {
		t.Fatalf("MemberDigests(ada) after weekly and off = %v", d)
	}
	if all, err := f.s.ListDigests(ctx); err != nil || len(all) != 2 {
		t.Fatalf("ListDigests after off: %d, %v", len(all), err)
	}

	// Refused: not a frequency, not a member, unknown project; nothing saved.
	wantCode(t, f.s.SetDigest(ctx, acct, ada.ID, "my-saas", "hourly"), tidings.EValidation)
	wantCode(t, f.s.SetDigest(ctx, acct, ada.ID, "nope", tidings.DigestDaily), tidings.EProjectNotFound)
	other := newAccount(t, f.s, "globex")
	g := fixture{s: f.s, account: other}
	eve := g.member(t, "eve@globex.example")
	wantNotMember(t, f.s.SetDigest(ctx, acct, eve.ID, "my-saas", tidings.DigestDaily), eve.ID)
	wantNotMember(t, f.s.SetDigest(ctx, other.ID, ada.ID, "my-saas", tidings.DigestDaily), ada.ID)
	if d := digests(ada); !reflect.DeepEqual(d, map[string]string{"my-saas": "weekly"}) {
		t.Fatalf("MemberDigests(ada) after refusals = %v", d)
	}
	// Another account sees none of this account's members' digests.
	if d, err := f.s.MemberDigests(ctx, other.ID, ada.ID); err != nil || len(d) != 0 {
		t.Fatalf("MemberDigests of another account's member = %v, %v", d, err)
	}
	must(t, f.s.SetDigest(ctx, other.ID, eve.ID, "my-saas", tidings.DigestDaily))
	if d, err := f.s.MemberDigests(ctx, other.ID, eve.ID); err != nil || !reflect.DeepEqual(d, map[string]string{"my-saas": "daily"}) {
		t.Fatalf("MemberDigests(eve) = %v, %v", d, err)
	}
	if d := digests(ada); !reflect.DeepEqual(d, map[string]string{"my-saas": "weekly"}) {
		t.Fatalf("MemberDigests(ada) after another account's = %v", d)
	}
}

// digestJob is the job the scheduler adds for a digest's period.
func digestJob(p *tidings.DigestPref, end time.Time, tag string) *tidings.Delivery {
	return &tidings.Delivery{Kind: tidings.DeliverDigest, AccountID: p.AccountID, Target: tidings.MailTarget(p.UserID),
		Ref: p.Project, Count: 24, NextAt: end, CreatedAt: end,
		MessageID: fmt.Sprintf("<digest.%d.%s.%d.%s@tidings.invalid>", p.UserID, p.Project, end.Unix(), tag)}
}

func testClaimDigest(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	ada := f.member(t, "ada@example.com")
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "my-saas", tidings.DigestDaily))
	pref := func() *tidings.DigestPref {
		t.Helper()
		all, err := f.s.ListDigests(ctx)
		must(t, err)
		for _, d := range all {
			if d.UserID == ada.ID && d.Project == "my-saas" {
				return d
			}
		}
		t.Fatal("ada's digest is not listed")
		return nil
	}
	claim := func(p *tidings.DigestPref, end time.Time, tag string) bool {
		t.Helper()
		ok, err := f.s.ClaimDigest(ctx, p, end, digestJob(p, end, tag))
		must(t, err)
		return ok
	}
	// jobs claims the outbox's due digest jobs (each once: they stay leased).
	jobs := func() []*tidings.Delivery {
		t.Helper()
		got, err := f.s.ClaimDeliveries(ctx, epoch.Add(30*24*time.Hour), time.Hour, 100, tidings.DeliverDigest)
		must(t, err)
		return got
	}
	p := pref()
	if !p.LastPeriod.IsZero() {
		t.Fatalf("a new digest's LastPeriod = %v, want zero", p.LastPeriod)
	}
	day1, day2 := epoch.Add(3*time.Hour), epoch.Add(27*time.Hour) // 08:00 UTC
	if !claim(p, day1, "a") {
		t.Fatal("the first claim of a period found nothing to claim")
	}
	if claim(p, day1, "b") {
		t.Fatal("a period claimed twice")
	}
	if claim(pref(), day1.Add(-24*time.Hour), "c") {
		t.Fatal("an earlier period claimed after a later one")
	}
	if got := pref().LastPeriod; !got.Equal(day1) {
		t.Fatalf("LastPeriod after a claim = %v, want %v", got, day1)
	}
	got := jobs()
	if len(got) != 1 {
		t.Fatalf("%d jobs after claiming one period three times", len(got))
	}
	j, want := got[0], digestJob(p, day1, "a")
	if j.Kind != want.Kind || j.AccountID != acct || j.Target != want.Target || j.Ref != "my-saas" || j.Count != 24 ||
		j.MessageID != want.MessageID || !j.NextAt.Equal(day1) {
		t.Fatalf("the digest's job = %+v, want %+v", j, want)
	}

	// The next period, claimed by many at once (servers racing): one job.
	p = pref()
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := f.s.ClaimDigest(ctx, p, day2, digestJob(p, day2, strconv.Itoa(i)))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d of 8 concurrent claims of a period won, want 1", won)
	}
	if got := jobs(); len(got) != 1 || !got[0].NextAt.Equal(day2) {
		t.Fatalf("jobs after concurrent claims: %+v", got)
	}

	// A digest switched off, or of another account: nothing to claim, no job.
	q := pref()
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "my-saas", tidings.DigestOff))
	if claim(q, day2.Add(24*time.Hour), "gone") {
		t.Fatal("a digest switched off was claimed")
	}
	must(t, f.s.SetDigest(ctx, acct, ada.ID, "my-saas", tidings.DigestDaily))
	other := newAccount(t, f.s, "globex")
	stranger := *pref()
	stranger.AccountID = other.ID
	if claim(&stranger, day2.Add(48*time.Hour), "x") {
		t.Fatal("a digest claimed through another account")
	}
	if got := jobs(); len(got) != 0 {
		t.Fatalf("jobs of refused claims: %+v", got)
	}
	// Switched on again, it claims the next period.
	if !claim(pref(), day2.Add(72*time.Hour), "again") {
		t.Fatal("a digest switched on again could not be claimed")
	}
	if got := jobs(); len(got) != 1 {
		t.Fatalf("jobs after the digest came back: %d", len(got))
	}
}

// digestEvent is an event the digest tests publish at a time.
type digestEvent struct {
	channel, name, icon string
	at                  time.Time
}

func testDigestOfEvents(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	for _, c := range []string{"deploys", "signups", "quiet"} {
		_, err := f.s.CreateChannel(ctx, acct, "my-saas", c)
		must(t, err)
	}
	// Whole hours from base; periods that start and end on the hour and half an hour
	// off it (a digest at 08:00 in India is 02:30 UTC).
	base := epoch.Add(-72 * time.Hour).Truncate(time.Hour)
	at := func(h, m int, d time.Duration) time.Time {
		return base.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + d)
	}
	ms := time.Millisecond
	var seeded []digestEvent
	add := func(channel, name, icon string, when ...time.Time) {
		for _, w := range when {
			seeded = append(seeded, digestEvent{channel, name, icon, w})
		}
	}
	// Around 00:30 and 24:30 (the non-aligned edges), 00:00 and 24:00 (the aligned ones).
	add("payments", "paid", "💰", at(0, 30, -ms), at(0, 30, 0), at(0, 30, ms), at(0, 59, 59*time.Second+999*ms),
		at(1, 0, 0), at(5, 0, 0), at(23, 59, 0), at(24, 29, 59*time.Second+999*ms), at(24, 30, 0), at(25, 0, 0))
	add("payments", "paid", "", at(3, 0, 0), at(3, 15, 0))
	add("payments", "refund", "", at(2, 10, 0), at(0, 0, -ms), at(0, 0, 0))
	add("deploys", "deploy", "🚀", at(0, 45, 0), at(6, 0, 0), at(12, 0, 0), at(24, 0, -ms), at(24, 0, 0))
	add("signups", "signup", "", at(10, 0, 0), at(10, 30, 0))
	add("signups", "trial", "🧪", at(11, 0, 0))
	add("signups", "invite", "", at(11, 30, 0))
	add("signups", "upgrade", "", at(12, 30, 0))
	add("signups", "churn", "", at(13, 30, 0))
	// A project's events of another project and another account at the same times:
	// never counted.
	_, err := f.s.CreateProject(ctx, acct, "blog")
	must(t, err)
	_, err = f.s.CreateChannel(ctx, acct, "blog", "posts")
	must(t, err)
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	for _, e := range seeded {
		f.publish(t, tidings.NewEvent{Channel: e.channel, Event: e.name, Icon: e.icon, Timestamp: e.at})
		f.publish(t, tidings.NewEvent{Project: "blog", Channel: "posts", Event: e.name, Timestamp: e.at})
		g.publish(t, tidings.NewEvent{Channel: "payments", Event: e.name, Timestamp: e.at})
	}
	// A deleted event is not counted.
	gone := f.publish(t, tidings.NewEvent{Channel: "payments", Event: "paid", Timestamp: at(5, 0, 0)})
	must(t, f.s.DeleteEvent(ctx, acct, "my-saas", gone.ID))

	// expected counts the seeded events of [from, to) by channel and by name.
	expected := func(from, to time.Time) (total int, channels, names []tidings.DigestCount) {
		byChannel, byName, icon := map[string]int{}, map[string]int{}, map[string]string{}
		for _, e := range seeded {
			if e.at.Before(from) || !e.at.Before(to) {
				continue
			}
			total++
			byChannel[e.channel]++
			byName[e.name]++
			icon[e.name] = max(icon[e.name], e.icon)
		}
		for c, n := range byChannel {
			channels = append(channels, tidings.DigestCount{Name: c, Count: n})
		}
		for e, n := range byName {
			names = append(names, tidings.DigestCount{Name: e, Icon: icon[e], Count: n})
		}
		order := func(a, b tidings.DigestCount) int {
			if a.Count != b.Count {
				return b.Count - a.Count
			}
			return strings.Compare(a.Name, b.Name)
		}
		slices.SortFunc(channels, order)
		slices.SortFunc(names, order)
		return total, channels, names[:min(len(names), 5)]
	}
	for _, w := range []struct {
		name     string
		from, to time.Time
	}{
		{"a day on the hour", at(0, 0, 0), at(24, 0, 0)},
		{"a day half an hour off", at(0, 30, 0), at(24, 30, 0)},
		{"a week", at(-72, 0, 0), at(96, 0, 0)},
		{"within an hour", at(0, 30, 0), at(0, 59, 59*time.Second+999*ms)},
		{"across one hour's start", at(0, 30, ms), at(1, 0, ms)},
		{"a few hours off the hour", at(0, 45, 0), at(3, 15, 0)},
		{"nothing in it", at(30, 0, 0), at(40, 0, 0)},
		{"empty", at(5, 0, 0), at(5, 0, 0)},
		{"backwards", at(24, 0, 0), at(0, 0, 0)},
	} {
		t.Run(w.name, func(t *testing.T) {
			d, err := f.s.DigestOf(ctx, acct, "my-saas", w.from, w.to)
			must(t, err)
			total, channels, names := expected(w.from, w.to)
			if d.Project != "my-saas" || !d.From.Equal(w.from) || !d.To.Equal(w.to) {
				t.Errorf("DigestOf names %s [%v, %v)", d.Project, d.From, d.To)
			}
			if d.Events != total {
				t.Errorf("Events = %d, want %d", d.Events, total)
			}
			if len(d.Channels) != len(channels) || len(channels) > 0 && !reflect.DeepEqual(d.Channels, channels) {
				t.Errorf("Channels = %+v, want %+v", d.Channels, channels)
			}
			if len(d.TopEvents) != len(names) || len(names) > 0 && !reflect.DeepEqual(d.TopEvents, names) {
				t.Errorf("TopEvents = %+v, want %+v", d.TopEvents, names)
			}
		})
	}
	// A week holds 7 names: the top 5, an icon one of them had.
	d, err := f.s.DigestOf(ctx, acct, "my-saas", at(-72, 0, 0), at(96, 0, 0))
	must(t, err)
	if len(d.TopEvents) != 5 || d.TopEvents[0] != (tidings.DigestCount{Name: "paid", Icon: "💰", Count: 12}) {
		t.Fatalf("a week's top events = %+v", d.TopEvents)
	}
	_, err = f.s.DigestOf(ctx, acct, "nope", at(0, 0, 0), at(24, 0, 0))
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.DigestOf(ctx, g.account.ID, "blog", at(0, 0, 0), at(24, 0, 0))
	wantCode(t, err, tidings.EProjectNotFound)
}

// waitTick waits until the clock has passed t by a millisecond: what a store stamps
// after it is later than t whatever its precision.
func waitTick(t *testing.T, after time.Time) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !time.Now().After(after.Add(time.Millisecond)) {
		if time.Now().After(deadline) {
			t.Fatal("the clock does not move")
		}
		time.Sleep(time.Millisecond)
	}
}

// mark returns a time after every write so far and before every write after it.
func mark(t *testing.T) time.Time {
	t.Helper()
	waitTick(t, time.Now())
	m := time.Now()
	waitTick(t, m)
	return m
}

// The insights that changed and the users first seen in a period: the store stamps
// both with its clock, so the periods are cut between writes. An insight changed in
// the period is one with a point of its history in it (changed again since, it still
// is), latest change in the period first, with its value of now; a user is new when
// first seen in it.
func testDigestOfInsightsAndUsers(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	// Each write is stamped a millisecond after the one before: "latest first" has one answer.
	identify := func(f fixture, ids ...string) {
		t.Helper()
		for _, id := range ids {
			_, err := f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: id})
			must(t, err)
			waitTick(t, time.Now())
		}
	}
	set := func(title, value string) {
		t.Helper()
		_, err := f.insight(t, tidings.InsightChange{Title: title, Value: value, Change: tidings.ChangeUpdate})
		must(t, err)
		waitTick(t, time.Now())
	}
	set("Before", "1")
	set("Later again", "1")
	identify(f, "old-1", "old-2")
	from := mark(t)
	set("First", "1")
	set("Twice", "1")
	identify(f, "new-0")
	for i := 1; i <= 11; i++ { // newest last: new-11
		f.publish(t, tidings.NewEvent{Event: "seen", UserID: fmt.Sprintf("new-%d", i)})
		waitTick(t, time.Now())
	}
	f.publish(t, tidings.NewEvent{Event: "seen again", UserID: "old-1"}) // not new
	set("Twice", "2")
	set("Later again", "2") // in the period, and again after it
	_, err := g.insight(t, tidings.InsightChange{Title: "Other account", Value: "1", Change: tidings.ChangeUpdate})
	must(t, err)
	identify(g, "stranger")
	to := mark(t)
	set("After", "1")
	set("Later again", "3")
	identify(f, "newer")

	d, err := f.s.DigestOf(ctx, acct, "my-saas", from, to)
	must(t, err)
	var titles []string
	for _, in := range d.Insights {
		titles = append(titles, in.Title+"="+in.Value)
	}
	// Latest change in the period first; the value is the insight's now.
	if want := []string{"Later again=3", "Twice=2", "First=1"}; !slices.Equal(titles, want) {
		t.Errorf("Insights = %q, want %q", titles, want)
	}
	if d.NewUsers != 12 {
		t.Errorf("NewUsers = %d, want 12", d.NewUsers)
	}
	want := []string{"new-11", "new-10", "new-9", "new-8", "new-7", "new-6", "new-5", "new-4", "new-3", "new-2"}
	if !slices.Equal(d.NewUserIDs, want) {
		t.Errorf("NewUserIDs = %q, want %q", d.NewUserIDs, want)
	}
	if d.Events != 12 {
		t.Errorf("Events = %d, want 12", d.Events)
	}

	// At most 10 insights, the latest first.
	from = mark(t)
	for i := range 12 {
		set(fmt.Sprintf("Metric %02d", i), "1")
	}
	to = mark(t)
	d, err = f.s.DigestOf(ctx, acct, "my-saas", from, to)
	must(t, err)
	titles = titles[:0]
	for _, in := range d.Insights {
		titles = append(titles, in.Title)
	}
	if len(titles) != 10 || titles[0] != "Metric 11" || titles[9] != "Metric 02" {
		t.Errorf("the latest 10 of 12 insights = %q", titles)
	}
	if d.NewUsers != 0 || len(d.NewUserIDs) != 0 || d.Events != 0 {
		t.Errorf("a period without users or events: %d users %q, %d events", d.NewUsers, d.NewUserIDs, d.Events)
	}
}

func testEscalation(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	_, err := f.s.CreateProject(ctx, acct, "blog")
	must(t, err)
	wantAfter := func(f fixture, project string, want time.Duration) {
		t.Helper()
		p, err := f.s.FindProject(ctx, f.account.ID, project)
		must(t, err)
		if p.EscalateAfter != want {
			t.Fatalf("FindProject(%s).EscalateAfter = %v, want %v", project, p.EscalateAfter, want)
		}
		all, err := f.s.ListProjects(ctx, f.account.ID)
		must(t, err)
		for _, p := range all {
			if p.Name == project && p.EscalateAfter != want {
				t.Fatalf("ListProjects: %s.EscalateAfter = %v, want %v", project, p.EscalateAfter, want)
			}
		}
	}
	wantAfter(f, "my-saas", 0) // never, by default
	for _, d := range []time.Duration{time.Minute, 10 * time.Minute, 90 * time.Minute, tidings.MaxEscalateAfter, 0} {
		must(t, f.s.SetEscalation(ctx, acct, "my-saas", d))
		wantAfter(f, "my-saas", d)
	}
	must(t, f.s.SetEscalation(ctx, acct, "my-saas", 15*time.Minute))
	for _, bad := range []time.Duration{time.Second, 59 * time.Second, tidings.MaxEscalateAfter + time.Second, -time.Minute} {
		wantCode(t, f.s.SetEscalation(ctx, acct, "my-saas", bad), tidings.EValidation)
	}
	wantAfter(f, "my-saas", 15*time.Minute)
	wantAfter(f, "blog", 0)
	wantCode(t, f.s.SetEscalation(ctx, acct, "nope", time.Hour), tidings.EProjectNotFound)
	// Another account's project of the same name is its own.
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	wantCode(t, f.s.SetEscalation(ctx, g.account.ID, "blog", time.Hour), tidings.EProjectNotFound)
	must(t, f.s.SetEscalation(ctx, g.account.ID, "my-saas", time.Hour))
	wantAfter(f, "my-saas", 15*time.Minute)
	wantAfter(g, "my-saas", time.Hour)
}

func testInviteEmail(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	owner := &tidings.User{AccountID: f.account.ID, Email: "owner@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	must(t, f.s.CreateUser(ctx, owner))
	mailed, copied := tidings.HashSecret("mailed"), tidings.HashSecret("copied")
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: mailed, AccountID: f.account.ID, CreatedBy: owner.ID, Email: "New.Person@example.com",
		Role: tidings.UserOwner, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: copied, AccountID: f.account.ID, CreatedBy: owner.ID,
		CreatedAt: epoch.Add(time.Minute), ExpiresAt: epoch.Add(time.Hour)}))
	inv, err := f.s.FindInvite(ctx, mailed, epoch)
	must(t, err)
	if inv.Email != "New.Person@example.com" || inv.Role != tidings.UserOwner {
		t.Fatalf("FindInvite of a mailed invitation = %+v", inv)
	}
	inv, err = f.s.FindInvite(ctx, copied, epoch)
	must(t, err)
	if inv.Email != "" {
		t.Fatalf("FindInvite of a copied link: Email %q", inv.Email)
	}
	list, err := f.s.ListInvites(ctx, f.account.ID, epoch)
	must(t, err)
	if len(list) != 2 || list[0].Email != "" || list[1].Email != "New.Person@example.com" || list[1].ID != tidings.InviteID(mailed) {
		t.Fatalf("ListInvites = %+v", list)
	}
}
