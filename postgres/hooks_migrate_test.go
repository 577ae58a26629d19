package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// TestHooksMigrateStore: migrate-store's Load carries inbound hooks (their path's
// hash, secret, template) and their delivery logs, reads a template as the embedded
// store keeps it (every field named, the empty ones too), and takes a dump of an older
// store without them: no hooks.
func TestHooksMigrateStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRecipientsFixture(t)
	src := f.db
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	mk := func(account int64, channel, source, name, secret string, tpl *tidings.HookTemplate) *tidings.Hook {
		t.Helper()
		_, hash := tidings.NewHookPath()
		h := &tidings.Hook{PathHash: hash, AccountID: account, Project: "my-saas", Channel: channel, Source: source, Name: name,
			Secret: secret, Template: tpl}
		if source == tidings.HookStripe {
			h.UserIDFrom = "customer"
		}
		noErr(t, src.CreateHook(ctx, h))
		return h
	}
	stripe := mk(f.acme, "payments", tidings.HookStripe, "Stripe live", "whsec_abc", nil)
	builds := mk(f.acme, "deploys", tidings.HookJSON, "Builds", "s3cret", &tidings.HookTemplate{Event: "{{.build.status}}",
		Tags: `{"branch":"{{.build.branch}}"}`, Notify: `{{eq .build.status "failed"}}`})
	bare := mk(f.acme, "deploys", tidings.HookJSON, "", "", &tidings.HookTemplate{Event: "ping"})
	theirs := mk(f.globex, "payments", tidings.HookGitHub, "GitHub", "gh", nil)
	for i := range 3 {
		noErr(t, src.RecordHookAttempt(ctx, f.acme, &tidings.HookAttempt{HookID: stripe.ID, DeliveryID: fmt.Sprintf("evt_%d", i),
			Status: []int{200, 401, 200}[i], Events: []int{1, 0, 1}[i], Error: []string{"", "bad signature", ""}[i], At: at.Add(time.Duration(i) * time.Second)}))
	}
	noErr(t, src.RecordHookAttempt(ctx, f.globex, &tidings.HookAttempt{HookID: theirs.ID, DeliveryID: "d-1", Status: 200, Events: 2, At: at}))

	state := func(db *postgres.DB) string {
		t.Helper()
		var out []string
		for _, acc := range []int64{f.acme, f.globex} {
			hs, err := db.ListHooks(ctx, acc)
			noErr(t, err)
			for _, h := range hs {
				tpl := "-"
				if h.Template != nil {
					tpl = fmt.Sprintf("%+v", *h.Template)
				}
				out = append(out, fmt.Sprintf("%s %x %d %s/%s %s %q %q %q %s %s", h.ID, h.PathHash, h.AccountID, h.Project, h.Channel,
					h.Source, h.Name, h.Secret, h.UserIDFrom, tpl, h.CreatedAt.Format(time.RFC3339Nano)))
				byPath, err := db.FindHookByPath(ctx, h.PathHash)
				noErr(t, err)
				if byPath.ID != h.ID {
					t.Fatalf("FindHookByPath = %s, want %s", byPath.ID, h.ID)
				}
				log, err := db.ListHookAttempts(ctx, acc, h.ID)
				noErr(t, err)
				for _, a := range log {
					out = append(out, fmt.Sprintf("  %+v", *a))
				}
			}
		}
		return strings.Join(out, "\n")
	}
	want := state(src)
	if !strings.Contains(want, "bad signature") || !strings.Contains(want, `{{.build.branch}}`) {
		t.Fatalf("the source:\n%s", want)
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
		if rows["hooks"] != 4 || rows["hook_attempts"] != 4 {
			t.Fatalf("counts %v", counts)
		}
		mustCheck(t, dst, "after migrate-store")
		// The copies are the store's own: logged (the serial goes on past the copied
		// ids: the newest is the one recorded last), limited, deleted as the source's.
		noErr(t, dst.RecordHookAttempt(ctx, f.acme, &tidings.HookAttempt{HookID: stripe.ID, DeliveryID: "evt_new", Status: 200,
			Events: 1, At: at.Add(-time.Hour)}))
		log, err := dst.ListHookAttempts(ctx, f.acme, stripe.ID)
		noErr(t, err)
		if len(log) != 4 || log[0].DeliveryID != "evt_new" || log[1].DeliveryID != "evt_2" {
			t.Fatalf("the log after a new attempt: %+v", log)
		}
		noErr(t, dst.DeleteHook(ctx, f.acme, builds.ID))
		noErr(t, dst.DeleteChannel(ctx, f.acme, "my-saas", "deploys"))
		hs, err := dst.ListHooks(ctx, f.acme)
		noErr(t, err)
		if len(hs) != 1 || hs[0].ID != stripe.ID {
			t.Fatalf("hooks after deleting one and a channel: %v", hs)
		}
		_, err = dst.FindHookByPath(ctx, bare.PathHash)
		wantErrCode(t, err, tidings.ENotFound)
		mustCheck(t, dst, "after the copy's changes")
	})

	t.Run("embedded store's template", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		// The embedded store names every field of a template, the empty ones too; a
		// hook not of json has NULL.
		hooks := d.Tables["hooks"]
		ti, ii := slices.Index(hooks.Columns, "template"), slices.Index(hooks.Columns, "id")
		for _, r := range hooks.Rows {
			if r[ii] == bare.ID {
				r[ti] = `{"description":"","event":"ping","icon":"","notify":"","tags":"","user_id":""}`
			}
		}
		dst := open(t)
		_, err = dst.Load(ctx, d)
		noErr(t, err)
		h, err := dst.FindHook(ctx, f.acme, bare.ID)
		noErr(t, err)
		if h.Template == nil || *h.Template != (tidings.HookTemplate{Event: "ping"}) {
			t.Fatalf("template %+v", h.Template)
		}
		h, err = dst.FindHook(ctx, f.acme, stripe.ID)
		noErr(t, err)
		if h.Template != nil {
			t.Fatalf("a stripe hook's template %+v", h.Template)
		}
	})

	t.Run("older dump", func(t *testing.T) {
		d, err := postgres.DumpForTest(ctx, src)
		noErr(t, err)
		delete(d.Tables, "hooks")
		delete(d.Tables, "hook_attempts")
		dst := open(t)
		_, err = dst.Load(ctx, d)
		noErr(t, err)
		for _, acc := range []int64{f.acme, f.globex} {
			if hs, err := dst.ListHooks(ctx, acc); err != nil || len(hs) != 0 {
				t.Fatalf("an older dump: hooks %v, %v", hs, err)
			}
		}
		// And the store takes new ones.
		_, hash := tidings.NewHookPath()
		noErr(t, dst.CreateHook(ctx, &tidings.Hook{PathHash: hash, AccountID: f.acme, Project: "my-saas", Channel: "payments",
			Source: tidings.HookGitHub}))
	})
}
