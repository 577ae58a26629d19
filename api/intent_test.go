package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

var (
	openPR  = map[string]any{"label": "Open PR", "url": "https://github.com/acme/app/pull/1"}
	approve = map[string]any{"label": "Approve", "id": "approve"}
)

// TestLogIntentFields covers the intent fields of /v1/log (priority, url, actions, key)
// with good values and every bad input of the issue: each bad one is a 400 naming the
// field, and stores nothing.
func TestLogIntentFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	act := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"label": fmt.Sprint("B", i), "id": fmt.Sprint("b", i)}
		}
		return out
	}
	for _, c := range []struct {
		name  string
		extra map[string]any
		path  string // "" when the request must succeed
		typ   string
	}{
		{"priority word", map[string]any{"priority": "urgent"}, "", ""},
		{"priority min", map[string]any{"priority": "min"}, "", ""},
		{"priority number 1", map[string]any{"priority": 1}, "", ""},
		{"priority number 5", map[string]any{"priority": 5}, "", ""},
		{"priority numeric string", map[string]any{"priority": "4"}, "", ""},
		{"priority null", map[string]any{"priority": raw("null")}, "", ""},
		{"priority unknown word", map[string]any{"priority": "critical"}, "priority", "enum"},
		{"priority capitals", map[string]any{"priority": "URGENT"}, "priority", "enum"},
		{"priority empty", map[string]any{"priority": ""}, "priority", "enum"},
		{"priority 6", map[string]any{"priority": 6}, "priority", "enum"},
		{"priority 0", map[string]any{"priority": 0}, "priority", "enum"},
		{"priority -1", map[string]any{"priority": -1}, "priority", "enum"},
		{"priority fraction", map[string]any{"priority": 2.5}, "priority", "enum"},
		{"priority exponent", map[string]any{"priority": raw("1e0")}, "priority", "enum"},
		{"priority boolean", map[string]any{"priority": true}, "priority", "type"},
		{"priority object", map[string]any{"priority": map[string]any{}}, "priority", "type"},
		{"priority array", map[string]any{"priority": []string{"high"}}, "priority", "type"},

		{"url https", map[string]any{"url": "https://example.com/deploys/1432?tab=log#end"}, "", ""},
		{"url http", map[string]any{"url": "http://10.0.0.1:3000/x"}, "", ""},
		{"url 2048", map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2048-20)}, "", ""},
		{"url 2049", map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2049-20)}, "url", "too_long"},
		{"url javascript", map[string]any{"url": "javascript:alert(1)"}, "url", "format"},
		{"url relative", map[string]any{"url": "/deploys/1432"}, "url", "format"},
		{"url scheme-relative", map[string]any{"url": "//example.com/x"}, "url", "format"},
		{"url ftp", map[string]any{"url": "ftp://example.com/x"}, "url", "format"},
		{"url data", map[string]any{"url": "data:text/html,<script>alert(1)</script>"}, "url", "format"},
		{"url newline", map[string]any{"url": "https://example.com/\nx"}, "url", "format"},
		{"url empty", map[string]any{"url": ""}, "url", "format"},
		{"url number", map[string]any{"url": 7}, "url", "type"},

		{"actions url and id", map[string]any{"actions": []any{openPR, approve}}, "", ""},
		{"actions 3", map[string]any{"actions": act(3)}, "", ""},
		{"actions empty", map[string]any{"actions": []any{}}, "", ""},
		{"actions 4", map[string]any{"actions": act(4)}, "actions", "too_many"},
		{"actions 40", map[string]any{"actions": act(40)}, "actions", "too_many"},
		{"actions object", map[string]any{"actions": approve}, "actions", "type"},
		{"actions string", map[string]any{"actions": "approve"}, "actions", "type"},
		{"action not an object", map[string]any{"actions": []any{"approve"}}, "actions.0", "type"},
		{"action null", map[string]any{"actions": []any{nil}}, "actions.0", "type"},
		{"action label empty", map[string]any{"actions": []any{map[string]any{"label": "", "id": "a"}}}, "actions.0.label", "required"},
		{"action label blank", map[string]any{"actions": []any{map[string]any{"label": "  ", "id": "a"}}}, "actions.0.label", "required"},
		{"action label missing", map[string]any{"actions": []any{map[string]any{"id": "a"}}}, "actions.0.label", "required"},
		{"action label 40", map[string]any{"actions": []any{map[string]any{"label": strings.Repeat("é", 40), "id": "a"}}}, "", ""},
		{"action label 41", map[string]any{"actions": []any{map[string]any{"label": strings.Repeat("é", 41), "id": "a"}}}, "actions.0.label", "too_long"},
		{"action label number", map[string]any{"actions": []any{map[string]any{"label": 1, "id": "a"}}}, "actions.0.label", "type"},
		{"action label newline", map[string]any{"actions": []any{map[string]any{"label": "a\nb", "id": "a"}}}, "actions.0.label", "control_character"},
		{"action duplicate id", map[string]any{"actions": []any{approve, map[string]any{"label": "Yes", "id": "approve"}}}, "actions.1.id", "duplicate"},
		{"action id capitals", map[string]any{"actions": []any{map[string]any{"label": "A", "id": "Approve"}}}, "actions.0.id", "pattern"},
		{"action id boolean", map[string]any{"actions": []any{map[string]any{"label": "A", "id": true}}}, "actions.0.id", "type"},
		{"action url javascript", map[string]any{"actions": []any{map[string]any{"label": "A", "url": "javascript:alert(1)"}}}, "actions.0.url", "format"},
		{"action url relative", map[string]any{"actions": []any{map[string]any{"label": "A", "url": "/x"}}}, "actions.0.url", "format"},
		{"action url array", map[string]any{"actions": []any{map[string]any{"label": "A", "url": []string{"https://x.io"}}}}, "actions.0.url", "type"},
		{"action url and id", map[string]any{"actions": []any{map[string]any{"label": "A", "url": "https://x.io", "id": "a"}}}, "actions.0", "one_of"},
		{"action neither", map[string]any{"actions": []any{map[string]any{"label": "A"}}}, "actions.0", "one_of"},
		{"action unknown member", map[string]any{"actions": []any{map[string]any{"label": "A", "id": "a", "style": "danger"}}}, "actions.0.style", "unknown_field"},
		{"action second bad", map[string]any{"actions": []any{approve, map[string]any{"label": "B", "url": "nope"}}}, "actions.1.url", "format"},

		{"key", map[string]any{"key": "deploy-1432"}, "", ""},
		{"key spaces and unicode", map[string]any{"key": "order 981 · Zürich"}, "", ""},
		{"key 128", map[string]any{"key": strings.Repeat("k", 128)}, "", ""},
		{"key 129", map[string]any{"key": strings.Repeat("k", 129)}, "key", "too_long"},
		{"key newline", map[string]any{"key": "a\nb"}, "key", "control_character"},
		{"key tab", map[string]any{"key": "a\tb"}, "key", "control_character"},
		{"key NUL", map[string]any{"key": "a\x00b"}, "key", "control_character"},
		{"key empty", map[string]any{"key": ""}, "key", "required"},
		{"key number", map[string]any{"key": 1432}, "key", "type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t)
			before := e.countEvents(e.acme)
			r := e.do("POST", "/v1/log", e.full, merge(goodLog, c.extra))
			wantField(t, r, c.path, c.typ)
			stored := e.countEvents(e.acme) - before
			if c.path != "" && stored != 0 {
				t.Fatalf("a refused event was stored (%d)", stored)
			}
			if c.path != "" && !strings.Contains(r.problem.Detail, c.path) {
				t.Fatalf("the detail does not name %s: %s", c.path, r.problem.Detail)
			}
		})
	}
}

