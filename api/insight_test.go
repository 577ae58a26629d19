package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

type insightOut struct {
	Project, Title, Value, Prefix, Suffix, Icon, Change string
}

func TestInsightFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	base := map[string]any{"project": "my-saas", "title": "Monthly Revenue", "value": "10", "change": "update"}
	for _, c := range []struct {
		name  string
		extra map[string]any
		path  string
		typ   string
	}{
		{"minimal", nil, "", ""},
		{"project missing", map[string]any{"project": nil}, "project", "required"},
		{"project pattern", map[string]any{"project": "My SaaS"}, "project", "pattern"},
		{"title free text", map[string]any{"title": "User's Count (EU)"}, "", ""},
		{"title missing", map[string]any{"title": nil}, "title", "required"},
		{"title blank", map[string]any{"title": "  "}, "title", "required"},
		{"title 128", map[string]any{"title": strings.Repeat("T", 128)}, "", ""},
		{"title 129", map[string]any{"title": strings.Repeat("T", 129)}, "title", "too_long"},
		{"value number", map[string]any{"value": 42}, "", ""},
		{"value bool", map[string]any{"value": true}, "", ""},
		{"value missing", map[string]any{"value": nil}, "value", "required"},
		{"value empty", map[string]any{"value": ""}, "value", "required"},
		{"value 256", map[string]any{"value": strings.Repeat("v", 256)}, "", ""},
		{"value 257", map[string]any{"value": strings.Repeat("v", 257)}, "value", "too_long"},
		{"value object", map[string]any{"value": map[string]any{"a": 1}}, "value", "type"},
		{"value array", map[string]any{"value": []int{1}}, "value", "type"},
		{"change missing", map[string]any{"change": nil}, "change", "required"},
		{"change unknown", map[string]any{"change": "set"}, "change", "enum"},
		{"change increment", map[string]any{"change": "increment", "value": "12.50", "title": "Counter"}, "", ""},
		{"change decrement", map[string]any{"change": "decrement", "value": 2, "title": "Counter"}, "", ""},
		{"increment text", map[string]any{"change": "increment", "value": "ten"}, "value", "number"},
		{"increment bool", map[string]any{"change": "increment", "value": true}, "value", "number"},
		{"prefix 32", map[string]any{"prefix": strings.Repeat("$", 32)}, "", ""},
		{"prefix 33", map[string]any{"prefix": strings.Repeat("$", 33)}, "prefix", "too_long"},
		{"suffix 33", map[string]any{"suffix": strings.Repeat("s", 33)}, "suffix", "too_long"},
		{"suffix number", map[string]any{"suffix": 3}, "suffix", "type"},
		{"icon", map[string]any{"icon": "🟢"}, "", ""},
		{"icon shortcode", map[string]any{"icon": ":green_circle:"}, "", ""},
		{"icon two", map[string]any{"icon": "🟢🔴"}, "icon", "emoji"},
		{"unknown field", map[string]any{"colour": "red"}, "colour", "unknown_field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			wantField(t, e.do("POST", "/v1/insight", e.full, merge(base, c.extra)), c.path, c.typ)
		})
	}
}

func TestInsightArithmetic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	send := func(method, body string) *response {
		t.Helper()
		return e.do(method, "/v1/insight", e.full, body)
	}
	value := func(r *response) string {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if !strings.Contains(r.body, `"value":"`) {
			t.Fatalf("value is not a JSON string: %s", r.body)
		}
		return decode[insightOut](t, r).Value
	}
	if v := value(send("POST", `{"project":"my-saas","title":"Sum","value":0.1,"change":"increment"}`)); v != "0.1" {
		t.Fatalf("0 + 0.1 = %s", v)
	}
	if v := value(send("POST", `{"project":"my-saas","title":"Sum","value":0.2,"change":"increment"}`)); v != "0.3" {
		t.Fatalf("0.1 + 0.2 = %s, want 0.3", v)
	}
	value(send("POST", `{"project":"my-saas","title":"Money","value":"19.99","change":"update","prefix":"$","icon":"💰"}`))
	if v := value(send("POST", `{"project":"my-saas","title":"Money","value":"0.01","change":"increment"}`)); v != "20.00" {
		t.Fatalf("19.99 + 0.01 = %s, want 20.00", v)
	}
	r := send("PATCH", `{"project":"my-saas","title":"Money","value":{"$inc":1000.5}}`)
	got := decode[insightOut](t, r)
	if got.Value != "1020.50" || got.Prefix != "$" || got.Icon != "💰" || got.Change != "increment" {
		t.Fatalf("after PATCH $inc: %+v", got)
	}
	if v := value(send("POST", `{"project":"my-saas","title":"Money","value":"1020.5","change":"decrement"}`)); v != "0.00" {
		t.Fatalf("decrement to zero = %s", v)
	}
	// A value sent alone keeps icon, prefix and suffix; an empty string clears one.
	got = decode[insightOut](t, send("POST", `{"project":"my-saas","title":"Money","value":"5","change":"update","prefix":""}`))
	if got.Prefix != "" || got.Icon != "💰" {
		t.Fatalf("keep/clear: %+v", got)
	}

	value(send("POST", `{"project":"my-saas","title":"Status","value":"Operational","change":"update","icon":"🟢"}`))
	r = send("POST", `{"project":"my-saas","title":"Status","value":1,"change":"increment"}`)
	e.want(r, 409, "insight_not_numeric")
	r = send("PATCH", `{"project":"my-saas","title":"Status","value":{"$inc":1}}`)
	e.want(r, 409, "insight_not_numeric")
	got = decode[insightOut](t, send("POST", `{"project":"my-saas","title":"Status","value":"Outage","change":"update","icon":"🔴"}`))
	if got.Value != "Outage" || got.Icon != "🔴" {
		t.Fatalf("status switch: %+v", got)
	}

	list := decode[struct{ Insights []insightOut }](t, e.do("GET", "/v1/insights?project=my-saas", e.full, ""))
	if len(list.Insights) != 3 || list.Insights[0].Title != "Money" || list.Insights[1].Value != "Outage" {
		t.Fatalf("GET /v1/insights = %+v", list)
	}
}

func TestIncrementBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for name, c := range map[string]struct{ body, path string }{
		"value missing": {`{"project":"my-saas","title":"A"}`, "value"},
		"value number":  {`{"project":"my-saas","title":"A","value":1}`, "value"},
		"inc missing":   {`{"project":"my-saas","title":"A","value":{}}`, "value.$inc"},
		"inc text":      {`{"project":"my-saas","title":"A","value":{"$inc":"ten"}}`, "value"},
		"inc object":    {`{"project":"my-saas","title":"A","value":{"$inc":{}}}`, "value.$inc"},
		"other op":      {`{"project":"my-saas","title":"A","value":{"$inc":1,"$set":2}}`, "value.$set"},
		"change field":  {`{"project":"my-saas","title":"A","value":{"$inc":1},"change":"update"}`, "change"},
	} {
		t.Run(name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			r := e.do("PATCH", "/v1/insight", e.full, c.body)
			e.want(r, 400, "validation_failed")
			if !r.has(c.path, "") {
				t.Fatalf("no problem at %s: %s", c.path, r.body)
			}
		})
	}
}

// TestParallelIncrementsOverHTTP: increments from many clients are never lost.
func TestParallelIncrementsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	const n = 300
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			method, body := "POST", `{"project":"my-saas","title":"Hits","value":1,"change":"increment"}`
			if i%2 == 0 {
				method, body = "PATCH", `{"project":"my-saas","title":"Hits","value":{"$inc":1}}`
			}
			if r := e.do(method, "/v1/insight", e.full, body); r.status != 200 {
				t.Errorf("%d %s", r.status, r.body)
			}
		}(i)
	}
	wg.Wait()
	list := decode[struct{ Insights []insightOut }](t, e.do("GET", "/v1/insights?project=my-saas", e.full, ""))
	if list.Insights[0].Value != fmt.Sprint(n) {
		t.Fatalf("after %d increments: %s", n, list.Insights[0].Value)
	}
}

// TestInsightChangeDefault: the LogSnag SDKs' insight.track sends no change. By default
// that is refused, with a message (where the SDKs print it) naming the setting; with the
// project's "Missing change means update" on, it replaces the value. A change that is
// sent still counts, and increments by PATCH are unaffected.
func TestInsightChangeDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	track := `{"project":"my-saas","title":"Signups","value":42,"icon":"👋"}`
	r := e.do("POST", "/v1/insight", e.full, track)
	e.want(r, 400, "validation_failed")
	if !r.has("change", "required") || !strings.Contains(r.problem.Validation.Body[0].Message, `"Missing change means update"`) ||
		!strings.Contains(r.problem.Validation.Body[0].Message, "tidings project update my-saas --insight-change-default update") {
		t.Fatalf("the 400 does not name the setting: %s", r.body)
	}
	e.must(e.store.SetInsightChangeDefault(t.Context(), e.acme.ID, "my-saas", tidings.ChangeUpdate))
	for _, c := range []struct{ body, want string }{
		{track, `"value":"42"`},
		{`{"project":"my-saas","title":"Signups","value":43}`, `"value":"43"`},
		{`{"project":"my-saas","title":"Signups","value":2,"change":"increment"}`, `"value":"45"`},
	} {
		if r := e.do("POST", "/v1/insight", e.full, c.body); r.status != 200 || !strings.Contains(r.body, c.want) {
			t.Fatalf("%s: %d %s, want %s", c.body, r.status, r.body, c.want)
		}
	}
	if r := e.do("PATCH", "/v1/insight", e.full, `{"project":"my-saas","title":"Signups","value":{"$inc":1}}`); r.status != 200 || !strings.Contains(r.body, `"value":"46"`) {
		t.Fatalf("increment: %d %s", r.status, r.body)
	}
	// Another project keeps the default: change required.
	_, err := e.store.CreateProject(t.Context(), e.acme.ID, "other")
	e.must(err)
	e.want(e.do("POST", "/v1/insight", e.full, `{"project":"other","title":"Signups","value":1}`), 400, "validation_failed")
	wantCode := func(err error, code string) {
		t.Helper()
		if tidings.ErrorCode(err) != code {
			t.Fatalf("got %v, want %s", err, code)
		}
	}
	wantCode(e.store.SetInsightChangeDefault(t.Context(), e.acme.ID, "my-saas", "increment"), tidings.EValidation)
	wantCode(e.store.SetInsightChangeDefault(t.Context(), e.acme.ID, "nope", tidings.ChangeUpdate), tidings.EProjectNotFound)
	e.must(e.store.SetInsightChangeDefault(t.Context(), e.acme.ID, "my-saas", ""))
	e.want(e.do("POST", "/v1/insight", e.full, track), 400, "validation_failed")
}
