package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// The store's own checks of members' routes and digests, projects' escalation and
// invitations' emails, besides the shared suite's (storetest.Routes, run by Run).

func (f recipientsFixture) user(t *testing.T, email string) int64 {
	t.Helper()
	u, err := f.db.FindUserByEmail(context.Background(), email)
	noErr(t, err)
	return u.ID
}

func routeList(rs []*tidings.MemberRoute) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%d %s/%s %s", r.UserID, r.Project, r.Channel, r.Routes))
	}
	return strings.Join(out, "; ")
}

// TestMemberRoutes: choices per project and channel round trip, resolve with RoutesFor,
// change in place, are forgotten with nil; a stranger, an unknown project or channel
// is refused; another account sees none of them and sets none for a member not its own.
func TestMemberRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	ada, bob, eve := f.user(t, "ada@example.com"), f.user(t, "bob@example.com"), f.user(t, "eve@example.com")
	if rs, err := db.AccountRoutes(ctx, f.acme); err != nil || rs != nil {
		t.Fatalf("routes of a new account: %v, %v", routeList(rs), err)
	}
	noErr(t, db.SetRoutes(ctx, f.acme, ada, "my-saas", "", &tidings.Routes{Email: true}))
	noErr(t, db.SetRoutes(ctx, f.acme, ada, "my-saas", "payments", &tidings.Routes{Push: true, Email: true}))
	noErr(t, db.SetRoutes(ctx, f.acme, bob, "my-saas", "deploys", &tidings.Routes{}))
	noErr(t, db.SetRoutes(ctx, f.globex, eve, "my-saas", "payments", &tidings.Routes{Email: true}))
	want := func(account int64, list string) []*tidings.MemberRoute {
		t.Helper()
		rs, err := db.AccountRoutes(ctx, account)
		noErr(t, err)
		if got := routeList(rs); got != list {
			t.Fatalf("AccountRoutes:\n got %s\nwant %s", got, list)
		}
		return rs
	}
	rs := want(f.acme, fmt.Sprintf("%d my-saas/ email; %d my-saas/payments push,email; %d my-saas/deploys none", ada, ada, bob))
	for _, c := range []struct {
		user    int64
		channel string
		want    tidings.Routes
	}{
		{ada, "payments", tidings.Routes{Push: true, Email: true}},
		{ada, "deploys", tidings.Routes{Email: true}},
		{bob, "payments", tidings.DefaultRoutes},
		{bob, "deploys", tidings.Routes{}},
	} {
		if got := tidings.RoutesFor(rs, c.user, "my-saas", c.channel); got != c.want {
			t.Fatalf("RoutesFor(%d, %s) = %v, want %v", c.user, c.channel, got, c.want)
		}
	}
	// A change replaces the choice; nil forgets it (the channel follows the project).
	noErr(t, db.SetRoutes(ctx, f.acme, ada, "my-saas", "", &tidings.Routes{Push: true}))
	noErr(t, db.SetRoutes(ctx, f.acme, ada, "my-saas", "payments", nil))
	noErr(t, db.SetRoutes(ctx, f.acme, bob, "my-saas", "", nil)) // none saved: nothing to forget
	want(f.acme, fmt.Sprintf("%d my-saas/ push; %d my-saas/deploys none", ada, bob))
	want(f.globex, fmt.Sprintf("%d my-saas/payments email", eve))

	// Refused, and nothing saved.
	err := db.SetRoutes(ctx, f.acme, eve, "my-saas", "", &tidings.Routes{Email: true})
	wantErrCode(t, err, tidings.ENotFound)
	if !strings.Contains(err.Error(), fmt.Sprint(eve)) {
		t.Fatalf("not a member: %q does not name the user", err)
	}
	wantErrCode(t, db.SetRoutes(ctx, f.globex, ada, "my-saas", "", &tidings.Routes{}), tidings.ENotFound)
	wantErrCode(t, db.SetRoutes(ctx, f.acme, 1<<40, "my-saas", "", &tidings.Routes{}), tidings.ENotFound)
	wantErrCode(t, db.SetRoutes(ctx, f.acme, ada, "nope", "", &tidings.Routes{}), tidings.EProjectNotFound)
	wantErrCode(t, db.SetRoutes(ctx, f.acme, ada, "my-saas", "nope", &tidings.Routes{}), tidings.EChannelNotFound)
	wantErrCode(t, db.SetRoutes(ctx, f.acme, ada, "my-saas", "nope", nil), tidings.EChannelNotFound)
	want(f.acme, fmt.Sprintf("%d my-saas/ push; %d my-saas/deploys none", ada, bob))
	want(f.globex, fmt.Sprintf("%d my-saas/payments email", eve))
}

