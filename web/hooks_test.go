package web_test

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// stripeSecret has the shape of a Stripe endpoint's signing secret.
const stripeSecret = "whsec_test123abc456def789"

// hooksEnv is a dashboard on a fresh store.
func hooksEnv(t *testing.T) *env {
	t.Helper()
	return newEnv(t, false)
}

var hookURL = regexp.MustCompile(`https?://[^<"\s]+/hooks/hk_[A-Za-z0-9_-]+`)

// TestHooksPage: owners add hooks (the URL, and a secret the server made, shown
// once), see each one's delivery log and delete them; Stripe needs its signing secret;
// members read the list but cannot change it; another account cannot touch them.
func TestHooksPage(t *testing.T) {
	t.Parallel()
	e := hooksEnv(t)
	owner := e.owner()
	acme := e.account("acme")
	owner.get("/settings/hooks").want(t, 200, "Add a hook", "my-saas #payments", "Stripe only")

	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "stripe").
		want(t, 400, "Secret: is required for Stripe")
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "stripe", "secret", "sk_live_x").
		want(t, 400, "whsec_")
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "json").
		want(t, 400, "Event template:")
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "json", "t_event", "{{.x").
		want(t, 400, "Event template:")
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "json", "t_event", "{{range 1000000}}x{{end}}").
		want(t, 400, "Event template:") // too costly: package hooks' CheckTemplate
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "nope").want(t, 400, "source:")
	// A secret the owner chooses is long enough to resist guessing; Stripe's has Stripe's shape.
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "github", "secret", "short").
		want(t, 400, "Secret: must be at least 16 characters (leave it out to have a long random one made)")
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "grafana", "secret", "0123456789abcde").
		want(t, 400, "Secret: must be at least 16 characters")
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "stripe", "secret", "whsec_abc").
		want(t, 400, "Secret: must be the endpoint&#39;s signing secret from Stripe&#39;s dashboard: whsec_ and at least 16 letters and digits")
	if hs, err := e.store.ListHooks(context.Background(), acme.ID); err != nil || len(hs) != 0 {
		t.Fatalf("refused forms saved hooks: %v %v", hs, err)
	}

	// Stripe: the typed secret is kept and never shown; the URL is shown once.
	r := owner.post("/settings/hooks", "name", "Stripe payments", "project", "my-saas", "channel", "payments",
		"source", "stripe", "secret", stripeSecret, "user_id_from", "none")
	if r.status != 303 || !strings.HasPrefix(r.location, "/settings/hooks#hook-hook_") {
		t.Fatalf("creating a hook: %d to %q %s", r.status, r.location, excerpt(r.body))
	}
	p := owner.get("/settings/hooks")
	p.want(t, 200, "Hook “Stripe payments” created", "Add endpoint", "no delivery yet")
	u := hookURL.FindString(p.body)
	if u == "" {
		t.Fatalf("no URL shown: %s", excerpt(p.body))
	}
	if strings.Contains(p.body, stripeSecret) {
		t.Fatal("the typed secret is shown")
	}
	hooks, err := e.store.ListHooks(context.Background(), acme.ID)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("stored %v %v", hooks, err)
	}
	h := hooks[0]
	if h.ID != tidings.HookID(tidings.HashSecret(u[strings.LastIndex(u, "/")+1:])) || h.Secret != stripeSecret ||
		h.Source != "stripe" || h.Project != "my-saas" || h.Channel != "payments" || h.UserIDFrom != "" {
		t.Fatalf("stored %+v for %s", h, u)
	}
	if again := owner.get("/settings/hooks"); strings.Contains(again.body, "/hooks/hk_") {
		t.Fatal("the URL is shown again")
	}

	// GitHub without a secret: one is made and shown once, with the URL.
	owner.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "github")
	p = owner.get("/settings/hooks")
	p.want(t, 200, "made for you", "Payload URL")
	hooks, _ = e.store.ListHooks(context.Background(), acme.ID)
	if len(hooks) != 2 || hooks[1].Secret == "" || !strings.Contains(html.UnescapeString(p.body), hooks[1].Secret) {
		t.Fatalf("github hook %+v", hooks)
	}

	// The log: the last deliveries, newest first, and the last one's status in the list.
	at := time.Now()
	e.store.RecordHookAttempt(context.Background(), acme.ID, &tidings.HookAttempt{HookID: h.ID, DeliveryID: "evt_1", Status: 200, Events: 1, At: at.Add(-time.Minute)})
	e.store.RecordHookAttempt(context.Background(), acme.ID, &tidings.HookAttempt{HookID: h.ID, Status: 401, Error: "no valid v1 signature", At: at})
	owner.get("/settings/hooks").want(t, 200, "evt_1", "✓ 200", "✗ 401", "no valid v1 signature", "last delivery ✗ 401")

	m, _ := e.member(acme, "bob@example.com")
	mp := m.get("/settings/hooks")
	mp.want(t, 200, "Stripe payments", "no valid v1 signature", "Owners create and delete hooks")
	if strings.Contains(mp.body, "Add a hook") || strings.Contains(mp.body, "/delete") || strings.Contains(mp.body, stripeSecret) {
		t.Fatal("a member is offered the form or delete")
	}
	m.post("/settings/hooks", "project", "my-saas", "channel", "payments", "source", "github").want(t, 403)
	m.post("/settings/hooks/"+h.ID+"/delete").want(t, 403)

	other := newEnvOtherAccount(t, e)
	if op := other.get("/settings/hooks"); strings.Contains(op.body, h.ID) {
		t.Fatal("another account sees the hook")
	}
	other.post("/settings/hooks/"+h.ID+"/delete").want(t, 404)

	owner.post("/settings/hooks/"+h.ID+"/delete").redirects(t, "/settings/hooks")
	owner.get("/settings/hooks").want(t, 200, "Hook deleted")
	if hooks, _ := e.store.ListHooks(context.Background(), acme.ID); len(hooks) != 1 {
		t.Fatalf("after delete: %v", hooks)
	}
}

