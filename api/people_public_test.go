package api_test

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestPublicPeopleAnswerWhatTheySent: a public token's identify and group are answered
// with what the request carried, never the stored user or group: anyone may hold a
// page's public token and name any user_id. A full token still sees what is stored.
func TestPublicPeopleAnswerWhatTheySent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	stored := []string{"victim@example.com", "+44 20 7946 0958", "groups_count", "first_seen", "members"}
	e.do("POST", "/v1/identify", e.full, `{"project":"my-saas","user_id":"victim-42","properties":{"email":"victim@example.com","phone":"+44 20 7946 0958","plan":"pro"}}`)
	e.do("POST", "/v1/group", e.full, `{"project":"my-saas","group_id":"acme-inc","user_id":"victim-42","properties":{"email":"victim@example.com"}}`)
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	for _, c := range []struct{ path, body, want string }{
		{"/v1/identify", `{"user_id":"victim-42","project":"my-saas","properties":{}}`,
			`{"project":"my-saas","user_id":"victim-42","properties":{}}`},
		{"/v1/identify", `{"project":"my-saas","user_id":"victim-42","properties":{"seen":true,"plan":null}}`,
			`{"project":"my-saas","user_id":"victim-42","properties":{"seen":true,"plan":null}}`},
		{"/v1/identify", `{"project":"my-saas","user_id":"victim-42"}`,
			`{"project":"my-saas","user_id":"victim-42","properties":{}}`},
		{"/v1/group", `{"project":"my-saas","group_id":"acme-inc"}`,
			`{"project":"my-saas","group_id":"acme-inc","properties":{}}`},
		{"/v1/group", `{"project":"my-saas","group_id":"acme-inc","user_id":"u2","properties":{"seats":3}}`,
			`{"project":"my-saas","group_id":"acme-inc","user_id":"u2","properties":{"seats":3}}`},
	} {
		for _, key := range []string{"", "k-" + c.body} { // unkeyed; keyed, then its replay
			times := 1
			if key != "" {
				times = 2
			}
			for i := range times {
				var r *response
				if key == "" {
					r = e.do("POST", c.path, pub, c.body)
				} else {
					r = e.do("POST", c.path, pub, c.body, "Idempotency-Key", key)
				}
				if r.status != 200 || strings.TrimSpace(r.body) != c.want || replayed(r) != (i > 0) {
					t.Fatalf("%s %s (key %q #%d): %d %v\n%s\nwant %s", c.path, c.body, key, i, r.status, r.header, r.body, c.want)
				}
			}
		}
	}
	// The public calls were applied: the full token sees their effect.
	r := e.do("GET", "/v1/users/victim-42?project=my-saas", e.full, "")
	if !strings.Contains(r.body, `"seen":true`) || strings.Contains(r.body, `"plan"`) {
		t.Fatalf("the public identify was not applied: %s", r.body)
	}
	for _, path := range []string{"/v1/identify", "/v1/group"} {
		body := `{"project":"my-saas","user_id":"victim-42","properties":{}}`
		if path == "/v1/group" {
			body = `{"project":"my-saas","group_id":"acme-inc","properties":{}}`
		}
		r := e.do("POST", path, e.full, body)
		if !strings.Contains(r.body, "first_seen") {
			t.Fatalf("a full token's %s answer lost the stored data: %s", path, r.body)
		}
		// A public token replaying the full token's key and body is answered what it
		// sent, not the full token's kept answer.
		e.do("POST", path, e.full, body, "Idempotency-Key", "full-first"+path)
		r = e.do("POST", path, pub, body, "Idempotency-Key", "full-first"+path)
		for _, s := range stored {
			if strings.Contains(r.body, s) {
				t.Fatalf("public replay of %s shows %q: %s", path, s, r.body)
			}
		}
		if r.status != 200 || !replayed(r) {
			t.Fatalf("public replay of %s: %d %v %s", path, r.status, r.header, r.body)
		}
	}
}
