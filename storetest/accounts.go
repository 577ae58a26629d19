package storetest

import (
	"context"
	"testing"

	"github.com/tidings-dev/tidings"
)

func testAccounts(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	a, err := s.CreateAccount(ctx, "acme")
	must(t, err)
	_, err = s.CreateAccount(ctx, "acme")
	wantCode(t, err, tidings.EConflict)
	_, err = s.CreateAccount(ctx, "Bad Name")
	wantCode(t, err, tidings.EValidation)

	got, err := s.FindAccount(ctx, "acme")
	must(t, err)
	if got.ID != a.ID {
		t.Fatalf("FindAccount = %+v, want id %d", got, a.ID)
	}
	_, err = s.FindAccount(ctx, "nobody")
	wantCode(t, err, tidings.ENotFound)
	all, err := s.ListAccounts(ctx)
	must(t, err)
	if len(all) != 1 {
		t.Fatalf("ListAccounts = %d accounts, want 1", len(all))
	}

	u := &tidings.User{AccountID: a.ID, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	must(t, s.CreateUser(ctx, u))
	if u.ID == 0 {
		t.Fatal("user has no id")
	}
	err = s.CreateUser(ctx, &tidings.User{AccountID: a.ID, Email: "ADA@example.com", PasswordHash: "x", Role: tidings.UserMember})
	wantCode(t, err, tidings.EConflict)
	found, err := s.FindUserByEmail(ctx, "Ada@Example.com")
	must(t, err)
	if found.ID != u.ID || found.Role != tidings.UserOwner {
		t.Fatalf("FindUserByEmail = %+v", found)
	}
}

func testProjects(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	id := f.account.ID
	_, err := f.s.CreateProject(ctx, id, "my-saas")
	wantCode(t, err, tidings.EConflict)
	for _, bad := range []string{"My-Saas", "-x", "x-", "a--b", "a b", ""} {
		_, err = f.s.CreateProject(ctx, id, bad)
		wantCode(t, err, tidings.EValidation)
		_, err = f.s.CreateChannel(ctx, id, "my-saas", bad)
		wantCode(t, err, tidings.EValidation)
	}
	_, err = f.s.CreateChannel(ctx, id, "my-saas", "payments")
	wantCode(t, err, tidings.EConflict)
	_, err = f.s.CreateChannel(ctx, id, "nope", "payments")
	wantCode(t, err, tidings.EProjectNotFound)

	_, err = f.s.CreateProject(ctx, id, "another")
	must(t, err)
	ps, err := f.s.ListProjects(ctx, id)
	must(t, err)
	if len(ps) != 2 || ps[0].Name != "another" || ps[1].Name != "my-saas" {
		t.Fatalf("ListProjects = %v", ps)
	}
	cs, err := f.s.ListChannels(ctx, id, "my-saas")
	must(t, err)
	if len(cs) != 1 || cs[0].Name != "payments" {
		t.Fatalf("ListChannels = %v", cs)
	}
	must(t, f.s.SetAutoCreateChannels(ctx, id, "my-saas", true))
	p, err := f.s.FindProject(ctx, id, "my-saas")
	must(t, err)
	if !p.AutoCreateChannels {
		t.Fatal("auto-create not stored")
	}
	wantCode(t, f.s.SetAutoCreateChannels(ctx, id, "nope", true), tidings.EProjectNotFound)

	// "Missing change means update": off by default, stored, read back by both reads.
	if p.InsightChangeDefault != "" {
		t.Fatalf("a new project's insight change default is %q, want none", p.InsightChangeDefault)
	}
	must(t, f.s.SetInsightChangeDefault(ctx, id, "my-saas", tidings.ChangeUpdate))
	p, err = f.s.FindProject(ctx, id, "my-saas")
	must(t, err)
	ps, err = f.s.ListProjects(ctx, id)
	must(t, err)
	if p.InsightChangeDefault != tidings.ChangeUpdate || ps[1].InsightChangeDefault != tidings.ChangeUpdate || ps[0].InsightChangeDefault != "" {
		t.Fatalf("insight change default: FindProject %q, ListProjects %q %q", p.InsightChangeDefault, ps[0].InsightChangeDefault, ps[1].InsightChangeDefault)
	}
	wantCode(t, f.s.SetInsightChangeDefault(ctx, id, "my-saas", tidings.ChangeDecrement), tidings.EValidation)
	wantCode(t, f.s.SetInsightChangeDefault(ctx, id, "nope", tidings.ChangeUpdate), tidings.EProjectNotFound)
}
