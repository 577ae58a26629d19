package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

var goodLog = map[string]any{"project": "my-saas", "channel": "payments", "event": "New Subscription"}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func manyTags(n int) map[string]any {
	m := map[string]any{}
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}

// TestLogFields covers every row of the contract's /v1/log table with a good and a bad value.
func TestLogFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	now := time.Now().Unix()
	for _, c := range []struct {
		name  string
		extra map[string]any
		path  string // "" when the request must succeed
		typ   string
	}{
		{"minimal", nil, "", ""},
		{"project missing", map[string]any{"project": nil}, "project", "required"},
		{"project null", map[string]any{"project": raw("null")}, "project", "required"},
		{"project capitals", map[string]any{"project": "My-Saas"}, "project", "pattern"},
		{"project double dash", map[string]any{"project": "my--saas"}, "project", "pattern"},
		{"project leading dash", map[string]any{"project": "-my"}, "project", "pattern"},
		{"project trailing dash", map[string]any{"project": "my-"}, "project", "pattern"},
		{"project space", map[string]any{"project": "my saas"}, "project", "pattern"},
		{"project 65 chars", map[string]any{"project": strings.Repeat("a", 65)}, "project", "pattern"},
		{"project number", map[string]any{"project": 7}, "project", "type"},
		{"channel missing", map[string]any{"channel": nil}, "channel", "required"},
		{"channel capitals", map[string]any{"channel": "Payments"}, "channel", "pattern"},
		{"event missing", map[string]any{"event": nil}, "event", "required"},
		{"event blank", map[string]any{"event": "   "}, "event", "required"},
		{"event 160 chars", map[string]any{"event": strings.Repeat("é", 160)}, "", ""},
		{"event 161 chars", map[string]any{"event": strings.Repeat("é", 161)}, "event", "too_long"},
		{"event newline", map[string]any{"event": "a\nb"}, "event", "control_character"},
		{"event bool", map[string]any{"event": true}, "event", "type"},
		{"description 10000", map[string]any{"description": strings.Repeat("x", 10000)}, "", ""},
		{"description 10001", map[string]any{"description": strings.Repeat("x", 10001)}, "description", "too_long"},
		{"description number", map[string]any{"description": 1}, "description", "type"},
		{"icon emoji", map[string]any{"icon": "💰"}, "", ""},
		{"icon zwj family", map[string]any{"icon": "👩‍👩‍👧"}, "", ""},
		{"icon flag", map[string]any{"icon": "🇩🇪"}, "", ""},
		{"icon skin tone", map[string]any{"icon": "👍🏽"}, "", ""},
		{"icon keycap", map[string]any{"icon": "1️⃣"}, "", ""},
		{"icon text-style", map[string]any{"icon": "☀"}, "", ""},
		{"icon shortcode", map[string]any{"icon": ":moneybag:"}, "", ""},
		{"icon two emoji", map[string]any{"icon": "💰💰"}, "icon", "emoji"},
		{"icon letters", map[string]any{"icon": "ab"}, "icon", "emoji"},
		{"icon digit", map[string]any{"icon": "1"}, "icon", "emoji"},
		{"icon unknown shortcode", map[string]any{"icon": ":not-an-emoji:"}, "icon", "emoji"},
		{"icon lone regional indicator", map[string]any{"icon": "🇩"}, "icon", "emoji"},
		{"notify true", map[string]any{"notify": true}, "", ""},
		{"notify string", map[string]any{"notify": "yes"}, "notify", "type"},
		{"tags 32", map[string]any{"tags": manyTags(32)}, "", ""},
		{"tags 33", map[string]any{"tags": manyTags(33)}, "tags", "too_many"},
		{"tags kinds", map[string]any{"tags": map[string]any{"plan": "premium", "seats": 3, "trial": false}}, "", ""},
		{"tags array", map[string]any{"tags": []string{"a"}}, "tags", "type"},
		{"tag key capitals", map[string]any{"tags": map[string]any{"Plan": "x"}}, "tags.Plan", "pattern"},
		{"tag key 65", map[string]any{"tags": map[string]any{strings.Repeat("k", 65): "x"}}, "tags." + strings.Repeat("k", 65), "pattern"},
		{"tag value 1024", map[string]any{"tags": map[string]any{"k": strings.Repeat("v", 1024)}}, "", ""},
		{"tag value 1025", map[string]any{"tags": map[string]any{"k": strings.Repeat("v", 1025)}}, "tags.k", "too_long"},
		{"tag value null", map[string]any{"tags": map[string]any{"k": nil}}, "tags.k", "type"},
		{"tag value object", map[string]any{"tags": map[string]any{"k": map[string]any{}}}, "tags.k", "type"},
		{"tag value array", map[string]any{"tags": map[string]any{"k": []int{1}}}, "tags.k", "type"},
		{"tags duplicate key", map[string]any{"tags": raw(`{"a":"1","a":"2"}`)}, "tags", "invalid"},
		{"parser markdown", map[string]any{"parser": "markdown"}, "", ""},
		{"parser text", map[string]any{"parser": "text"}, "", ""},
		{"parser html", map[string]any{"parser": "html"}, "parser", "enum"},
		{"user_id", map[string]any{"user_id": "user-1"}, "", ""},
		{"user_id empty", map[string]any{"user_id": ""}, "user_id", "required"},
		{"user_id 129", map[string]any{"user_id": strings.Repeat("u", 129)}, "user_id", "too_long"},
		{"timestamp", map[string]any{"timestamp": now - 3600}, "", ""},
		{"timestamp fraction", map[string]any{"timestamp": float64(now) - 0.5}, "", ""},
		{"timestamp 1999", map[string]any{"timestamp": 946684799}, "timestamp", "range"},
		{"timestamp tomorrow+", map[string]any{"timestamp": now + 25*3600}, "timestamp", "range"},
		{"timestamp milliseconds", map[string]any{"timestamp": now * 1000}, "timestamp", "range"},
		{"timestamp string", map[string]any{"timestamp": "2026-01-01"}, "timestamp", "type"},
		{"unknown field", map[string]any{"chanel": "payments"}, "chanel", "unknown_field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			r := e.do("POST", "/v1/log", e.full, merge(goodLog, c.extra))
			wantField(t, r, c.path, c.typ)
			if c.path != "" && !strings.Contains(r.problem.Detail, c.path) {
				t.Fatalf("detail does not name %s: %s", c.path, r.problem.Detail)
			}
			if ms := strings.Contains(c.name, "milliseconds"); ms != strings.Contains(r.problem.Detail, "looks like milliseconds: divide by 1000") {
				t.Fatalf("the milliseconds hint (want %t): %s", ms, r.problem.Detail)
			}
		})
	}
}

func TestLogResponseIsTheStoredEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, `{"project":"my-saas","channel":"payments","event":"  New Subscription  ",
		"description":"**x**","icon":":moneybag:","notify":true,"tags":{"plan":"premium","seats":12.50,"trial":false},
		"parser":"markdown","timestamp":1795320000}`)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	type ev struct {
		ID, Project, Channel, Event, Description, Icon, Parser string
		Notify                                                 bool
		Tags                                                   json.RawMessage
		Timestamp                                              int64
		CreatedAt                                              time.Time `json:"created_at"`
	}
	got := decode[ev](t, r)
	if got.ID == "" || got.Event != "New Subscription" || got.Icon != "💰" || !got.Notify || got.Parser != "markdown" ||
		string(got.Tags) != `{"plan":"premium","seats":12.50,"trial":false}` || got.Timestamp != 1795320000 || got.CreatedAt.IsZero() {
		t.Fatalf("response = %+v", got)
	}
	list := e.do("GET", "/v1/events?project=my-saas", e.full, "")
	page := decode[struct{ Events []ev }](t, list)
	if len(page.Events) != 1 || page.Events[0].ID != got.ID || !page.Events[0].CreatedAt.Equal(got.CreatedAt) {
		t.Fatalf("read back %+v, published %+v", page.Events, got)
	}

	r = e.do("POST", "/v1/log", e.full, merge(goodLog, nil))
	def := decode[ev](t, r)
	if def.Notify || def.Parser != "text" || string(def.Tags) != "{}" || time.Since(time.Unix(def.Timestamp, 0)) > time.Minute {
		t.Fatalf("defaults = %+v", def)
	}
}

// TestAllProblemsAtOnce: a body missing everything names every field in one answer.
func TestAllProblemsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, `{"icon":"no","parser":"html","tags":{"X":1},"colour":"red"}`)
	e.want(r, 400, "validation_failed")
	for _, p := range []string{"project", "channel", "event", "icon", "parser", "tags.X", "colour"} {
		if !r.has(p, "") {
			t.Errorf("problem for %s missing: %s", p, r.body)
		}
	}
	r = e.do("POST", "/v1/insight", e.full, `{}`)
	for _, p := range []string{"project", "title", "value", "change"} {
		if !r.has(p, "required") {
			t.Errorf("insight: problem for %s missing: %s", p, r.body)
		}
	}
	if !strings.Contains(r.body, `\"increment\", \"decrement\" or \"update\"`) {
		t.Errorf("a missing change does not list the three values: %s", r.body)
	}
}

