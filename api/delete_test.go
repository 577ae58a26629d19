package api_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/tidings-dev/tidings"
)

// DELETE /v1/events/{id} and DELETE /v1/insights: a full token within its limits
// deletes; a public token, a token limited elsewhere, a missing role or another
// account's token do not, and say why.
func TestDeleteOne(t *testing.T) {
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
