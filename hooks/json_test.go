package hooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// A sample body, like a form service's or a CI's generic webhook.
const jsonSample = `{
  "type": "signup",
  "user": {"id": "usr_42", "email": "ada@example.com", "plan": "pro"},
  "amount": 12.50,
  "big": 12345678901234567890,
  "items": [{"name": "seat", "qty": 2}, {"name": "support", "qty": 1}],
  "trial": true
}`

func jsonHook(t *tidings.HookTemplate) *tidings.Hook {
	return &tidings.Hook{ID: "hook_0123456789ab", AccountID: 1, Project: "app", Channel: "signups", Source: tidings.HookJSON, Secret: "tok", Template: t}
}

var sampleTemplate = &tidings.HookTemplate{
	Event:       `{{if eq .type "signup"}}New signup{{else}}{{.type}}{{end}}`,
	Description: `{{.user.email}} bought{{range $i, $e := .items}} {{$e.qty}}× {{$e.name}}{{end}}`,
	Icon:        `{{if .trial}}:tada:{{else}}💰{{end}}`,
	Tags:        `{"plan": {{json .user.plan}}, "amount": {{.amount}}, "big": {{.big}}, "trial": {{.trial}}, "missing": {{json .nope}}}`,
	UserID:      `{{.user.id}}`,
	Notify:      `{{.trial}}`,
}

func TestJSONTemplate(t *testing.T) {
	if err := CheckTemplate(sampleTemplate); err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Authorization": {"Bearer tok"}, "Idempotency-Key": {"order-981"}}
	d, err := deliver(t, jsonHook(sampleTemplate), h, []byte(jsonSample))
	if err != nil {
		t.Fatal(err)
	}
	e := d.Events[0]
	if d.ID != "order-981" || e.Event != "New signup" || e.Icon != "🎉" || !e.Notify || e.UserID != "usr_42" ||
		e.Description != "ada@example.com bought 2× seat 1× support" {
		t.Errorf("id %q event %q icon %q notify %v user %q description %q", d.ID, e.Event, e.Icon, e.Notify, e.UserID, e.Description)
	}
	tags, _ := json.Marshal(e.Tags)
	if string(tags) != `{"plan":"pro","amount":12.50,"big":12345678901234567890,"trial":true}` {
		t.Errorf("tags %s", tags)
	}
	// X-Request-Id when there is no Idempotency-Key; none: no id.
	d, _ = deliver(t, jsonHook(sampleTemplate), http.Header{"Authorization": {"Bearer tok"}, "X-Request-Id": {"req-1"}}, []byte(jsonSample))
	if d.ID != "req-1" {
		t.Errorf("id %q", d.ID)
	}
	d, _ = deliver(t, jsonHook(sampleTemplate), http.Header{"Authorization": {"Bearer tok"}}, []byte(jsonSample))
	if d.ID != "" {
		t.Errorf("id %q", d.ID)
	}
	// TryTemplate: the same events, without project and channel.
	events, err := TryTemplate(sampleTemplate, []byte(jsonSample))
	if err != nil || len(events) != 1 || events[0].Event != "New signup" || events[0].Project != "" {
		t.Fatalf("%v %+v", err, events)
	}
	// Functions: num compares numbers, default fills in, lower and upper.
	events, err = TryTemplate(&tidings.HookTemplate{Event: `{{if gt (num .amount) 10.0}}Big{{else}}Small{{end}} {{upper .type}} {{default "free" .nope}} {{lower "ÄB"}} {{trim "  x "}}`}, []byte(jsonSample))
	if err != nil || events[0].Event != "Big SIGNUP free äb x" {
		t.Fatalf("%v %q", err, events[0].Event)
	}
	// A missing key renders nothing, not "<no value>".
	events, err = TryTemplate(&tidings.HookTemplate{Event: `Signup {{.nope}}`, Description: `{{.user.nope}}`}, []byte(jsonSample))
	if err != nil || events[0].Event != "Signup" || events[0].Description != "" {
		t.Fatalf("%v %q %q", err, events[0].Event, events[0].Description)
	}
}

