package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func testSessionsAndMembers(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	n, err := f.s.CountUsers(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("CountUsers on a fresh store = %d", n)
	}
	owner := &tidings.User{AccountID: f.account.ID, Email: "ada@example.com", PasswordHash: "h1", Role: tidings.UserOwner}
	must(t, f.s.CreateUser(ctx, owner))

	_, hash := tidings.NewSecret()
	must(t, f.s.CreateSession(ctx, &tidings.Session{Hash: hash, UserID: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	s, u, a, err := f.s.FindSession(ctx, hash, epoch.Add(time.Minute))
	must(t, err)
	if s.UserID != owner.ID || u.Email != "ada@example.com" || u.AccountID != f.account.ID || a.ID != f.account.ID || a.Name != "acme" {
		t.Fatalf("FindSession = %+v %+v %+v", s, u, a)
	}
	_, _, _, err = f.s.FindSession(ctx, hash, epoch.Add(2*time.Hour))
	wantCode(t, err, tidings.ENotFound) // expired

	// A flash is taken once; a new one replaces one not taken.
	fl, err := f.s.TakeFlash(ctx, hash)
	must(t, err)
	if fl != nil {
		t.Fatalf("a flash before any: %q", fl)
	}
	must(t, f.s.SetFlash(ctx, hash, []byte("first")))
	must(t, f.s.SetFlash(ctx, hash, []byte("second")))
	if fl, err = f.s.TakeFlash(ctx, hash); err != nil || string(fl) != "second" {
		t.Fatalf("TakeFlash = %q %v", fl, err)
	}
	if fl, _ = f.s.TakeFlash(ctx, hash); fl != nil {
		t.Fatalf("a flash taken twice: %q", fl)
	}
	_, unknown := tidings.NewSecret()
	wantCode(t, f.s.SetFlash(ctx, unknown, []byte("x")), tidings.ENotFound)

	// An invite is used once, only before it expires, and makes a member.
	_, inv := tidings.NewSecret()
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: inv, AccountID: f.account.ID, CreatedBy: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	_, err = f.s.FindInvite(ctx, inv, epoch.Add(2*time.Hour))
	wantCode(t, err, tidings.ENotFound)
	got, err := f.s.FindInvite(ctx, inv, epoch)
	must(t, err)
	if got.AccountID != f.account.ID || got.AccountName != "acme" {
		t.Fatalf("FindInvite = %+v", got)
	}
	dup := &tidings.User{Email: "ADA@example.com", PasswordHash: "x"}
	wantCode(t, f.s.AcceptInvite(ctx, inv, dup, epoch), tidings.EConflict)
	member := &tidings.User{Email: "bob@example.com", PasswordHash: "h2"}
	must(t, f.s.AcceptInvite(ctx, inv, member, epoch))
	if member.Role != tidings.UserMember || member.AccountID != f.account.ID || member.ID == 0 {
		t.Fatalf("accepted member = %+v", member)
	}
	wantCode(t, f.s.AcceptInvite(ctx, inv, &tidings.User{Email: "eve@example.com", PasswordHash: "x"}, epoch), tidings.ENotFound)

	// Owners list pending invites (not used or expired ones) and revoke them; another
	// account cannot.
	_, pending := tidings.NewSecret()
	_, expired := tidings.NewSecret()
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: pending, AccountID: f.account.ID, CreatedBy: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: expired, AccountID: f.account.ID, CreatedBy: owner.ID, CreatedAt: epoch.Add(-2 * time.Hour), ExpiresAt: epoch.Add(-time.Hour)}))
	invites, err := f.s.ListInvites(ctx, f.account.ID, epoch)
	must(t, err)
	if len(invites) != 1 || invites[0].ID != tidings.InviteID(pending) || !invites[0].ExpiresAt.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("ListInvites = %+v", invites)
	}
	stranger := newAccount(t, f.s, "initech")
	wantCode(t, f.s.RevokeInvite(ctx, stranger.ID, invites[0].ID), tidings.ENotFound)
	wantCode(t, f.s.RevokeInvite(ctx, f.account.ID, "not-hex"), tidings.ENotFound)
	must(t, f.s.RevokeInvite(ctx, f.account.ID, invites[0].ID))
	_, err = f.s.FindInvite(ctx, pending, epoch)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.RevokeInvite(ctx, f.account.ID, invites[0].ID), tidings.ENotFound)

	users, err := f.s.ListUsers(ctx, f.account.ID)
	must(t, err)
	if len(users) != 2 || users[0].ID != owner.ID || users[1].ID != member.ID {
		t.Fatalf("ListUsers = %+v", users)
	}
	other := newAccount(t, f.s, "globex")
	_, err = f.s.FindUser(ctx, other.ID, member.ID)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.DeleteUser(ctx, other.ID, member.ID), tidings.ENotFound)

	// A password change ends every other session of the user.
	_, keep := tidings.NewSecret()
	must(t, f.s.CreateSession(ctx, &tidings.Session{Hash: keep, UserID: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	must(t, f.s.SetPassword(ctx, owner.ID, "h3", keep))
	_, _, _, err = f.s.FindSession(ctx, hash, epoch)
	wantCode(t, err, tidings.ENotFound)
	_, u, _, err = f.s.FindSession(ctx, keep, epoch)
	must(t, err)
	if u.PasswordHash != "h3" {
		t.Fatalf("password hash = %q", u.PasswordHash)
	}
	must(t, f.s.DeleteSession(ctx, keep))
	_, _, _, err = f.s.FindSession(ctx, keep, epoch)
	wantCode(t, err, tidings.ENotFound)

	// A password reset link sets its user's password once and ends their sessions; it
	// is not an invitation, and is listed as a reset link, which an owner may revoke.
	_, reset := tidings.NewSecret()
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: reset, AccountID: f.account.ID, ResetUser: member.ID, CreatedBy: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	if got, err := f.s.FindInvite(ctx, reset, epoch); err != nil || got.ResetUser != member.ID || got.ResetEmail != "bob@example.com" {
		t.Fatalf("a reset link: %+v %v", got, err)
	}
	if invs, _ := f.s.ListInvites(ctx, f.account.ID, epoch); len(invs) != 1 || invs[0].ResetUser != member.ID || invs[0].ResetEmail != "bob@example.com" {
		t.Fatalf("the pending reset link is not listed as one: %+v", invs)
	}
	wantCode(t, f.s.AcceptInvite(ctx, reset, &tidings.User{Email: "mallory@example.com", PasswordHash: "x"}, epoch), tidings.ENotFound)
	_, bobSession := tidings.NewSecret()
	must(t, f.s.CreateSession(ctx, &tidings.Session{Hash: bobSession, UserID: member.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	_, err = f.s.UseReset(ctx, reset, "new-hash", epoch.Add(2*time.Hour))
	wantCode(t, err, tidings.ENotFound) // expired
	bob, err := f.s.UseReset(ctx, reset, "new-hash", epoch)
	must(t, err)
	if bob.ID != member.ID || bob.PasswordHash != "new-hash" {
		t.Fatalf("after a reset: %+v", bob)
	}
	_, _, _, err = f.s.FindSession(ctx, bobSession, epoch)
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.UseReset(ctx, reset, "again", epoch)
	wantCode(t, err, tidings.ENotFound) // once
	_, plain := tidings.NewSecret()
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: plain, AccountID: f.account.ID, CreatedBy: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	_, err = f.s.UseReset(ctx, plain, "x", epoch)
	wantCode(t, err, tidings.ENotFound) // an invitation is not a reset link
	must(t, f.s.RevokeInvite(ctx, f.account.ID, tidings.InviteID(plain)))

	// Removing a member signs them out.
	_, mh := tidings.NewSecret()
	must(t, f.s.CreateSession(ctx, &tidings.Session{Hash: mh, UserID: member.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	must(t, f.s.DeleteUser(ctx, f.account.ID, member.ID))
	_, _, _, err = f.s.FindSession(ctx, mh, epoch)
	wantCode(t, err, tidings.ENotFound)

	// An invite for an owner makes an owner.
	_, ownerInv := tidings.NewSecret()
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: ownerInv, AccountID: f.account.ID, Role: tidings.UserOwner, CreatedBy: owner.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	if got, err := f.s.FindInvite(ctx, ownerInv, epoch); err != nil || got.Role != tidings.UserOwner {
		t.Fatalf("an owner's invite: %+v %v", got, err)
	}
	carol := &tidings.User{Email: "carol@example.com", PasswordHash: "h3"}
	must(t, f.s.AcceptInvite(ctx, ownerInv, carol, epoch))
	if carol.Role != tidings.UserOwner {
		t.Fatalf("accepted an owner's invite: %+v", carol)
	}

	// An owner removed: every invitation and reset link they made stops working (the
	// audit: a removed owner's reset link for another owner still signed in as them).
	_, carolReset := tidings.NewSecret()
	_, carolInvite := tidings.NewSecret()
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: carolReset, AccountID: f.account.ID, ResetUser: owner.ID, CreatedBy: carol.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	must(t, f.s.CreateInvite(ctx, &tidings.Invite{Hash: carolInvite, AccountID: f.account.ID, Role: tidings.UserOwner, CreatedBy: carol.ID, CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)}))
	must(t, f.s.DeleteUser(ctx, f.account.ID, carol.ID))
	_, err = f.s.UseReset(ctx, carolReset, "mallory's", epoch)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.AcceptInvite(ctx, carolInvite, &tidings.User{Email: "mallory@example.com", PasswordHash: "x"}, epoch), tidings.ENotFound)
	if invs, _ := f.s.ListInvites(ctx, f.account.ID, epoch); len(invs) != 0 {
		t.Fatalf("a removed owner's links are still pending: %+v", invs)
	}
}

func testDeletes(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	f.publish(t, tidings.NewEvent{Event: "a"})
	f.publish(t, tidings.NewEvent{Event: "b"})
	f.publish(t, tidings.NewEvent{Channel: "deploys", Event: "c"})
	_, err = f.insight(t, tidings.InsightChange{Title: "N", Value: "1", Change: "update"})
	must(t, err)
	chTok := newToken(t, f.s, f.account.ID, tidings.AccessPublic, "my-saas", "deploys")
	projTok := newToken(t, f.s, f.account.ID, tidings.AccessFull, "my-saas", "")

	for _, c := range []struct {
		channel string
		want    int
	}{{"", 3}, {"payments", 2}, {"deploys", 1}} {
		n, err := f.s.CountEvents(ctx, f.account.ID, "my-saas", c.channel)
		must(t, err)
		if n != c.want {
			t.Fatalf("CountEvents(%q) = %d, want %d", c.channel, n, c.want)
		}
	}
	other := newAccount(t, f.s, "globex")
	wantCode(t, f.s.DeleteChannel(ctx, other.ID, "my-saas", "deploys"), tidings.EChannelNotFound)

	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "deploys"))
	wantCode(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "deploys"), tidings.EChannelNotFound)
	if n, _ := f.s.CountEvents(ctx, f.account.ID, "my-saas", ""); n != 2 {
		t.Fatalf("after deleting a channel: %d events", n)
	}
	_, err = f.s.FindToken(ctx, chTok.ID)
	wantCode(t, err, tidings.ENotFound) // the token limited to it went with it

	must(t, f.s.DeleteProject(ctx, f.account.ID, "my-saas"))
	wantCode(t, f.s.DeleteProject(ctx, f.account.ID, "my-saas"), tidings.EProjectNotFound)
	_, err = f.s.FindToken(ctx, projTok.ID)
	wantCode(t, err, tidings.ENotFound)
	// Recreated under the same name, it starts empty.
	_, err = f.s.CreateProject(ctx, f.account.ID, "my-saas")
	must(t, err)
	if n, _ := f.s.CountEvents(ctx, f.account.ID, "my-saas", ""); n != 0 {
		t.Fatalf("a recreated project holds %d old events", n)
	}
	ins, err := f.s.ListInsights(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(ins) != 0 {
		t.Fatalf("a recreated project holds old insights: %+v", ins)
	}
	// The other account's project of the same name is untouched.
	if _, err := f.s.FindProject(ctx, other.ID, "my-saas"); err != nil {
		t.Fatal(err)
	}
}

func testFeedReads(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	now := time.Now().UTC().Truncate(time.Hour)
	var ids []string
	for i, ts := range []time.Time{now.Add(-30 * time.Hour), now.Add(-2 * time.Hour), now.Add(-90 * time.Minute), now} {
		ch := "payments"
		if i == 3 {
			ch = "deploys"
		}
		ids = append(ids, f.publish(t, tidings.NewEvent{Channel: ch, Event: "e", Timestamp: ts}).ID)
	}
	ev, err := f.s.FindEvent(ctx, f.account.ID, "my-saas", ids[1])
	must(t, err)
	if ev.ID != ids[1] || ev.Channel != "payments" {
		t.Fatalf("FindEvent = %+v", ev)
	}
	other := newAccount(t, f.s, "globex")
	_, err = f.s.FindEvent(ctx, other.ID, "my-saas", ids[1])
	wantCode(t, err, tidings.ENotFound)

	after, err := f.s.EventsAfter(ctx, f.account.ID, "my-saas", ids[1], 10)
	must(t, err)
	if len(after) != 2 || after[0].ID != ids[2] || after[1].ID != ids[3] {
		t.Fatalf("EventsAfter = %v", after)
	}
	for _, c := range []struct {
		after     string
		max, want int
	}{{ids[0], 10, 3}, {ids[0], 2, 2}, {ids[3], 10, 0}} {
		n, err := f.s.CountEventsAfter(ctx, f.account.ID, "my-saas", c.after, c.max)
		must(t, err)
		if n != c.want {
			t.Fatalf("CountEventsAfter(%s, %d) = %d, want %d", c.after, c.max, n, c.want)
		}
	}
	_, err = f.s.CountEventsAfter(ctx, f.account.ID, "nope", ids[0], 10)
	wantCode(t, err, tidings.EProjectNotFound)

	perHour, err := f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "", now.Add(-48*time.Hour), time.Hour)
	must(t, err)
	if perHour[now.Add(-30*time.Hour)] != 1 || perHour[now.Add(-2*time.Hour)] != 2 || perHour[now] != 1 || len(perHour) != 3 {
		t.Fatalf("per hour = %v", perHour)
	}
	perHour, err = f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "deploys", now.Add(-48*time.Hour), time.Hour)
	must(t, err)
	if len(perHour) != 1 || perHour[now] != 1 {
		t.Fatalf("per hour in deploys = %v", perHour)
	}
	since, err := f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "", now.Add(-3*time.Hour), time.Hour)
	must(t, err)
	if len(since) != 2 {
		t.Fatalf("since 3 h ago = %v", since)
	}
	// From inside an hour, only the events from then on count.
	inside, err := f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "", now.Add(-100*time.Minute), time.Hour)
	must(t, err)
	if inside[now.Add(-2*time.Hour)] != 1 || inside[now] != 1 || len(inside) != 2 {
		t.Fatalf("since 100 min ago = %v", inside)
	}
	byDay, err := f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "", now.Truncate(24*time.Hour).Add(-72*time.Hour), 24*time.Hour)
	must(t, err)
	total := 0
	for start, n := range byDay {
		if !start.Equal(start.Truncate(24 * time.Hour)) {
			t.Fatalf("day bucket %v does not start a day", start)
		}
		total += n
	}
	if total != 4 {
		t.Fatalf("by day = %v, want 4 events in all", byDay)
	}
}