// TestIntentProblemsInOrder: an event's problems are all reported, in the fields' order.
func TestIntentProblemsInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"key": strings.Repeat("k", 200), "channel": "Bad",
		"priority": true, "url": "javascript:x", "actions": []any{map[string]any{"label": ""}}}))
	e.want(r, 400, "validation_failed")
	var got []string
	for _, f := range r.problem.Validation.Body {
		got = append(got, f.Path)
	}
	want := "channel priority url actions.0.label actions.0 key"
	if strings.Join(got, " ") != want {
		t.Fatalf("problems %v, want %s", got, want)
	}
}

// intentEvent is an event of the API with its intent fields.
type intentEvent struct {
	ID           string
	Priority     string
	URL          *string
	Actions      []tidings.Action
	Key          *string
	Acknowledged *struct {
		By string
		At time.Time
	}
}

// TestLogIntentEcho: the answer is the stored event with its intent fields (priority
// always, as its word), as every read answers them.
func TestLogIntentEcho(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"priority": 5, "url": "https://example.com/x",
		"actions": []any{openPR, approve}, "key": "deploy-1432"}))
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	got := decode[intentEvent](t, r)
	if got.Priority != "urgent" || got.URL == nil || *got.URL != "https://example.com/x" || got.Key == nil || *got.Key != "deploy-1432" ||
		len(got.Actions) != 2 || got.Actions[0] != (tidings.Action{Label: "Open PR", URL: "https://github.com/acme/app/pull/1"}) ||
		got.Actions[1] != (tidings.Action{Label: "Approve", ID: "approve"}) || got.Acknowledged != nil {
		t.Fatalf("answer %s", r.body)
	}
	if !strings.Contains(r.body, `"actions":[{"label":"Open PR","url":"https://github.com/acme/app/pull/1"},{"label":"Approve","id":"approve"}]`) {
		t.Fatalf("actions not in the order sent: %s", r.body)
	}
	plain := e.do("POST", "/v1/log", e.full, merge(goodLog, nil))
	if !strings.Contains(plain.body, `"priority":"default"`) {
		t.Fatalf("no default priority: %s", plain.body)
	}
	for _, absent := range []string{`"url"`, `"actions"`, `"key"`, `"acknowledged"`} {
		if strings.Contains(plain.body, absent) {
			t.Fatalf("%s in an event without it: %s", absent, plain.body)
		}
	}
	list := e.do("GET", "/v1/events?project=my-saas", e.full, "")
	if !strings.Contains(list.body, strings.TrimSuffix(r.body, "\n")) || !strings.Contains(list.body, strings.TrimSuffix(plain.body, "\n")) {
		t.Fatalf("the read API does not answer the events as published:\n%s\n%s\n%s", r.body, plain.body, list.body)
	}
}

