package storetest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// Inbound hooks and their delivery logs (issue 40); Run runs this part.

// Hooks runs the hooks' part of the suite against stores made by open.
func Hooks(t *testing.T, open Opener) {
	run := func(name string, part func(*testing.T, Opener)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			part(t, open)
		})
	}
	run("CreateFind", testHookCreateFind)
	run("Tenancy", testHookTenancy)
	run("Cascades", testHookCascades)
	run("Log", testHookLog)
	run("Limit", testHookLimit)
	run("LimitRace", testHookLimitRace)
}

// newHook makes a hook of f's account with a fresh path; its secret is returned too.
func (f fixture) newHook(t *testing.T, project, channel, source string) (*tidings.Hook, string) {
	t.Helper()
	secret, hash := tidings.NewHookPath()
	h := &tidings.Hook{PathHash: hash, AccountID: f.account.ID, Project: project, Channel: channel, Source: source}
	if source == tidings.HookStripe {
		h.Secret, h.UserIDFrom = "whsec_test", "customer"
	}
	if source == tidings.HookJSON {
		h.Template = &tidings.HookTemplate{Event: "{{.type}}"}
	}
	must(t, f.s.CreateHook(context.Background(), h))
	return h, secret
}

// sameHook fails unless got is want as stored (times to the millisecond).
func sameHook(t *testing.T, what string, got, want *tidings.Hook) {
	t.Helper()
	g, w := *got, *want
	if !g.CreatedAt.Equal(w.CreatedAt) {
		t.Fatalf("%s: created %v, want %v", what, g.CreatedAt, w.CreatedAt)
	}
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	if len(g.PathHash) == 0 && len(w.PathHash) == 0 {
		g.PathHash, w.PathHash = nil, nil
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %+v (template %+v), want %+v (template %+v)", what, g, g.Template, w, w.Template)
	}
}

func testHookCreateFind(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	_, err := f.s.CreateChannel(ctx, acct, "my-saas", "alerts")
	must(t, err)

	// Nothing yet: an empty list, not nil.
	if hs, err := f.s.ListHooks(ctx, acct); err != nil || hs == nil || len(hs) != 0 {
		t.Fatalf("ListHooks of an account without hooks = %v, %v", hs, err)
	}

	secret, hash := tidings.NewHookPath()
	stripe := &tidings.Hook{PathHash: hash, AccountID: acct, Project: "my-saas", Channel: "payments", Source: tidings.HookStripe,
		Name: "Stripe live", Secret: "whsec_abc123", UserIDFrom: "customer"}
	must(t, f.s.CreateHook(ctx, stripe))
	if stripe.ID != tidings.HookID(hash) || stripe.CreatedAt.IsZero() {
		t.Fatalf("created hook: id %q (want %q), created %v", stripe.ID, tidings.HookID(hash), stripe.CreatedAt)
	}
	jsonHook := &tidings.Hook{PathHash: tidings.HashSecret(tidings.HookPathPrefix + "json"), AccountID: acct, Project: "my-saas",
		Channel: "alerts", Source: tidings.HookJSON, Name: "Builds", Secret: "s3cret",
		Template: &tidings.HookTemplate{Event: `{{.build.status}}`, Description: "{{.build.url}}", Icon: "🔨",
			Tags: `{"branch":"{{.build.branch}}"}`, UserID: "{{.user}}", Notify: `{{eq .build.status "failed"}}`}}
	must(t, f.s.CreateHook(ctx, jsonHook))
	github := &tidings.Hook{PathHash: tidings.HashSecret(tidings.HookPathPrefix + "gh"), AccountID: acct, Project: "my-saas",
		Channel: "payments", Source: tidings.HookGitHub, Secret: "gh-secret"}
	must(t, f.s.CreateHook(ctx, github))
	// A json hook with every field empty but the event keeps them empty.
	bare := &tidings.Hook{PathHash: tidings.HashSecret(tidings.HookPathPrefix + "bare"), AccountID: acct, Project: "my-saas",
		Channel: "alerts", Source: tidings.HookJSON, Template: &tidings.HookTemplate{Event: "ping"}}
	must(t, f.s.CreateHook(ctx, bare))

	for _, want := range []*tidings.Hook{stripe, jsonHook, github, bare} {
		got, err := f.s.FindHook(ctx, acct, want.ID)
		must(t, err)
		sameHook(t, "FindHook "+want.Source, got, want)
		got, err = f.s.FindHookByPath(ctx, want.PathHash)
		must(t, err)
		sameHook(t, "FindHookByPath "+want.Source, got, want)
	}
	if got, err := f.s.FindHookByPath(ctx, tidings.HashSecret(secret)); err != nil || got.ID != stripe.ID {
		t.Fatalf("FindHookByPath(HashSecret(path)) = %v, %v", got, err)
	}
	hs, err := f.s.ListHooks(ctx, acct)
	must(t, err)
	if len(hs) != 4 {
		t.Fatalf("ListHooks = %d hooks", len(hs))
	}
	for i, want := range []*tidings.Hook{stripe, jsonHook, github, bare} { // oldest first
		sameHook(t, fmt.Sprintf("ListHooks[%d]", i), hs[i], want)
	}

	// Unknown ids and paths, an empty path.
	_, err = f.s.FindHook(ctx, acct, "hook_000000000000")
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.FindHookByPath(ctx, tidings.HashSecret(tidings.HookPathPrefix+"nope"))
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.FindHookByPath(ctx, nil)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.DeleteHook(ctx, acct, "hook_000000000000"), tidings.ENotFound)

	// A missing project or channel.
	for _, c := range []struct{ project, channel, code string }{
		{"nope", "payments", tidings.EProjectNotFound},
		{"my-saas", "nope", tidings.EChannelNotFound},
	} {
		_, h := tidings.NewHookPath()
		err := f.s.CreateHook(ctx, &tidings.Hook{PathHash: h, AccountID: acct, Project: c.project, Channel: c.channel, Source: tidings.HookGitHub})
		wantCode(t, err, c.code)
	}

	// Delete: gone by id and by path, its log with it; the others stay.
	must(t, f.s.RecordHookAttempt(ctx, acct, &tidings.HookAttempt{HookID: github.ID, Status: 200, Events: 1, At: time.Now()}))
	must(t, f.s.DeleteHook(ctx, acct, github.ID))
	_, err = f.s.FindHook(ctx, acct, github.ID)
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.FindHookByPath(ctx, github.PathHash)
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.ListHookAttempts(ctx, acct, github.ID)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.DeleteHook(ctx, acct, github.ID), tidings.ENotFound)
	// Made again with the same path (the same id): its log starts empty.
	github.CreatedAt = time.Time{}
	must(t, f.s.CreateHook(ctx, github))
	if log, err := f.s.ListHookAttempts(ctx, acct, github.ID); err != nil || len(log) != 0 {
		t.Fatalf("the log of a hook made again = %v, %v", log, err)
	}
	if hs, err := f.s.ListHooks(ctx, acct); err != nil || len(hs) != 4 {
		t.Fatalf("ListHooks after a delete and a create = %d, %v", len(hs), err)
	}
}

