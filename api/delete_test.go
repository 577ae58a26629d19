package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// DELETE /v1/events/{id} and DELETE /v1/insights: a full token within its limits
// deletes; a public token, a token limited elsewhere, a missing role or another
// account's token do not, and say why.
func TestDeleteOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	_, err := e.store.CreateChannel(t.Context(), e.acme.ID, "my-saas", "deploys")
	e.must(err)
	publish := func(channel string) string {
		t.Helper()
		r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"channel": channel}))
		var ev struct{ ID string }
		json.Unmarshal([]byte(r.body), &ev)
		return ev.ID
	}
	paid, deploy := publish("payments"), publish("deploys")
	globex := e.account("globex")
	for name, c := range map[string]struct {
		token, code string
		status      int
	}{
		"public":                {e.token(e.acme, tidings.AccessPublic, "", ""), "forbidden", 403},
		"other channel":         {e.token(e.acme, tidings.AccessFull, "my-saas", "payments"), "forbidden", 403},
		"insight role only":     {e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleInsight), "forbidden", 403},
		"another account":       {e.token(globex, tidings.AccessFull, "", ""), "not_found", 404},
		"no token":              {"", "missing_token", 401},
		"not an id, full token": {e.full, "not_found", 404},
	} {
		id := deploy
		if name == "not an id, full token" {
			id = "nope"
		}
		r := e.do("DELETE", "/v1/events/"+id, c.token, "")
		if r.status != c.status || r.problem.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.status, r.body, c.status, c.code)
		}
	}
	if r := e.do("DELETE", "/v1/events/"+deploy, e.token(e.acme, tidings.AccessFull, "my-saas", "deploys"), ""); r.status != 204 {
		t.Fatalf("a token limited to the event's channel: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/events/"+deploy, e.full, ""); r.status != 404 {
		t.Fatalf("deleting twice: %d %s", r.status, r.body)
	}
	r := e.do("GET", "/v1/events?project=my-saas", e.full, "")
	var page struct{ Events []struct{ ID string } }
	json.Unmarshal([]byte(r.body), &page)
	if len(page.Events) != 1 || page.Events[0].ID != paid {
		t.Fatalf("after the delete: %s", r.body)
	}

	e.do("POST", "/v1/insight", e.full, `{"project":"my-saas","title":"Revenue","value":5,"change":"update"}`)
	q := "/v1/insights?project=my-saas&title=" + url.QueryEscape("Revenue")
	if r := e.do("DELETE", q, e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleLog), ""); r.status != 403 {
		t.Fatalf("without the insight role: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", q, e.token(globex, tidings.AccessFull, "", ""), ""); r.status != 404 {
		t.Fatalf("another account: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", q, e.full, ""); r.status != 204 {
		t.Fatalf("delete insight: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", q, e.full, ""); r.status != 404 || r.problem.Code != "not_found" {
		t.Fatalf("delete it again: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/insights?project=my-saas", e.full, ""); r.status != 400 || !r.has("title", "required") {
		t.Fatalf("without a title: %d %s", r.status, r.body)
	}
}

// GET /v1/events/export streams the feed as filtered, for full tokens only.
func TestExportAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for i := 0; i < 150; i++ {
		plan := []string{"basic", "premium"}[i%2]
		e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "Paid", "tags": map[string]any{"plan": plan}}))
	}
	r := e.do("GET", "/v1/events/export?project=my-saas&tag=plan:premium", e.full, "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" ||
		!strings.Contains(r.header.Get("Content-Disposition"), `attachment; filename="my-saas-events-`) {
		t.Fatalf("export: %d %v", r.status, r.header)
	}
	if n := strings.Count(r.body, "\n"); n != 75 {
		t.Fatalf("export of plan:premium: %d lines, want 75", n)
	}
	r = e.do("GET", "/v1/events/export?project=my-saas&format=csv&q="+url.QueryEscape("paid since:1h"), e.full, "")
	if r.status != 200 || !strings.HasPrefix(r.body, "id,timestamp,") || strings.Count(r.body, "\n") != 151 {
		t.Fatalf("csv export: %d %.200s", r.status, r.body)
	}
	for q, want := range map[string]int{
		"project=my-saas&format=xml": 400,
		"project=nope":               404,
		"project=my-saas&q=a*":       400,
	} {
		if r := e.do("GET", "/v1/events/export?"+q, e.full, ""); r.status != want {
			t.Errorf("%s: %d, want %d: %s", q, r.status, want, r.body)
		}
	}
	if r := e.do("GET", "/v1/events/export?project=my-saas", e.token(e.acme, tidings.AccessPublic, "", ""), ""); r.status != 403 {
		t.Fatalf("public token: %d", r.status)
	}
}
