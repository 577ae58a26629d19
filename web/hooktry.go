package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/tidings-dev/tidings"
)

// tryTemplate runs a json hook's template on a sample body for the form's "Try on a
// sample body", and checkTemplate refuses a template at save time. They stand in for
// package hooks' TryTemplate and CheckTemplate until those are on main.
var (
	tryTemplate   = tryTemplateLocal
	checkTemplate = func(*tidings.HookTemplate) error { return nil }
)

func tryTemplateLocal(t *tidings.HookTemplate, body []byte) ([]*tidings.NewEvent, error) {
	var data any
	if err := json.Unmarshal(body, &data); err != nil {
		return nil, fmt.Errorf("the body is not JSON: %v", err)
	}
	out := map[string]string{}
	for _, f := range t.Fields() {
		tm, err := template.New(f.Name).Option("missingkey=zero").Parse(f.Text)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", f.Name, strings.TrimPrefix(err.Error(), "template: "))
		}
		var b bytes.Buffer
		if err := tm.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("%s: %s", f.Name, strings.TrimPrefix(err.Error(), "template: "))
		}
		out[f.Name] = strings.TrimSpace(strings.ReplaceAll(b.String(), "<no value>", ""))
	}
	e := &tidings.NewEvent{Project: "p", Channel: "c", Event: out["event"], Description: out["description"],
		Icon: out["icon"], UserID: out["user_id"], Notify: out["notify"] == "true"}
	if out["tags"] != "" {
		if err := json.Unmarshal([]byte(out["tags"]), &e.Tags); err != nil {
			return nil, fmt.Errorf("tags: must render a JSON object of tags: %v", err)
		}
	}
	var p tidings.Problems
	e.Check(&p, time.Now())
	if err := p.Err(); err != nil {
		return nil, fmt.Errorf("%s", tidings.ErrorMessage(err))
	}
	return []*tidings.NewEvent{e}, nil
}