// TestRoutesCascade: a member's, a channel's and a project's deletion take their
// routes and digests along, and only theirs.
func TestRoutesCascade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	ada, bob := f.user(t, "ada@example.com"), f.user(t, "bob@example.com")
	_, err := db.CreateProject(ctx, f.acme, "blog")
	noErr(t, err)
	for _, u := range []int64{ada, bob} {
		noErr(t, db.SetRoutes(ctx, f.acme, u, "my-saas", "", &tidings.Routes{Email: true}))
		noErr(t, db.SetRoutes(ctx, f.acme, u, "my-saas", "payments", &tidings.Routes{Push: true}))
		noErr(t, db.SetRoutes(ctx, f.acme, u, "my-saas", "deploys", &tidings.Routes{}))
		noErr(t, db.SetRoutes(ctx, f.acme, u, "blog", "", &tidings.Routes{Push: true, Email: true}))
		noErr(t, db.SetDigest(ctx, f.acme, u, "my-saas", tidings.DigestDaily))
		noErr(t, db.SetDigest(ctx, f.acme, u, "blog", tidings.DigestWeekly))
	}
	count := func() string {
		t.Helper()
		rs, err := db.AccountRoutes(ctx, f.acme)
		noErr(t, err)
		ds, err := db.ListDigests(ctx)
		noErr(t, err)
		return fmt.Sprintf("%d routes %d digests", len(rs), len(ds))
	}
	if got := count(); got != "8 routes 4 digests" {
		t.Fatalf("before: %s", got)
	}
	noErr(t, db.DeleteChannel(ctx, f.acme, "my-saas", "payments"))
	if got := count(); got != "6 routes 4 digests" {
		t.Fatalf("after the channel: %s", got)
	}
	noErr(t, db.DeleteUser(ctx, f.acme, bob))
	if got := count(); got != "3 routes 2 digests" {
		t.Fatalf("after the member: %s", got)
	}
	noErr(t, db.DeleteProject(ctx, f.acme, "my-saas"))
	if got := count(); got != "1 routes 1 digests" {
		t.Fatalf("after the project: %s", got)
	}
	rs, _ := db.AccountRoutes(ctx, f.acme)
	if got := routeList(rs); got != fmt.Sprintf("%d blog/ push,email", ada) {
		t.Fatalf("left: %s", got)
	}
	mustCheck(t, db, "after the deletions")
}