func testHookTenancy(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	mine, _ := f.newHook(t, "my-saas", "payments", tidings.HookStripe)
	theirs, _ := g.newHook(t, "my-saas", "payments", tidings.HookGitHub)
	must(t, f.s.RecordHookAttempt(ctx, f.account.ID, &tidings.HookAttempt{HookID: mine.ID, DeliveryID: "evt_1", Status: 200, Events: 1, At: time.Now()}))

	// Each account lists its own only, though both have a project and channel of the
	// same names.
	for _, c := range []struct {
		f    fixture
		want string
	}{{f, mine.ID}, {g, theirs.ID}} {
		hs, err := f.s.ListHooks(ctx, c.f.account.ID)
		must(t, err)
		if len(hs) != 1 || hs[0].ID != c.want || hs[0].AccountID != c.f.account.ID {
			t.Fatalf("ListHooks of account %d = %+v, want %s only", c.f.account.ID, hs, c.want)
		}
	}
	// The other account can neither find, nor delete, nor read or write the log.
	_, err := f.s.FindHook(ctx, g.account.ID, mine.ID)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.DeleteHook(ctx, g.account.ID, mine.ID), tidings.ENotFound)
	_, err = f.s.ListHookAttempts(ctx, g.account.ID, mine.ID)
	wantCode(t, err, tidings.ENotFound)
	must(t, f.s.RecordHookAttempt(ctx, g.account.ID, &tidings.HookAttempt{HookID: mine.ID, DeliveryID: "evt_forged", Status: 200, At: time.Now()}))
	log, err := f.s.ListHookAttempts(ctx, f.account.ID, mine.ID)
	must(t, err)
	if len(log) != 1 || log[0].DeliveryID != "evt_1" {
		t.Fatalf("the log after another account's attempt = %+v", log)
	}
	// The hook is still there, and found by its path whatever the account.
	if h, err := f.s.FindHookByPath(ctx, mine.PathHash); err != nil || h.AccountID != f.account.ID {
		t.Fatalf("FindHookByPath = %+v, %v", h, err)
	}
	if h, err := f.s.FindHookByPath(ctx, theirs.PathHash); err != nil || h.AccountID != g.account.ID {
		t.Fatalf("FindHookByPath of the other account's = %+v, %v", h, err)
	}
	// A hook cannot name another account's project (the names resolve in its own).
	_, hash := tidings.NewHookPath()
	_, err = g.s.CreateProject(ctx, g.account.ID, "globex-only")
	must(t, err)
	err = f.s.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.account.ID, Project: "globex-only", Channel: "payments", Source: tidings.HookGitHub})
	wantCode(t, err, tidings.EProjectNotFound)
}

