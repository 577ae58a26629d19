package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// testPeople: identify merges properties (sent keys overwrite, null removes, the rest
// stay), group adds members, users list most recently seen first with property
// filters and pages, and nothing of one account reaches another.
func testPeople(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	num := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindNumber, Value: v} }
	u, err := f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: "user-1",
		Properties: tidings.Tags{str("name", "Ada"), str("plan", "free"), num("seats", "3")}})
	must(t, err)
	if len(u.Properties) != 3 || u.FirstSeen.IsZero() {
		t.Fatalf("identified: %+v", u)
	}
	u, err = f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: "user-1",
		Properties: tidings.Tags{str("plan", "pro"), {Key: "beta", Kind: tidings.KindBool, Value: "true"}}, Remove: []string{"seats"}})
	must(t, err)
	want := tidings.Tags{str("name", "Ada"), str("plan", "pro"), {Key: "beta", Kind: tidings.KindBool, Value: "true"}}
	if !slices.Equal(u.Properties, want) {
		t.Fatalf("merged: %+v, want %+v", u.Properties, want)
	}
	for i := 2; i <= 7; i++ {
		_, err := f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: fmt.Sprint("user-", i),
			Properties: tidings.Tags{str("plan", []string{"free", "pro"}[i%2])}})
		must(t, err)
	}
	time.Sleep(2 * time.Millisecond) // times are kept in ms: the group call sees user-1 last
	g, err := f.s.Group(ctx, f.account.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "acme-inc", UserID: "user-1",
		Properties: tidings.Tags{str("industry", "retail")}})
	must(t, err)
	time.Sleep(2 * time.Millisecond) // and user-9 after it, in another millisecond
	g, err = f.s.Group(ctx, f.account.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "acme-inc", UserID: "user-9"})
	must(t, err)
	if g.Members != 2 || len(g.Properties) != 1 {
		t.Fatalf("group: %+v", g)
	}
	u, err = f.s.FindPerson(ctx, f.account.ID, "my-saas", "user-1")
	must(t, err)
	if !slices.Equal(u.Groups, []string{"acme-inc"}) {
		t.Fatalf("groups of user-1: %v", u.Groups)
	}
	// A user joins at most MaxUserGroups groups (the audit: 20,000 group calls made a
	// user's answer 2.3 MB); joining one it is in already is fine, and a refused call
	// changes nothing.
	_, err = f.s.CreateProject(ctx, f.account.ID, "crowd")
	must(t, err)
	for i := 1; i <= tidings.MaxUserGroups; i++ {
		_, err := f.s.Group(ctx, f.account.ID, &tidings.GroupChange{Project: "crowd", GroupID: fmt.Sprintf("team-%03d", i), UserID: "joiner"})
		must(t, err)
	}
	_, err = f.s.Group(ctx, f.account.ID, &tidings.GroupChange{Project: "crowd", GroupID: "one-too-many", UserID: "joiner"})
	wantCode(t, err, tidings.EValidation)
	if !strings.Contains(err.Error(), "belongs to 100 groups already") {
		t.Fatalf("the group limit's message: %v", err)
	}
	_, err = f.s.FindGroup(ctx, f.account.ID, "crowd", "one-too-many")
	wantCode(t, err, tidings.ENotFound)
	time.Sleep(2 * time.Millisecond)
	_, err = f.s.Group(ctx, f.account.ID, &tidings.GroupChange{Project: "crowd", GroupID: "team-001", UserID: "joiner"})
	must(t, err)
	j, err := f.s.FindPerson(ctx, f.account.ID, "crowd", "joiner")
	must(t, err)
	if len(j.Groups) != tidings.MaxUserGroups || j.GroupCount != tidings.MaxUserGroups || j.Groups[0] != "team-001" {
		t.Fatalf("a user in %d groups lists %d (%v…), most recently seen first", j.GroupCount, len(j.Groups), j.Groups[:2])
	}

	_, err = f.s.Group(ctx, f.account.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "globex-llc"})
	must(t, err)
	gp, err := f.s.ListGroups(ctx, f.account.ID, "my-saas", "", 1)
	must(t, err)
	if len(gp.Groups) != 1 || gp.Groups[0].GroupID != "globex-llc" || gp.Next != "globex-llc" {
		t.Fatalf("first page of groups: %+v", gp)
	}
	gp, err = f.s.ListGroups(ctx, f.account.ID, "my-saas", gp.Next, 1)
	must(t, err)
	if len(gp.Groups) != 1 || gp.Groups[0].GroupID != "acme-inc" || gp.Groups[0].Members != 2 || gp.Next != "" {
		t.Fatalf("second page of groups: %+v", gp)
	}
	_, err = f.s.ListGroups(ctx, f.account.ID, "my-saas", "nope", 1)
	wantCode(t, err, tidings.EValidation)
	g, err = f.s.FindGroup(ctx, f.account.ID, "my-saas", "acme-inc")
	must(t, err)
	if !slices.Equal(g.MemberIDs, []string{"user-9", "user-1"}) || g.Properties[0].Value != "retail" {
		t.Fatalf("group acme-inc: %+v", g)
	}
	_, err = f.s.FindGroup(ctx, other.ID, "my-saas", "acme-inc")
	wantCode(t, err, tidings.ENotFound)
	if gp, _ := f.s.ListGroups(ctx, other.ID, "my-saas", "", 10); len(gp.Groups) != 0 {
		t.Fatalf("another account lists %d groups", len(gp.Groups))
	}
	_, err = f.s.FindPerson(ctx, other.ID, "my-saas", "user-1")
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.FindPerson(ctx, f.account.ID, "my-saas", "nobody")
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "nope", UserID: "x"})
	wantCode(t, err, tidings.EProjectNotFound)

	walk := func(q tidings.PersonQuery) []string {
		t.Helper()
		q.Project, q.Limit = "my-saas", 3
		var ids []string
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("pages do not end")
			}
			p, err := f.s.ListPeople(ctx, f.account.ID, q)
			must(t, err)
			for _, u := range p.People {
				ids = append(ids, u.UserID)
			}
			if p.Next == "" {
				return ids
			}
			q.Before = p.Next
		}
	}
	all := walk(tidings.PersonQuery{})
	if len(all) != 8 || all[0] != "user-9" {
		t.Fatalf("all users, most recent first: %v", all)
	}
	// user-1 was seen again by the group call.
	if pro := walk(tidings.PersonQuery{Properties: []tidings.Tag{{Key: "plan", Value: "pro"}}}); !slices.Equal(pro, []string{"user-1", "user-7", "user-5", "user-3"}) {
		t.Fatalf("plan=pro: %v", pro)
	}
	if got := walk(tidings.PersonQuery{IDPrefix: "USER-"}); len(got) != 8 {
		t.Fatalf("users whose ID starts with USER-: %v", got)
	}
	if got := walk(tidings.PersonQuery{IDPrefix: "user-9"}); !slices.Equal(got, []string{"user-9"}) {
		t.Fatalf("users whose ID starts with user-9: %v", got)
	}
	if got := walk(tidings.PersonQuery{IDPrefix: "user_"}); len(got) != 0 {
		t.Fatalf("_ matched as a wildcard: %v", got)
	}
	if got := walk(tidings.PersonQuery{IDPrefix: "user-", Properties: []tidings.Tag{{Key: "plan", Value: "free"}}}); len(got) != 3 {
		t.Fatalf("user-… with plan free: %v", got)
	}
	if beta := walk(tidings.PersonQuery{Properties: []tidings.Tag{{Key: "beta", Value: "true"}, {Key: "plan", Value: "pro"}}}); !slices.Equal(beta, []string{"user-1"}) {
		t.Fatalf("beta=true, plan=pro: %v", beta)
	}
	if p, _ := f.s.ListPeople(ctx, other.ID, tidings.PersonQuery{Project: "my-saas", Limit: 10}); len(p.People) != 0 {
		t.Fatalf("another account lists %d users", len(p.People))
	}
	_, err = f.s.ListPeople(ctx, f.account.ID, tidings.PersonQuery{Project: "my-saas", Before: "nobody", Limit: 3})
	wantCode(t, err, tidings.EValidation)

	// A user keeps at most MaxProperties; more is refused and changes nothing.
	for i := 0; i < tidings.MaxProperties; i += tidings.MaxPropertiesPerCall {
		var props tidings.Tags
		for j := i; j < min(i+tidings.MaxPropertiesPerCall, tidings.MaxProperties); j++ {
			props = append(props, num(fmt.Sprint("k", j), "1"))
		}
		_, err := f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: "full", Properties: props})
		must(t, err)
	}
	_, err = f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: "full", Properties: tidings.Tags{num("one-more", "1")}})
	wantCode(t, err, tidings.EValidation)
	if u, _ := f.s.FindPerson(ctx, f.account.ID, "my-saas", "full"); len(u.Properties) != tidings.MaxProperties {
		t.Fatalf("a refused identify changed the user: %d properties", len(u.Properties))
	}
}