func TestCheckTemplate(t *testing.T) {
	for _, tc := range []struct {
		name, event, want string
	}{
		{"range over an integer", `{{range 1000000000}}x{{end}}`, "integer"},
		{"range over an integer into a variable", `{{range $i := 100000}}{{$i}}{{end}}`, "integer"},
		{"range over a call", `{{range len .items}}x{{end}}`, "range only over a field"},
		{"range over a pipeline", `{{range (index . "items")}}x{{end}}`, "range only over a field"},
		{"range over an assigned variable", `{{$n := .items}}{{range $n}}x{{end}}`, "range only over a field"},
		{"range over an index", `{{range $i, $e := .items}}{{range $i}}x{{end}}{{end}}`, "range only over a field"},
		{"three deep", `{{range .a}}{{range .b}}{{range .c}}x{{end}}{{end}}{{end}}`, "nested 2 deep"},
		{"three deep through with and if", `{{range .a}}{{with .b}}{{if .c}}{{range .}}{{range .}}x{{end}}{{end}}{{end}}{{end}}{{end}}`, "nested 2 deep"},
		{"define", `{{define "x"}}{{template "x"}}{{end}}{{template "x"}}`, "not allowed"},
		{"template", `{{template "y"}}`, "not allowed"},
		{"block", `{{block "b" .}}x{{end}}`, "not allowed"},
		{"too long", strings.Repeat("x", tidings.MaxHookTemplate+1), "at most"},
		{"parse error", `{{.a`, "unclosed"},
		{"unknown function", `{{nope .a}}`, "not defined"},
		{"empty event", ` `, "needs a template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTemplate(&tidings.HookTemplate{Event: tc.event})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if tc.event != " " && !strings.Contains(err.Error(), "template.event") {
				t.Errorf("the error does not name the field: %v", err)
			}
		})
	}
	for _, ok := range []string{`{{range .items}}{{.name}}{{end}}`, `{{range $e := .items}}{{range $e.tags}}{{.}}{{end}}{{end}}`,
		`{{range $.items}}{{range $.items}}{{end}}{{else}}none{{end}}`, `{{range $k, $v := .user}}{{$k}}={{$v}} {{end}}`, `{{with .user}}{{range .}}{{end}}{{end}}`} {
		if err := CheckTemplate(&tidings.HookTemplate{Event: ok}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestTemplateLimits(t *testing.T) {
	items := make([]int, 2000)
	wide, _ := json.Marshal(map[string]any{"items": items, "big": strings.Repeat("x", 40000)})
	for _, tc := range []struct {
		name string
		tmpl tidings.HookTemplate
		body []byte
		want string
	}{
		{"output", tidings.HookTemplate{Event: "e", Description: `{{range .items}}{{$.big}}{{end}}`}, wide, "renders more than 64 KiB"},
		{"output of one value", tidings.HookTemplate{Event: `{{.}}{{.}}`}, wide, "renders more than 64 KiB"},
		{"functions", tidings.HookTemplate{Event: "e", Description: `{{range .items}}{{$x := printf "%0999999d" 1}}{{end}}`}, wide, "functions made more than"},
		{"nested work", tidings.HookTemplate{Event: `{{range .items}}{{range $.items}}{{end}}{{end}}e`}, wide, "would take too long"},
		{"many ranges", tidings.HookTemplate{Event: "e" + strings.Repeat(`{{range .items}}{{end}}`, 170)}, func() []byte {
			b, _ := json.Marshal(map[string]any{"items": make([]int, 100000)})
			return b
		}(), "would take too long"},
		{"bad notify", tidings.HookTemplate{Event: "e", Notify: "yes"}, []byte(`{}`), `"true" or "false"`},
		{"tags not an object", tidings.HookTemplate{Event: "e", Tags: `[1]`}, []byte(`{}`), "JSON object"},
		{"nested tag", tidings.HookTemplate{Event: "e", Tags: `{"a": {"b": 1}}`}, []byte(`{}`), "must be a string"},
		{"no name", tidings.HookTemplate{Event: "{{.nope}}\u200b"}, []byte(`{}`), "no visible name"},
		{"runtime error", tidings.HookTemplate{Event: `{{index .items 5000}}`}, wide, "index out of range"},
		{"body not JSON", tidings.HookTemplate{Event: "e"}, []byte(`{"a":`), "not JSON"},
		{"two bodies", tidings.HookTemplate{Event: "e"}, []byte(`{} {}`), "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deliver(t, jsonHook(&tc.tmpl), http.Header{"Authorization": {"Bearer tok"}}, tc.body)
			refusal(t, err, 400)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if _, err := TryTemplate(&tc.tmpl, tc.body); err == nil {
				t.Error("TryTemplate runs it")
			}
		})
	}
	// Ranges nested over a short list are fine.
	if _, err := TryTemplate(&tidings.HookTemplate{Event: `{{range .items}}{{range $.items}}{{end}}{{end}}e`}, []byte(`{"items":[1,2,3]}`)); err != nil {
		t.Error(err)
	}
}

func TestJSONRefusals(t *testing.T) {
	body := []byte(jsonSample)
	for name, h := range map[string]http.Header{
		"missing": {}, "wrong": {"Authorization": {"Bearer nope"}}, "basic": {"Authorization": {"Basic dG9rOnRvaw=="}},
	} {
		_, err := deliver(t, jsonHook(sampleTemplate), h, body)
		if refusal(t, err, 401); strings.Contains(err.Error(), "ada@") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := deliver(t, jsonHook(nil), http.Header{"Authorization": {"Bearer tok"}}, body); err == nil {
		t.Error("a json hook without a template maps")
	}
}

func TestJSONHostile(t *testing.T) {
	long := strings.Repeat("é", 20000)
	body, _ := json.Marshal(map[string]any{"name": "\u202e\x00bad\r\nname" + long, "user": "\x07" + long, "key": "Bad Key!", "icon": "<script>",
		"id": strings.Repeat("i", 300)})
	tmpl := &tidings.HookTemplate{Event: `{{.name}}`, Description: `{{.name}}`, Icon: `{{.icon}}`, UserID: `{{.user}}`,
		Tags: `{ {{json .key}}: {{json .name}}, "ok": "\u0000x" }`}
	d, err := deliver(t, jsonHook(tmpl), http.Header{"Authorization": {"Bearer tok"}, "Idempotency-Key": {strings.Repeat("i", 300)}}, body)
	if err != nil {
		t.Fatal(err)
	}
	e := d.Events[0]
	if !strings.HasPrefix(e.Event, "bad nameé") || e.Icon != "" || e.UserID != "" || tag(e, "bad-key") == "" || tag(e, "ok") != "x" || !strings.HasPrefix(d.ID, "sha256:") {
		t.Errorf("event %.20q icon %q user %.20q tags %.80v id %q", e.Event, e.Icon, e.UserID, e.Tags, d.ID)
	}
}

// TestTemplateErrorsNameNoValue: a template that fails on a body is refused with the
// field, the place in the template and why, but never a value of the body: the reason
// goes to the answer, the hook's log and the server's log.
func TestTemplateErrorsNameNoValue(t *testing.T) {
	const secret = "4242-4242-4242-4242"
	body := []byte(`{"card":"` + secret + `","obj":{"k":"` + secret + `"},"list":["` + secret + `"],"n":4242424242,"big":1e999}`)
	for _, tc := range []struct {
		name, field, tmpl, want string
	}{
		{"num of a string", "event", `{{if gt (num .card) 1.0}}big{{end}}e`, "error calling num: the string is not a number"},
		{"num out of range", "description", `{{num .big}}`, "error calling num: the number is out of range"},
		{"num of an object", "event", `{{num .obj}}e`, "error calling num: a list or an object is not a number"},
		{"range over a string", "tags", `{{range .card}}{{end}}{}`, "range over a value that is not a list or an object"},
		{"eq of an object", "event", `{{if eq .obj .card}}x{{end}}e`, "error calling eq"},
		{"index out of range", "user_id", `{{index .list 7}}`, "error calling index: index out of range"},
		{"index with a number of the body", "user_id", `{{index .list .n}}`, "error calling index: cannot index slice/array with type json.Number"},
		{"slice out of range", "event", `{{slice .card 1 99}}e`, "error calling slice: index out of range"},
		{"a field of a string", "event", `{{.card.x}}e`, "can't evaluate field x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := tidings.HookTemplate{Event: "e"}
			switch tc.field {
			case "event":
				tmpl.Event = tc.tmpl
			case "description":
				tmpl.Description = tc.tmpl
			case "tags":
				tmpl.Tags = tc.tmpl
			case "user_id":
				tmpl.UserID = tc.tmpl
			}
			_, err := deliver(t, jsonHook(&tmpl), http.Header{"Authorization": {"Bearer tok"}}, body)
			refusal(t, err, 400)
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, "4242424242") || strings.Contains(msg, "1e999") {
				t.Fatalf("the refusal quotes the body: %s", msg)
			}
			if !strings.HasPrefix(msg, "template."+tc.field+" (line 1, column ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("got %q, want the field, its place and %q", msg, tc.want)
			}
		})
	}
}