// TestBatchIntent: each event of a batch takes the intent fields, and a bad one is
// refused on its own.
func TestBatchIntent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log/batch", e.full, batchOf(
		`{"project":"my-saas","channel":"payments","event":"a","priority":"high","key":"k1","actions":[{"label":"Approve","id":"approve"}]}`,
		`{"project":"my-saas","channel":"payments","event":"b","priority":6}`,
		`{"project":"my-saas","channel":"payments","event":"c","actions":[{"label":"x","id":"x"},{"label":"y","id":"x"}]}`,
		`{"project":"my-saas","channel":"payments","event":"d","url":"javascript:alert(1)"}`,
		`{"project":"my-saas","channel":"payments","event":"e","actions":[{"label":1}]}`))
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	got := decode[struct {
		Results []struct {
			Status int
			Event  *intentEvent
			Error  *struct {
				Validation struct{ Body []tidings.FieldError }
			}
		}
	}](t, r)
	if len(got.Results) != 5 || got.Results[0].Status != 200 || got.Results[0].Event.Priority != "high" || len(got.Results[0].Event.Actions) != 1 {
		t.Fatalf("results %s", r.body)
	}
	for i, path := range map[int]string{1: "priority", 2: "actions.1.id", 3: "url", 4: "actions.0.label"} {
		res := got.Results[i]
		if res.Status != 400 || res.Error == nil || len(res.Error.Validation.Body) == 0 || res.Error.Validation.Body[0].Path != path {
			t.Fatalf("result %d: want 400 at %s: %s", i, path, r.body)
		}
	}
	if n := e.countEvents(e.acme); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
}

// TestIdempotentIntentReplay: a keyed publish with intent fields is replayed byte for
// byte, and stores one event.
func TestIdempotentIntentReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	body := merge(goodLog, map[string]any{"priority": "urgent", "url": "https://example.com/x", "actions": []any{openPR, approve}, "key": "k"})
	for _, path := range []string{"/v1/log", "/v1/log/batch"} {
		b := body
		if path == "/v1/log/batch" {
			b = batchOf(body)
		}
		first := e.do("POST", path, e.full, b, "Idempotency-Key", "intent"+path)
		again := e.do("POST", path, e.full, b, "Idempotency-Key", "intent"+path)
		if first.status != 200 || !replayed(again) || again.body != first.body {
			t.Fatalf("%s: first %s\nagain %v %s", path, first.body, again.header, again.body)
		}
	}
	if n := e.countEvents(e.acme); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// namedToken makes a full token of the account with a name.