// testJourney: a user's events across channels, newest first by arrival, in pages,
// with words and a channel narrowing them; other users' and accounts' events never.
func testJourney(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "signups")
	must(t, err)
	var ada []string
	for i := range 9 {
		ch := []string{"payments", "signups", "payments"}[i%3]
		user := []string{"ada", "bob", "ada"}[i%3]
		ev := f.publish(t, tidings.NewEvent{Channel: ch, Event: fmt.Sprintf("Step %d", i), UserID: user})
		if user == "ada" {
			ada = append([]string{ev.ID}, ada...)
		}
	}
	f.publish(t, tidings.NewEvent{Event: "Ada elsewhere", UserID: "Ada"}) // user IDs are exact
	if _, err := f.s.PublishEvent(ctx, other.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Theirs",
		UserID: "ada", Parser: tidings.ParserText}); err != nil {
		t.Fatal(err)
	}
	walk := func(q tidings.EventQuery) []string {
		t.Helper()
		q.Project, q.Limit = "my-saas", 2
		var ids []string
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("pages do not end")
			}
			p, err := f.s.ListEvents(ctx, f.account.ID, q)
			must(t, err)
			for _, ev := range p.Events {
				if ev.UserID != "ada" {
					t.Fatalf("another user's event in ada's journey: %+v", ev)
				}
				ids = append(ids, ev.ID)
			}
			if p.Next == "" {
				return ids
			}
			q.Before = p.Next
		}
	}
	// Users that only events name are listed too, with their events counted.
	u, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "ada")
	must(t, err)
	if u.Events != 6 || u.FirstSeen.IsZero() || len(u.Properties) != 0 {
		t.Fatalf("ada, named by events only: %+v", u)
	}
	if u, _ := f.s.FindPerson(ctx, other.ID, "my-saas", "ada"); u == nil || u.Events != 1 {
		t.Fatalf("globex's ada: %+v", u)
	}
	if _, err := f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: "ada",
		Properties: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}}); err != nil {
		t.Fatal(err)
	}
	must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", ada[0]))
	if u, _ := f.s.FindPerson(ctx, f.account.ID, "my-saas", "ada"); u.Events != 5 || len(u.Properties) != 1 {
		t.Fatalf("ada after identify and one delete: %+v", u)
	}
	ada = ada[1:]
	if got := walk(tidings.EventQuery{Users: []string{"ada"}}); !slices.Equal(got, ada) {
		t.Fatalf("ada's journey: %v, want %v", got, ada)
	}
	step6, _ := tidings.ParseSearch("step 6", time.Now())
	if got := walk(tidings.EventQuery{Users: []string{"ada"}, Terms: step6.Terms}); !slices.Equal(got, ada[:1]) {
		t.Fatalf("ada's journey searched for step 6: %v", got)
	}
	if got := walk(tidings.EventQuery{Users: []string{"nobody"}}); len(got) != 0 {
		t.Fatalf("nobody's journey: %v", got)
	}
	ada1 := tidings.EventQuery{Users: []string{"ada"}}
	if !ada1.Matches(&tidings.Event{UserID: "ada"}) || ada1.Matches(&tidings.Event{UserID: "Ada"}) || ada1.Matches(&tidings.Event{}) {
		t.Fatal("the live filter of a journey")
	}

	// A group's journey: its members' events, merged newest first by arrival, in pages;
	// the same user named twice is read once.
	all := walkAll(t, f, tidings.EventQuery{Users: []string{"bob", "ada", "bob", "Ada"}})
	var want []string
	page, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Limit: 100})
	must(t, err)
	for _, ev := range page.Events {
		want = append(want, ev.ID) // every event of the account's project has one of these users
	}
	if !slices.Equal(all, want) {
		t.Fatalf("the journey of ada, bob and Ada: %v, want %v", all, want)
	}
	if got := walkAll(t, f, tidings.EventQuery{Users: []string{"bob", "ada"}, Channel: "signups"}); len(got) != 3 {
		t.Fatalf("ada and bob in signups: %v", got)
	}
	tooMany := make([]string, tidings.MaxQueryUsers+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprint("u", i)
	}
	_, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Users: tooMany, Limit: 10})
	wantCode(t, err, tidings.EValidation)
	if got := walkAll(t, f, tidings.EventQuery{Users: tooMany[:tidings.MaxQueryUsers]}); len(got) != 0 {
		t.Fatalf("the journey of %d users with no events: %v", tidings.MaxQueryUsers, got)
	}
}

// walkAll reads every page of q in the project my-saas, two events at a time.
func walkAll(t *testing.T, f fixture, q tidings.EventQuery) []string {
	t.Helper()
	q.Project, q.Limit = "my-saas", 2
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("pages do not end")
		}
		p, err := f.s.ListEvents(context.Background(), f.account.ID, q)
		must(t, err)
		for _, ev := range p.Events {
			ids = append(ids, ev.ID)
		}
		if p.Next == "" {
			return ids
		}
		q.Before = p.Next
	}
}