func testHookCascades(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	_, err := f.s.CreateChannel(ctx, acct, "my-saas", "deploys")
	must(t, err)
	_, err = f.s.CreateProject(ctx, acct, "blog")
	must(t, err)
	_, err = f.s.CreateChannel(ctx, acct, "blog", "comments")
	must(t, err)
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	_, err = f.s.CreateChannel(ctx, g.account.ID, "my-saas", "deploys")
	must(t, err)
	payments, _ := f.newHook(t, "my-saas", "payments", tidings.HookStripe)
	deploys, _ := f.newHook(t, "my-saas", "deploys", tidings.HookGitHub)
	comments, _ := f.newHook(t, "blog", "comments", tidings.HookJSON)
	theirs, _ := g.newHook(t, "my-saas", "deploys", tidings.HookGitHub)
	for _, h := range []*tidings.Hook{payments, deploys, comments} {
		must(t, f.s.RecordHookAttempt(ctx, acct, &tidings.HookAttempt{HookID: h.ID, Status: 200, Events: 1, At: time.Now()}))
	}
	ids := func(a int64) []string {
		t.Helper()
		hs, err := f.s.ListHooks(ctx, a)
		must(t, err)
		out := []string{}
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	gone := func(h *tidings.Hook) {
		t.Helper()
		if _, err := f.s.FindHookByPath(ctx, h.PathHash); tidings.ErrorCode(err) != tidings.ENotFound {
			t.Fatalf("hook of %s/#%s still found by its path: %v", h.Project, h.Channel, err)
		}
		_, err := f.s.ListHookAttempts(ctx, h.AccountID, h.ID)
		wantCode(t, err, tidings.ENotFound)
	}

	// The channel: its hook goes; the project's other channel's stays, and the other
	// account's channel of the same name keeps its own.
	must(t, f.s.DeleteChannel(ctx, acct, "my-saas", "deploys"))
	gone(deploys)
	if got := ids(acct); !reflect.DeepEqual(got, []string{payments.ID, comments.ID}) {
		t.Fatalf("hooks after the channel's deletion = %v", got)
	}
	// Made again under the name, the channel has no hook.
	_, err = f.s.CreateChannel(ctx, acct, "my-saas", "deploys")
	must(t, err)
	gone(deploys)

	// The project: its hooks go, the other project's stay.
	must(t, f.s.DeleteProject(ctx, acct, "blog"))
	gone(comments)
	if got := ids(acct); !reflect.DeepEqual(got, []string{payments.ID}) {
		t.Fatalf("hooks after the project's deletion = %v", got)
	}
	if log, err := f.s.ListHookAttempts(ctx, acct, payments.ID); err != nil || len(log) != 1 {
		t.Fatalf("the remaining hook's log = %v, %v", log, err)
	}
	if got := ids(g.account.ID); !reflect.DeepEqual(got, []string{theirs.ID}) {
		t.Fatalf("the other account's hooks = %v", got)
	}
}

func testHookLog(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	acct := f.account.ID
	h, _ := f.newHook(t, "my-saas", "payments", tidings.HookStripe)
	other, _ := f.newHook(t, "my-saas", "payments", tidings.HookGitHub)
	if log, err := f.s.ListHookAttempts(ctx, acct, h.ID); err != nil || log == nil || len(log) != 0 {
		t.Fatalf("the log of a new hook = %v, %v", log, err)
	}
	base := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	statuses := []int{200, 401, 400, 413, 429}
	const n = tidings.MaxHookAttempts + 7
	for i := range n {
		a := &tidings.HookAttempt{HookID: h.ID, DeliveryID: fmt.Sprintf("evt_%d", i), Status: statuses[i%len(statuses)],
			Events: i % 3, At: base.Add(time.Duration(i) * time.Second)}
		if a.Status != 200 {
			a.Events, a.Error = 0, fmt.Sprintf("reason %d", i)
		}
		must(t, f.s.RecordHookAttempt(ctx, acct, a))
		// The other hook's log fills beside it, and does not crowd it out.
		must(t, f.s.RecordHookAttempt(ctx, acct, &tidings.HookAttempt{HookID: other.ID, Status: 200, At: a.At}))
	}
	// An attempt at the same time as the last: the later recorded is the newer.
	must(t, f.s.RecordHookAttempt(ctx, acct, &tidings.HookAttempt{HookID: h.ID, DeliveryID: "evt_same", Status: 200, Events: 1,
		At: base.Add(time.Duration(n-1) * time.Second)}))
	// An attempt of no hook is not kept, and is no error.
	must(t, f.s.RecordHookAttempt(ctx, acct, &tidings.HookAttempt{HookID: "hook_000000000000", Status: 200, At: base}))

	log, err := f.s.ListHookAttempts(ctx, acct, h.ID)
	must(t, err)
	if len(log) != tidings.MaxHookAttempts {
		t.Fatalf("the log holds %d attempts, want the latest %d", len(log), tidings.MaxHookAttempts)
	}
	want := &tidings.HookAttempt{HookID: h.ID, DeliveryID: "evt_same", Status: 200, Events: 1, At: base.Add(time.Duration(n-1) * time.Second)}
	if !reflect.DeepEqual(log[0], want) {
		t.Fatalf("newest attempt = %+v, want %+v", log[0], want)
	}
	for j, a := range log[1:] {
		i := n - 1 - j
		w := &tidings.HookAttempt{HookID: h.ID, DeliveryID: fmt.Sprintf("evt_%d", i), Status: statuses[i%len(statuses)],
			Events: i % 3, At: base.Add(time.Duration(i) * time.Second)}
		if w.Status != 200 {
			w.Events, w.Error = 0, fmt.Sprintf("reason %d", i)
		}
		if !a.At.Equal(w.At) {
			t.Fatalf("attempt %d at %v, want %v", j+1, a.At, w.At)
		}
		a.At = w.At
		if !reflect.DeepEqual(a, w) {
			t.Fatalf("attempt %d = %+v, want %+v", j+1, a, w)
		}
	}
	if log, err := f.s.ListHookAttempts(ctx, acct, other.ID); err != nil || len(log) != tidings.MaxHookAttempts {
		t.Fatalf("the other hook's log = %d, %v", len(log), err)
	}
}

func testHookLimit(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	g := fixture{s: f.s, account: newAccount(t, f.s, "globex")}
	var first *tidings.Hook
	for i := range tidings.MaxHooksPerAccount {
		h, _ := f.newHook(t, "my-saas", "payments", []string{tidings.HookGitHub, tidings.HookAlertmanager}[i%2])
		if first == nil {
			first = h
		}
	}
	_, hash := tidings.NewHookPath()
	one := &tidings.Hook{PathHash: hash, AccountID: f.account.ID, Project: "my-saas", Channel: "payments", Source: tidings.HookGrafana}
	wantCode(t, f.s.CreateHook(ctx, one), tidings.ELimitReached)
	if _, err := f.s.FindHookByPath(ctx, hash); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("a hook refused by the limit is found: %v", err)
	}
	// Another account has its own allowance.
	g.newHook(t, "my-saas", "payments", tidings.HookGitHub)
	// One deleted makes room for one.
	must(t, f.s.DeleteHook(ctx, f.account.ID, first.ID))
	must(t, f.s.CreateHook(ctx, one))
	_, hash = tidings.NewHookPath()
	wantCode(t, f.s.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.account.ID, Project: "my-saas", Channel: "payments",
		Source: tidings.HookGitHub}), tidings.ELimitReached)
	if hs, err := f.s.ListHooks(ctx, f.account.ID); err != nil || len(hs) != tidings.MaxHooksPerAccount {
		t.Fatalf("ListHooks at the limit = %d, %v", len(hs), err)
	}
}

// testHookLimitRace creates hooks side by side for the account's last place: one gets
// it, the others are refused, and the account holds the most it may.
func testHookLimitRace(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	for range tidings.MaxHooksPerAccount - 1 {
		f.newHook(t, "my-saas", "payments", tidings.HookGitHub)
	}
	const racers = 8
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, hash := tidings.NewHookPath()
			errs[i] = f.s.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.account.ID, Project: "my-saas",
				Channel: "payments", Source: tidings.HookGitHub})
		}()
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch tidings.ErrorCode(err) {
		case "":
			created++
		case tidings.ELimitReached:
		default:
			t.Fatalf("a racing create: %v", err)
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d racing creates for the last place succeeded, want 1", created, racers)
	}
	if hs, err := f.s.ListHooks(ctx, f.account.ID); err != nil || len(hs) != tidings.MaxHooksPerAccount {
		t.Fatalf("ListHooks after the race = %d, %v", len(hs), err)
	}
}