func (e *env) namedToken(a *tidings.Account, name, project, channel string, roles ...string) string {
	e.t.Helper()
	if len(roles) == 0 {
		roles = []string{tidings.RoleLog, tidings.RoleInsight}
	}
	id, secret, hash := tidings.NewTokenSecret()
	e.must(e.store.CreateToken(e.t.Context(), &tidings.Token{ID: id, AccountID: a.ID, Name: name, Access: tidings.AccessFull,
		Project: project, Channel: channel, Roles: roles, Hash: hash}))
	return secret
}

// publish stores an event through the API and returns its id.
func (e *env) publish(extra map[string]any) string {
	e.t.Helper()
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, extra))
	if r.status != 200 {
		e.t.Fatalf("publish: %d %s", r.status, r.body)
	}
	return decode[intentEvent](e.t.(*testing.T), r).ID
}

// TestAcknowledge: POST /v1/events/{id}/ack with a full token: the first
// acknowledgement stays; another account's event, an unknown one, a public token, a
// token outside its limits or without the log role are refused.
func TestAcknowledge(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 5, 3, 10, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	now.Store(&at)
	e := newEnvClock(t, noLimits, func() time.Time { return *now.Load() })
	id := e.publish(map[string]any{"priority": "urgent", "notify": true, "key": "db"})
	oncall := e.namedToken(e.acme, "on-call bot", "", "")

	r := e.do("POST", "/v1/events/"+id+"/ack", oncall, "")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	got := decode[intentEvent](t, r)
	if got.ID != id || got.Priority != "urgent" || got.Acknowledged == nil || got.Acknowledged.By != "on-call bot" || !got.Acknowledged.At.Equal(at) {
		t.Fatalf("ack %s", r.body)
	}
	// Again, later and by another token: the first acknowledgement, unchanged.
	later := at.Add(time.Hour)
	now.Store(&later)
	again := e.do("POST", "/v1/events/"+id+"/ack", e.full, "")
	if again.status != 200 || again.body != r.body {
		t.Fatalf("again: %d %s\nfirst: %s", again.status, again.body, r.body)
	}
	// Every read shows it.
	if list := e.do("GET", "/v1/events?project=my-saas", e.full, ""); !strings.Contains(list.body, `"acknowledged":{"by":"on-call bot","at":"2026-11-22T05:03:10Z"}`) {
		t.Fatalf("the read API does not show the acknowledgement: %s", list.body)
	}
	// A token without a name acknowledges as "token ID".
	other := e.publish(nil)
	if r := e.do("POST", "/v1/events/"+other+"/ack", e.full, ""); r.status != 200 || !strings.Contains(decode[intentEvent](t, r).Acknowledged.By, "token ") {
		t.Fatalf("unnamed token: %d %s", r.status, r.body)
	}

	globex := e.account("globex")
	theirs := e.namedToken(globex, "globex bot", "", "")
	e.want(e.do("POST", "/v1/events/"+id+"/ack", theirs, ""), 404, "not_found")
	e.want(e.do("POST", "/v1/events/0190a000-0000-7000-8000-000000000000/ack", e.full, ""), 404, "not_found")
	e.want(e.do("POST", "/v1/events/not-an-id/ack", e.full, ""), 404, "not_found")
	e.want(e.do("POST", "/v1/events/"+id+"/ack", e.token(e.acme, tidings.AccessPublic, "", ""), ""), 403, "forbidden")
	e.want(e.do("POST", "/v1/events/"+id+"/ack", e.namedToken(e.acme, "insights", "", "", tidings.RoleInsight), ""), 403, "forbidden")
	_, err := e.store.CreateChannel(t.Context(), e.acme.ID, "my-saas", "deploys")
	e.must(err)
	e.want(e.do("POST", "/v1/events/"+id+"/ack", e.namedToken(e.acme, "deploys", "my-saas", "deploys"), ""), 403, "forbidden")
	e.want(e.do("POST", "/v1/events/"+id+"/ack", "", ""), 401, "missing_token")
	e.want(e.do("POST", "/v1/events/"+id+"/ack", "tds_nope", ""), 401, "invalid_token")
	e.want(e.do("GET", "/v1/events/"+id+"/ack", e.full, ""), 405, "method_not_allowed")
	// Not under /api: like the other read and write endpoints of full tokens.
	e.want(e.do("POST", "/api/v1/events/"+id+"/ack", e.full, ""), 404, "not_found")
}

