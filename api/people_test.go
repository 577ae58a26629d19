package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// POST /v1/identify and /v1/group take the LogSnag SDKs' bodies; GET /v1/users reads
// them back. Every rule has its bad input, and accounts do not see each other's users.
func TestIdentifyAndGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	r := e.do("POST", "/v1/identify", public, `{"project":"my-saas","user_id":"user-1","properties":{"name":"Ada","plan":"free","seats":3,"beta":true}}`)
	if r.status != 200 || !strings.Contains(r.body, `"properties":{"name":"Ada","plan":"free","seats":3,"beta":true}`) {
		t.Fatalf("identify: %d %s", r.status, r.body)
	}
	// A full token is answered the stored user or group (a public one what it sent:
	// TestPublicPeopleAnswerWhatTheySent).
	r = e.do("POST", "/v1/identify", e.full, `{"project":"my-saas","user_id":"user-1","properties":{"plan":"pro","seats":null}}`)
	if r.status != 200 || !strings.Contains(r.body, `"properties":{"name":"Ada","plan":"pro","beta":true}`) {
		t.Fatalf("identify again: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/v1/group", e.full, `{"project":"my-saas","group_id":"acme-inc","user_id":"user-1","properties":{"industry":"retail"}}`)
	if r.status != 200 || !strings.Contains(r.body, `"members":1`) {
		t.Fatalf("group: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/group", public, `{"project":"my-saas","group_id":"acme-inc"}`); r.status != 200 {
		t.Fatalf("group without a user: %d %s", r.status, r.body)
	}
	r = e.do("OPTIONS", "/v1/identify", "", "", "Origin", "https://shop.example", "Access-Control-Request-Method", "POST")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") == "" {
		t.Fatalf("CORS preflight: %d %v", r.status, r.header)
	}

	for name, c := range map[string]struct{ body, path, typ string }{
		"no user_id":      {`{"project":"my-saas"}`, "user_id", "required"},
		"bad project":     {`{"project":"My SaaS","user_id":"u"}`, "project", "pattern"},
		"bad key":         {`{"project":"my-saas","user_id":"u","properties":{"Bad Key":1}}`, "properties.Bad Key", "pattern"},
		"object value":    {`{"project":"my-saas","user_id":"u","properties":{"a":{}}}`, "properties.a", "type"},
		"not an object":   {`{"project":"my-saas","user_id":"u","properties":[1]}`, "properties", "type"},
		"control char":    {`{"project":"my-saas","user_id":"u\u0007"}`, "user_id", ""},
		"unknown field":   {`{"project":"my-saas","user_id":"u","email":"x"}`, "email", "unknown_field"},
		"too long string": {`{"project":"my-saas","user_id":"u","properties":{"a":"` + strings.Repeat("x", 1025) + `"}}`, "properties.a", "too_long"},
	} {
		r := e.do("POST", "/v1/identify", public, c.body)
		if r.status != 400 || !r.has(c.path, c.typ) {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if r := e.do("POST", "/v1/group", public, `{"project":"my-saas","user_id":"u"}`); r.status != 400 || !r.has("group_id", "required") {
		t.Errorf("group without group_id: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/identify", e.token(e.acme, tidings.AccessPublic, "", "", tidings.RoleInsight), `{"project":"my-saas","user_id":"u"}`); r.status != 403 {
		t.Errorf("without the log role: %d", r.status)
	}
	if r := e.do("POST", "/v1/identify", public, `{"project":"nope","user_id":"u"}`); r.status != 404 {
		t.Errorf("unknown project: %d", r.status)
	}

	// Reading them back needs a full token without a channel limit.
	type users struct {
		Users []struct {
			UserID     string          `json:"user_id"`
			Properties json.RawMessage `json:"properties"`
			Groups     []string        `json:"groups"`
		}
		Next *string
	}
	e.do("POST", "/v1/identify", public, `{"project":"my-saas","user_id":"user-2","properties":{"plan":"free"}}`)
	r = e.do("GET", "/v1/users?project=my-saas&property=plan:pro", e.full, "")
	var u users
	json.Unmarshal([]byte(r.body), &u)
	if r.status != 200 || len(u.Users) != 1 || u.Users[0].UserID != "user-1" || len(u.Users[0].Properties) == 0 {
		t.Fatalf("users with plan=pro: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/v1/users?project=my-saas&limit=1", e.full, "")
	json.Unmarshal([]byte(r.body), &u)
	if len(u.Users) != 1 || u.Next == nil || u.Users[0].UserID != "user-2" {
		t.Fatalf("first page of 1: %s", r.body)
	}
	e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "Upgraded", "user_id": "user-1"}))
	e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "Someone else", "user_id": "user-2"}))
	if r := e.do("GET", "/v1/users/user-1?project=my-saas", e.full, ""); r.status != 200 || !strings.Contains(r.body, `"groups":["acme-inc"]`) ||
		!strings.Contains(r.body, `"event":"Upgraded"`) || strings.Contains(r.body, "Someone else") {
		t.Fatalf("one user with its events: %d %s", r.status, r.body)
	}
	for q, want := range map[string]int{
		"/v1/users?project=my-saas&property=nocolon": 400,
		"/v1/users?project=my-saas&limit=0":          400,
		"/v1/users?project=my-saas&before=nobody":    400,
		"/v1/users/nobody?project=my-saas":           404,
		"/v1/users?project=nope":                     404,
	} {
		if r := e.do("GET", q, e.full, ""); r.status != want {
			t.Errorf("%s: %d, want %d: %s", q, r.status, want, r.body)
		}
	}
	if r := e.do("GET", "/v1/users?project=my-saas", public, ""); r.status != 403 {
		t.Errorf("public token reads users: %d", r.status)
	}
	if r := e.do("GET", "/v1/users?project=my-saas", e.token(e.acme, tidings.AccessFull, "my-saas", "payments"), ""); r.status != 403 {
		t.Errorf("channel-limited token reads users: %d", r.status)
	}
	globex := e.account("globex")
	r = e.do("GET", "/v1/users?project=my-saas", e.token(globex, tidings.AccessFull, "", ""), "")
	json.Unmarshal([]byte(r.body), &u)
	if r.status != 200 || len(u.Users) != 0 {
		t.Fatalf("another account sees users: %s", r.body)
	}
	if r := e.do("GET", "/v1/users/user-1?project=my-saas", e.token(globex, tidings.AccessFull, "", ""), ""); r.status != 404 {
		t.Fatalf("another account finds user-1: %d", r.status)
	}
}

// POST /v1/insight takes {"value":{"$inc":N}} as an increment (a community SDK sends
// it there); a plain value without change is still refused.
func TestInsightIncByPost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for range 2 {
		r := e.do("POST", "/v1/insight", e.full, `{"project":"my-saas","title":"Signups","icon":"👥","value":{"$inc":2}}`)
		if r.status != 200 || !strings.Contains(r.body, `"change":"increment"`) {
			t.Fatalf("$inc by POST: %d %s", r.status, r.body)
		}
	}
	r := e.do("GET", "/v1/insights?project=my-saas", e.full, "")
	if !strings.Contains(r.body, `"value":"4"`) {
		t.Fatalf("after two increments of 2: %s", r.body)
	}
	if r := e.do("POST", "/v1/insight", e.full, `{"project":"my-saas","title":"Signups","value":3}`); r.status != 400 || !r.has("change", "required") {
		t.Fatalf("a plain value without change: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/insight", e.full, `{"project":"my-saas","title":"Signups","value":{"$inc":"x"}}`); r.status != 400 {
		t.Fatalf("$inc of a word: %d %s", r.status, r.body)
	}
}
