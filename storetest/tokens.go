package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func newToken(t *testing.T, s tidings.Store, accountID int64, access, project, channel string) *tidings.Token {
	t.Helper()
	id, _, hash := tidings.NewTokenSecret()
	tok := &tidings.Token{ID: id, AccountID: accountID, Name: "ci", Access: access, Project: project,
		Channel: channel, Roles: []string{tidings.RoleLog, tidings.RoleInsight}, Hash: hash}
	must(t, s.CreateToken(context.Background(), tok))
	return tok
}

func testTokens(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	id := f.account.ID
	tok := newToken(t, f.s, id, tidings.AccessPublic, "my-saas", "payments")

	got, err := f.s.FindToken(ctx, tok.ID)
	must(t, err)
	if got.AccountID != id || got.Project != "my-saas" || got.Channel != "payments" || got.Access != tidings.AccessPublic ||
		!got.HashMatches(tok.Hash) || got.Revoked() || !got.LastUsedAt.IsZero() || len(got.Roles) != 2 {
		t.Fatalf("FindToken = %+v", got)
	}
	_, err = f.s.FindToken(ctx, "unknown")
	wantCode(t, err, tidings.ENotFound)

	for name, bad := range map[string]*tidings.Token{
		"unknown project": {Access: tidings.AccessFull, Project: "nope", Roles: []string{"log"}},
		"unknown channel": {Access: tidings.AccessFull, Project: "my-saas", Channel: "nope", Roles: []string{"log"}},
		"channel alone":   {Access: tidings.AccessFull, Channel: "payments", Roles: []string{"log"}},
		"bad access":      {Access: "admin", Roles: []string{"log"}},
		"bad role":        {Access: tidings.AccessFull, Roles: []string{"admin"}},
		"no role":         {Access: tidings.AccessFull},
	} {
		bad.ID, bad.AccountID = "x"+name, id
		if err := f.s.CreateToken(ctx, bad); err == nil {
			t.Errorf("%s: CreateToken accepted %+v", name, bad)
		}
	}

	used := epoch.Add(time.Minute)
	must(t, f.s.TouchTokens(ctx, map[string]time.Time{tok.ID: used}))
	must(t, f.s.TouchTokens(ctx, map[string]time.Time{tok.ID: epoch})) // older: ignored
	list, err := f.s.ListTokens(ctx, id)
	must(t, err)
	if len(list) != 1 || !list[0].LastUsedAt.Equal(used) {
		t.Fatalf("ListTokens = %+v, want last used %v", list, used)
	}

	other := newAccount(t, f.s, "globex")
	theirs := newToken(t, f.s, other.ID, tidings.AccessFull, "", "")
	active := func(want ...string) {
		t.Helper()
		got, err := f.s.ActiveTokens(ctx, []string{tok.ID, "unknown", theirs.ID})
		must(t, err)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("ActiveTokens = %v, want %v", got, want)
		}
	}
	active(tok.ID, theirs.ID)
	if got, err := f.s.ActiveTokens(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("ActiveTokens of none = %v, %v", got, err)
	}
	wantCode(t, f.s.RevokeToken(ctx, other.ID, tok.ID, epoch), tidings.ENotFound)
	active(tok.ID, theirs.ID)
	must(t, f.s.RevokeToken(ctx, id, tok.ID, epoch))
	got, err = f.s.FindToken(ctx, tok.ID)
	must(t, err)
	if !got.Revoked() {
		t.Fatal("token not revoked")
	}
	active(theirs.ID)
}