// TestEscalation: 0 or 1m–24h, read back on FindProject and ListProjects; a new
// project never escalates.
func TestEscalation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	p, err := db.FindProject(ctx, f.acme, "my-saas")
	noErr(t, err)
	if p.EscalateAfter != 0 {
		t.Fatalf("a new project escalates after %v", p.EscalateAfter)
	}
	for _, bad := range []time.Duration{30 * time.Second, -time.Minute, 24*time.Hour + time.Second} {
		wantValidation(t, db.SetEscalation(ctx, f.acme, "my-saas", bad), "escalate_after", "between 1m and 24h")
	}
	wantErrCode(t, db.SetEscalation(ctx, f.acme, "nope", 10*time.Minute), tidings.EProjectNotFound)
	for _, after := range []time.Duration{10 * time.Minute, time.Minute, 24 * time.Hour, 0} {
		noErr(t, db.SetEscalation(ctx, f.acme, "my-saas", after))
		p, err := db.FindProject(ctx, f.acme, "my-saas")
		noErr(t, err)
		ps, err := db.ListProjects(ctx, f.acme)
		noErr(t, err)
		if p.EscalateAfter != after || len(ps) != 1 || ps[0].EscalateAfter != after {
			t.Fatalf("escalate after %v read back %v, listed %v", after, p.EscalateAfter, ps[0].EscalateAfter)
		}
	}
	noErr(t, db.SetEscalation(ctx, f.acme, "my-saas", 90*time.Minute))
	if p, _ := db.FindProject(ctx, f.globex, "my-saas"); p.EscalateAfter != 0 {
		t.Fatalf("another account's project escalates after %v", p.EscalateAfter)
	}
}

// TestInviteEmail: an invitation keeps the address it was mailed to; one copied by
// hand has none.
func TestInviteEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	ada := f.user(t, "ada@example.com")
	now := time.Now().UTC().Truncate(time.Millisecond)
	mailed := &tidings.Invite{Hash: []byte(strings.Repeat("m", 32)), AccountID: f.acme, Role: tidings.UserMember,
		Email: "carol@example.com", CreatedBy: ada, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	copied := &tidings.Invite{Hash: []byte(strings.Repeat("c", 32)), AccountID: f.acme, Role: tidings.UserOwner,
		CreatedBy: ada, CreatedAt: now.Add(time.Millisecond), ExpiresAt: now.Add(time.Hour)}
	noErr(t, db.CreateInvite(ctx, mailed))
	noErr(t, db.CreateInvite(ctx, copied))
	for _, inv := range []*tidings.Invite{mailed, copied} {
		got, err := db.FindInvite(ctx, inv.Hash, now)
		noErr(t, err)
		if got.Email != inv.Email || got.Role != inv.Role {
			t.Fatalf("FindInvite: %+v, want email %q", got, inv.Email)
		}
	}
	list, err := db.ListInvites(ctx, f.acme, now)
	noErr(t, err)
	if len(list) != 2 || list[0].Email != "" || list[1].Email != "carol@example.com" {
		t.Fatalf("ListInvites: %+v", list)
	}
}