type pressAnswer struct {
	Event intentEvent
	Press struct {
		ID, Action, Label, By, Via string
		At                         time.Time
	}
}

// TestPressAction: POST /v1/events/{id}/actions/{action_id} records a press of an id
// action; a URL action, an unknown one, another account's event are 404.
func TestPressAction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	id := e.publish(map[string]any{"actions": []any{openPR, approve, map[string]any{"label": "Reject", "id": "reject"}}})
	ci := e.namedToken(e.acme, "ci", "", "")
	r := e.do("POST", "/v1/events/"+id+"/actions/approve", ci, "")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	got := decode[pressAnswer](t, r)
	if got.Event.ID != id || len(got.Event.Actions) != 3 || !strings.HasPrefix(got.Press.ID, "press_") || got.Press.Action != "approve" ||
		got.Press.Label != "Approve" || got.Press.By != "ci" || got.Press.Via != "API" || got.Press.At.IsZero() {
		t.Fatalf("press %s", r.body)
	}
	// Each press is recorded.
	second := decode[pressAnswer](t, e.do("POST", "/v1/events/"+id+"/actions/approve", ci, ""))
	if second.Press.ID == got.Press.ID {
		t.Fatalf("two presses, one id: %s", second.Press.ID)
	}
	presses, err := e.store.ListPresses(t.Context(), e.acme.ID, id)
	e.must(err)
	if len(presses) != 2 || presses[0].ID != got.Press.ID || presses[1].Via != "API" {
		t.Fatalf("presses %+v", presses)
	}

	r = e.do("POST", "/v1/events/"+id+"/actions/open-pr", ci, "")
	e.want(r, 404, "not_found")
	if !strings.Contains(r.problem.Detail, "approve, reject") {
		t.Fatalf("the 404 does not list the actions: %s", r.problem.Detail)
	}
	e.want(e.do("POST", "/v1/events/"+id+"/actions/nope", ci, ""), 404, "not_found")
	e.want(e.do("POST", "/v1/events/"+e.publish(nil)+"/actions/approve", ci, ""), 404, "not_found")
	e.want(e.do("POST", "/v1/events/"+id+"/actions/approve", e.namedToken(e.account("globex"), "g", "", ""), ""), 404, "not_found")
	e.want(e.do("POST", "/v1/events/"+id+"/actions/approve", e.token(e.acme, tidings.AccessPublic, "", ""), ""), 403, "forbidden")
	_, err = e.store.CreateProject(t.Context(), e.acme.ID, "other-project")
	e.must(err)
	e.want(e.do("POST", "/v1/events/"+id+"/actions/approve", e.namedToken(e.acme, "other", "other-project", ""), ""), 403, "forbidden")
	e.want(e.do("POST", "/v1/events/"+id+"/actions/approve", "", ""), 401, "missing_token")
	if presses, _ := e.store.ListPresses(t.Context(), e.acme.ID, id); len(presses) != 2 {
		t.Fatalf("a refused press was recorded: %d presses", len(presses))
	}
}