// TestHookTemplateTry: the JSON form tries its template on a sample body and shows
// the events it would make, saving nothing; a body that is not JSON says so; the
// typed template stays in the form.
func TestHookTemplateTry(t *testing.T) {
	t.Parallel()
	e := hooksEnv(t)
	owner := e.owner()
	acme := e.account("acme")
	form := []string{"project", "my-saas", "channel", "payments", "source", "json", "try", "1",
		"t_event", "Order {{.status}}", "t_icon", "🛒", "t_tags", `{"order": "{{.order.id}}"}`, "t_user_id", "{{.customer}}",
		"t_notify", `{{if eq .status "paid"}}true{{end}}`}
	owner.post("/settings/hooks", append(form, "sample", `{"order": {"id": "A-1042"}, "status": "paid", "customer": "cus_9"}`)...).
		want(t, 200, "Events it would make", "Order paid", "order: A-1042", "cus_9", "yes", "Order {{.status}}")
	owner.post("/settings/hooks", append(form, "sample", `not json`)...).want(t, 200, "not JSON")
	owner.post("/settings/hooks", form...).want(t, 200, "Paste a sample body first")
	costly := append([]string{}, form...)
	costly[9] = "{{range 1000000}}x{{end}}"
	owner.post("/settings/hooks", append(costly, "sample", `{}`)...).want(t, 200, "Event template:")
	if hooks, _ := e.store.ListHooks(context.Background(), acme.ID); len(hooks) != 0 {
		t.Fatalf("trying saved %v", hooks)
	}
	// Saving it keeps the template.
	save := append([]string{}, form[:6]...)
	save = append(save, form[8:]...)
	owner.post("/settings/hooks", save...).want(t, 303)
	hooks, _ := e.store.ListHooks(context.Background(), acme.ID)
	if len(hooks) != 1 || hooks[0].Template == nil || hooks[0].Template.Event != "Order {{.status}}" || hooks[0].Secret == "" {
		t.Fatalf("saved %+v", hooks)
	}
}