// TestAcknowledgeEndsEscalation: an acknowledgement deletes the event's pending
// escalation, and an escalation added after it (the event's expansion, late) is not.
func TestAcknowledgeEndsEscalation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	publish := func() *tidings.Event {
		ev, err := db.PublishEvent(ctx, f.acme, &tidings.NewEvent{Project: "my-saas", Channel: "deploys", Event: "down",
			Parser: tidings.ParserText, Notify: true, Priority: "urgent"})
		noErr(t, err)
		return ev
	}
	escalations := func(ev *tidings.Event) int {
		t.Helper()
		var n int
		noErr(t, postgres.QueryRowForTest(db, `SELECT count(*) FROM deliveries WHERE event_id = $1 AND kind = $2`,
			ev.ID, tidings.DeliverEscalate).Scan(&n))
		return n
	}
	at := time.Now().Add(10 * time.Minute)
	acked := publish()
	noErr(t, db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverEscalate, AccountID: f.acme, EventID: acked.ID,
		MessageID: "escalate-" + acked.ID, NextAt: at}))
	other := publish()
	noErr(t, db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverEscalate, AccountID: f.acme, EventID: other.ID,
		MessageID: "escalate-" + other.ID, NextAt: at}))
	if escalations(acked) != 1 || escalations(other) != 1 {
		t.Fatal("escalations not queued")
	}
	_, first, err := db.AcknowledgeEvent(ctx, f.acme, acked.ID, "ada@example.com", time.Now())
	noErr(t, err)
	if !first || escalations(acked) != 0 || escalations(other) != 1 {
		t.Fatalf("after the acknowledgement: first %v, %d and %d escalations", first, escalations(acked), escalations(other))
	}
	// The event's own job, expanded late: its escalation is dropped, its webhook kept.
	var job int64
	noErr(t, postgres.QueryRowForTest(db, `SELECT id FROM deliveries WHERE event_id = $1 AND kind = $2`,
		acked.ID, tidings.DeliverEvent).Scan(&job))
	noErr(t, db.ReplaceDelivery(ctx, job, []*tidings.Delivery{
		{Kind: tidings.DeliverEscalate, AccountID: f.acme, EventID: acked.ID, MessageID: "escalate-late-" + acked.ID, NextAt: at},
		{Kind: tidings.DeliverWebhook, AccountID: f.acme, EventID: acked.ID, Target: "wh_x", MessageID: "wh-late-" + acked.ID, NextAt: at},
	}, nil))
	kinds, err := postgres.QueryStringsForTest(db, `SELECT kind FROM deliveries WHERE event_id = $1 ORDER BY kind`, acked.ID)
	noErr(t, err)
	if !slices.Equal(kinds, []string{tidings.DeliverAck, tidings.DeliverWebhook}) {
		t.Fatalf("the acknowledged event's jobs: %v", kinds)
	}
	// An escalation of the acknowledged event that is still there (queued after the
	// acknowledgement): run, it tells nobody and records nothing.
	noErr(t, db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverEscalate, AccountID: f.acme, EventID: acked.ID,
		MessageID: "escalate-again-" + acked.ID, NextAt: at}))
	noErr(t, postgres.QueryRowForTest(db, `SELECT id FROM deliveries WHERE event_id = $1 AND kind = $2`,
		acked.ID, tidings.DeliverEscalate).Scan(&job))
	bob := f.user(t, "bob@example.com")
	noErr(t, db.ReplaceDelivery(ctx, job, []*tidings.Delivery{
		{Kind: tidings.DeliverMail, AccountID: f.acme, EventID: acked.ID, Target: tidings.MailTarget(bob), MessageID: "<m.1@x>", NextAt: at},
	}, []*tidings.PushRecord{{EventID: acked.ID, SubscriptionID: tidings.MailTarget(bob), UserID: bob, Status: tidings.PushPending, At: at}}))
	kinds, err = postgres.QueryStringsForTest(db, `SELECT kind FROM deliveries WHERE event_id = $1 ORDER BY kind`, acked.ID)
	noErr(t, err)
	if !slices.Equal(kinds, []string{tidings.DeliverAck, tidings.DeliverWebhook}) {
		t.Fatalf("the acknowledged event's jobs after its escalation ran: %v", kinds)
	}
	if recs, err := db.EventPushes(ctx, f.acme, acked.ID); err != nil || len(recs) != 0 {
		t.Fatalf("records of an escalation after the acknowledgement: %+v, %v", recs, err)
	}
}

