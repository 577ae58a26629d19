package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// TestRoutesMigrateStore: migrate-store's Load carries members' routes, digests (with
// the last period queued), escalation delays and invitations' emails, and takes a dump
// of an older store without them: no routes, no digests, never escalate, no email.
func TestRoutesMigrateStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	src := f.db
	ada, bob, eve := f.user(t, "ada@example.com"), f.user(t, "bob@example.com"), f.user(t, "eve@example.com")
	noErr(t, src.SetRoutes(ctx, f.acme, ada, "my-saas", "", &tidings.Routes{Email: true}))
	noErr(t, src.SetRoutes(ctx, f.acme, ada, "my-saas", "payments", &tidings.Routes{Push: true, Email: true}))
	noErr(t, src.SetRoutes(ctx, f.acme, bob, "my-saas", "deploys", &tidings.Routes{}))
	noErr(t, src.SetRoutes(ctx, f.globex, eve, "my-saas", "", &tidings.Routes{Push: true}))
	noErr(t, src.SetDigest(ctx, f.acme, ada, "my-saas", tidings.DigestWeekly))
	noErr(t, src.SetDigest(ctx, f.globex, eve, "my-saas", tidings.DigestDaily))
	end := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	ds, err := src.ListDigests(ctx)
	noErr(t, err)
	for _, d := range ds {
		if d.UserID == ada {
			ok, err := src.ClaimDigest(ctx, d, end, &tidings.Delivery{Kind: tidings.DeliverDigest, Target: tidings.MailTarget(ada),
				Ref: "my-saas", Count: 168, MessageID: "<digest@x>"})
			noErr(t, err)
			if !ok {
				t.Fatal("not claimed")
			}
		}
	}
	noErr(t, src.SetEscalation(ctx, f.acme, "my-saas", 15*time.Minute))
	now := time.Now().UTC().Truncate(time.Millisecond)
	noErr(t, src.CreateInvite(ctx, &tidings.Invite{Hash: []byte(strings.Repeat("m", 32)), AccountID: f.acme, Role: tidings.UserMember,
		Email: "carol@example.com", CreatedBy: ada, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))

	state := func(db *postgres.DB) string {
		t.Helper()
		var out []string
		for _, acc := range []int64{f.acme, f.globex} {
			rs, err := db.AccountRoutes(ctx, acc)
			noErr(t, err)
			p, err := db.FindProject(ctx, acc, "my-saas")
			noErr(t, err)
			out = append(out, routeList(rs), p.EscalateAfter.String())
		}
		ds, err := db.ListDigests(ctx)
		noErr(t, err)
		for _, d := range ds {
			out = append(out, fmt.Sprintf("%d %s %s %s", d.UserID, d.Project, d.Every, d.LastPeriod.Format(time.RFC3339)))
		}
		invs, err := db.ListInvites(ctx, f.acme, now)
		noErr(t, err)
		for _, inv := range invs {
			out = append(out, "invite "+inv.Email)
		}
		return strings.Join(out, " | ")
	}
	want := state(src)
	if !strings.Contains(want, "15m0s") || !strings.Contains(want, "2026-03-02T08:00:00Z") || !strings.Contains(want, "carol@") {
		t.Fatalf("the source: %s", want)
	}

	t.Run("carried", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		dst := open(t)
		counts, err := dst.Load(ctx, d)
		noErr(t, err)
		if got := state(dst); got != want {
			t.Fatalf("after migrate-store:\n got %s\nwant %s", got, want)
		}
		rows := map[string]int64{}
		for _, c := range counts {
			rows[c.Table] = c.Rows
		}
		if rows["member_routes"] != 4 || rows["member_digests"] != 2 {
			t.Fatalf("counts %v", counts)
		}
		// The copies are the store's own: changed, checked and deleted as the source's.
		noErr(t, dst.SetRoutes(ctx, f.acme, bob, "my-saas", "deploys", &tidings.Routes{Email: true}))
		wantErrCode(t, dst.SetRoutes(ctx, f.acme, eve, "my-saas", "", nil), tidings.ENotFound)
		noErr(t, dst.DeleteUser(ctx, f.acme, ada))
		rs, err := dst.AccountRoutes(ctx, f.acme)
		noErr(t, err)
		if got := routeList(rs); got != fmt.Sprintf("%d my-saas/deploys email", bob) {
			t.Fatalf("after the copy's changes: %s", got)
		}
		mustCheck(t, dst, "after migrate-store")
	})

	t.Run("older dump", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		delete(d.Tables, "member_routes")
		delete(d.Tables, "member_digests")
		d.Tables["projects"].DropColumn("escalate_after")
		d.Tables["invites"].DropColumn("email")
		// The embedded store's dump has a rowid: a missing column never takes it.
		projects := d.Tables["projects"]
		projects.Columns = append(projects.Columns, "rowid")
		for i := range projects.Rows {
			projects.Rows[i] = append(projects.Rows[i], int64(600+i))
		}
		dst := open(t)
		_, err = dst.Load(ctx, d)
		noErr(t, err)
		for _, acc := range []int64{f.acme, f.globex} {
			rs, err := dst.AccountRoutes(ctx, acc)
			noErr(t, err)
			p, err := dst.FindProject(ctx, acc, "my-saas")
			noErr(t, err)
			if len(rs) != 0 || p.EscalateAfter != 0 {
				t.Fatalf("an older dump: routes %s, escalate after %v", routeList(rs), p.EscalateAfter)
			}
		}
		invs, err := dst.ListInvites(ctx, f.acme, now)
		noErr(t, err)
		if ds, _ := dst.ListDigests(ctx); len(ds) != 0 || len(invs) != 1 || invs[0].Email != "" {
			t.Fatalf("an older dump: digests %v, invites %+v", ds, invs)
		}
	})
}