func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for name, body := range map[string]string{
		"not json":        `{"project":`,
		"array":           `[1,2]`,
		"string":          `"hello"`,
		"trailing data":   `{"project":"my-saas","channel":"payments","event":"x"} {}`,
		"trailing junk":   `{"project":"my-saas","channel":"payments","event":"x"}x`,
		"duplicate key":   `{"project":"my-saas","project":"other","channel":"payments","event":"x"}`,
		"invalid utf-8":   "{\"project\":\"my-saas\",\"channel\":\"payments\",\"event\":\"\xff\"}",
		"empty body":      ``,
		"only whitespace": `   `,
	} {
		t.Run(name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			r := e.do("POST", "/v1/log", e.full, body, "Content-Type", "application/json")
			e.want(r, 400, "invalid_json")
		})
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"project": "nope"}))
	e.want(r, 404, "project_not_found")
	r = e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"channel": "deploys"}))
	e.want(r, 404, "channel_not_found")
	if !strings.Contains(r.problem.Detail, "tidings channel create my-saas deploys") {
		t.Fatalf("channel_not_found does not say how to create it: %s", r.problem.Detail)
	}
	r = e.do("POST", "/v1/insight", e.full, `{"project":"nope","title":"x","value":1,"change":"update"}`)
	e.want(r, 404, "project_not_found")
	r = e.do("GET", "/v1/nothing", "", "")
	e.want(r, 404, "not_found")
	r = e.do("GET", "/definitely/not", "", "")
	e.want(r, 404, "not_found")
}

func TestAutoCreateChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	e.must(e.store.SetAutoCreateChannels(t.Context(), e.acme.ID, "my-saas", true))
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"channel": "deploys"}))
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

func TestAliasesAndMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	if r := e.do("POST", "/api/v1/log", e.full, merge(goodLog, nil)); r.status != 200 {
		t.Fatalf("/api/v1/log: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/api/v1/insight", e.full, `{"project":"my-saas","title":"A","value":1,"change":"update"}`); r.status != 200 {
		t.Fatalf("/api/v1/insight: %d %s", r.status, r.body)
	}
	for path, allow := range map[string]string{
		"/v1/log":         "POST, OPTIONS",
		"/api/v1/log":     "POST, OPTIONS",
		"/v1/insight":     "POST, PATCH, OPTIONS",
		"/api/v1/insight": "POST, PATCH, OPTIONS",
		"/v1/events":      "GET, HEAD",
	} {
		r := e.do("PUT", path, e.full, "{}")
		e.want(r, 405, "method_not_allowed")
		if r.header.Get("Allow") != allow {
			t.Errorf("%s: Allow = %q, want %q", path, r.header.Get("Allow"), allow)
		}
	}
	r := e.do("GET", "/v1/log", e.full, "")
	e.want(r, 405, "method_not_allowed")
}

func TestMediaTypeAndSize(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	body := merge(goodLog, nil)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "", "application/jsonx"} {
		r := e.do("POST", "/v1/log", e.full, body, "Content-Type", ct)
		e.want(r, 415, "unsupported_media_type")
	}
	if r := e.do("POST", "/v1/log", e.full, body, "Content-Type", "application/json; charset=utf-8"); r.status != 200 {
		t.Fatalf("charset parameter refused: %d %s", r.status, r.body)
	}

	big := merge(goodLog, map[string]any{"description": strings.Repeat("x", 70<<10)})
	r := e.do("POST", "/v1/log", e.full, big)
	e.want(r, 413, "payload_too_large")

	// Without a Content-Length (chunked), the limit applies while reading.
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/log", struct{ *strings.Reader }{strings.NewReader(big)})
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.full)
	res, err := e.srv.Client().Do(req)
	e.must(err)
	res.Body.Close()
	if res.StatusCode != 413 || req.ContentLength != 0 {
		t.Fatalf("chunked oversize body: %d (content length %d)", res.StatusCode, req.ContentLength)
	}
}

func TestProblemsInFieldOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, `{"zzz":1,"parser":"x","icon":"no","event":"","project":"Bad"}`)
	var paths []string
	for _, f := range r.problem.Validation.Body {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, ","); got != "project,channel,event,icon,parser,zzz" {
		t.Fatalf("order = %s", got)
	}
	if r := e.do("POST", "/v1/log", "", "{}"); !strings.Contains(r.body, "Bearer <token>") {
		t.Fatalf("HTML-escaped JSON: %s", r.body)
	}
}

// A body with more members than are found by a scan (scanMembers) finds them by a map:
// the known fields are read, and every unknown one is named.
func TestLogManyMembers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, manyTags(40)))
	for _, k := range []string{"k0", "k17", "k39"} {
		wantField(t, r, k, "unknown_field")
	}
	for _, known := range []string{"project", "channel", "event"} {
		if r.has(known, "required") {
			t.Fatalf("%s not found among 44 members: %s", known, r.body)
		}
	}
	if n := strings.Count(string(r.body), `"unknown_field"`); n != 40 {
		t.Fatalf("%d unknown fields named, want 40: %s", n, r.body)
	}
}