// TestRoutesRaceDeletions: routes and digests saved while their member, channel and
// project are deleted either land first and go with them, or are refused with the
// domain's error (never a foreign key's); the check finds nothing left behind.
func TestRoutesRaceDeletions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	for round := range 20 {
		project := fmt.Sprint("p", round)
		_, err := db.CreateProject(ctx, f.acme, project)
		noErr(t, err)
		_, err = db.CreateChannel(ctx, f.acme, project, "c")
		noErr(t, err)
		u := &tidings.User{AccountID: f.acme, Email: fmt.Sprintf("m%d@example.com", round), PasswordHash: "$argon2id$x", Role: tidings.UserMember}
		noErr(t, db.CreateUser(ctx, u))
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		for _, fn := range []func() error{
			func() error { return db.SetRoutes(ctx, f.acme, u.ID, project, "c", &tidings.Routes{Email: true}) },
			func() error { return db.SetRoutes(ctx, f.acme, u.ID, project, "", &tidings.Routes{Push: true}) },
			func() error { return db.SetDigest(ctx, f.acme, u.ID, project, tidings.DigestDaily) },
			func() error {
				switch round % 3 {
				case 0:
					return db.DeleteChannel(ctx, f.acme, project, "c")
				case 1:
					return db.DeleteProject(ctx, f.acme, project)
				}
				return db.DeleteUser(ctx, f.acme, u.ID)
			},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- fn()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			switch tidings.ErrorCode(err) {
			case "", tidings.ENotFound, tidings.EProjectNotFound, tidings.EChannelNotFound:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	rs, err := db.AccountRoutes(ctx, f.acme)
	noErr(t, err)
	// Only the project's routes of the rounds that deleted a channel can be left.
	for _, r := range rs {
		n, err := strconv.Atoi(strings.TrimPrefix(r.Project, "p"))
		if err != nil || n%3 != 0 || r.Channel != "" {
			t.Fatalf("a route of a deleted member, channel or project: %+v", r)
		}
	}
	mustCheck(t, db, "after the races")
}

// TestMailJobsGoWithTheirEvents: a deleted channel's or project's events take their
// mail and escalation jobs along, as they take their pushes; the check knows both
// kinds name an event.
func TestMailJobsGoWithTheirEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	db := f.db
	ada := f.user(t, "ada@example.com")
	jobs := func(ev *tidings.Event) int {
		t.Helper()
		var n int
		noErr(t, postgres.QueryRowForTest(db, `SELECT count(*) FROM deliveries WHERE event_id = $1 AND kind IN ($2, $3)`,
			ev.ID, tidings.DeliverMail, tidings.DeliverEscalate).Scan(&n))
		return n
	}
	urgent := func(project, channel string) *tidings.Event {
		t.Helper()
		ev, err := db.PublishEvent(ctx, f.acme, &tidings.NewEvent{Project: project, Channel: channel, Event: "disk full",
			Parser: tidings.ParserText, Notify: true, Priority: "urgent"})
		noErr(t, err)
		noErr(t, db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverMail, AccountID: f.acme, EventID: ev.ID,
			Target: tidings.MailTarget(ada), MessageID: "<m." + ev.ID + "@x>"}))
		noErr(t, db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverEscalate, AccountID: f.acme, EventID: ev.ID,
			NextAt: time.Now().Add(10 * time.Minute)}))
		if jobs(ev) != 2 {
			t.Fatalf("%d mail and escalation jobs queued", jobs(ev))
		}
		return ev
	}
	deploys, payments := urgent("my-saas", "deploys"), urgent("my-saas", "payments")
	noErr(t, db.DeleteChannel(ctx, f.acme, "my-saas", "deploys"))
	if jobs(deploys) != 0 || jobs(payments) != 2 {
		t.Fatalf("after the channel's deletion: %d and %d jobs", jobs(deploys), jobs(payments))
	}
	mustCheck(t, db, "after the channel's deletion")
	noErr(t, db.DeleteProject(ctx, f.acme, "my-saas"))
	if jobs(payments) != 0 {
		t.Fatalf("after the project's deletion: %d jobs", jobs(payments))
	}
	// A mail job of a missing event is named by the check.
	_, err := postgres.ExecForTest(db, `INSERT INTO deliveries (kind, account_id, event_id, target, message_id, next_at, created_at)
		VALUES ($1, $2, '0190a000-0000-7000-8000-000000000000', $3, '<orphan@x>', 0, 0)`, tidings.DeliverMail, f.acme, tidings.MailTarget(ada))
	noErr(t, err)
	r, err := db.Check(ctx)
	noErr(t, err)
	if len(r.Problems) != 1 || r.Problems[0].Kind != "outbox.event" {
		t.Fatalf("check of an orphan mail job: %v", r.Problems)
	}
}