// TestActWithSession: without an Authorization header, the dashboard session (the
// Session hook) acts as the member; a header means the token, whatever the session.
func TestActWithSession(t *testing.T) {
	t.Parallel()
	var account atomic.Int64
	session := func(r *http.Request) (int64, string, bool) {
		if r.Header.Get("X-Test-Member") == "" {
			return 0, "", false
		}
		return account.Load(), r.Header.Get("X-Test-Member"), true
	}
	e := newEnvWith(t, noLimits, nil, nil, func(c *api.Config) { c.Session = session })
	account.Store(e.acme.ID)
	id := e.publish(map[string]any{"priority": "urgent", "actions": []any{approve}})

	r := e.do("POST", "/v1/events/"+id+"/actions/approve", "", "", "X-Test-Member", "ada@x.io")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if p := decode[pressAnswer](t, r).Press; p.By != "ada@x.io" || p.Via != "dashboard" {
		t.Fatalf("press %+v", p)
	}
	r = e.do("POST", "/v1/events/"+id+"/ack", "", "", "X-Test-Member", "ada@x.io")
	if r.status != 200 || decode[intentEvent](t, r).Acknowledged.By != "ada@x.io" {
		t.Fatalf("ack %d %s", r.status, r.body)
	}
	// An Authorization header is the token's request, never the session's.
	e.want(e.do("POST", "/v1/events/"+id+"/ack", "tds_nope", "", "X-Test-Member", "ada@x.io"), 401, "invalid_token")
	// No session: the token rules.
	e.want(e.do("POST", "/v1/events/"+id+"/ack", "", ""), 401, "missing_token")
	// A member of another account does not find the event.
	globex := e.account("globex")
	account.Store(globex.ID)
	e.want(e.do("POST", "/v1/events/"+id+"/actions/approve", "", "", "X-Test-Member", "eve@globex.io"), 404, "not_found")
}

// TestSearchPriority: the read API passes priority: filters to the store.
func TestSearchPriority(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for i, p := range []string{"min", "low", "default", "high", "urgent", "urgent"} {
		e.publish(map[string]any{"event": fmt.Sprintf("e%d %s", i, p), "priority": p})
	}
	e.publish(map[string]any{"event": "untagged"})
	e.publish(map[string]any{"event": "tagged", "tags": map[string]any{"priority": "urgent"}})
	get := func(q string) []string {
		t.Helper()
		r := e.do("GET", "/v1/events?project=my-saas&q="+url.QueryEscape(q), e.full, "")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		var names []string
		for _, ev := range decode[eventsPage](t, r).Events {
			names = append(names, ev.Event)
		}
		return names
	}
	for q, want := range map[string]string{
		"priority:urgent":                  "e5 urgent,e4 urgent",
		"priority:>=high":                  "e5 urgent,e4 urgent,e3 high",
		"priority:>high":                   "e5 urgent,e4 urgent",
		"priority:<=low":                   "e1 low,e0 min",
		"priority:<low":                    "e0 min",
		"priority:default":                 "tagged,untagged,e2 default",
		"priority:5":                       "e5 urgent,e4 urgent",
		"priority:>=high e4":               "e4 urgent",
		"tag:priority:urgent":              "tagged",
		"priority:>=high channel:payments": "e5 urgent,e4 urgent,e3 high",
	} {
		if got := strings.Join(get(q), ","); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	r := e.do("GET", "/v1/events?project=my-saas&q="+url.QueryEscape("priority:huge"), e.full, "")
	e.want(r, 400, "validation_failed")
	if !r.has("q", "priority") {
		t.Fatalf("no q problem: %s", r.body)
	}
}

// TestPublicTokenMayNotPublishUrgent: a public token is readable by every visitor of
// a website, so it may not publish an urgent event (past quiet hours, repeated until
// acknowledged): 403 naming why, nothing stored, in /v1/log and in a batch; high is
// fine.
func TestPublicTokenMayNotPublishUrgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	before := e.countEvents(e.acme)
	for _, p := range []any{"urgent", 5, "5"} {
		r := e.do("POST", "/v1/log", pub, merge(goodLog, map[string]any{"priority": p}))
		e.want(r, 403, "forbidden")
		if !strings.Contains(r.body, "urgent") {
			t.Errorf("priority %v: the 403 does not say why: %s", p, r.body)
		}
	}
	if n := e.countEvents(e.acme) - before; n != 0 {
		t.Fatalf("%d events stored from refused publishes", n)
	}
	e.want(e.do("POST", "/v1/log", pub, merge(goodLog, map[string]any{"priority": "high"})), 200, "")
	e.want(e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"priority": "urgent"})), 200, "")
	r := e.do("POST", "/v1/log/batch", pub, `{"events":[`+merge(goodLog, map[string]any{"priority": "urgent"})+`,`+
		merge(goodLog, map[string]any{"priority": "low"})+`]}`)
	e.want(r, 200, "")
	if !strings.Contains(r.body, `"status":403`) || !strings.Contains(r.body, `"status":200`) {
		t.Fatalf("batch: want the urgent event refused and the low one stored: %s", r.body)
	}
}
