package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/tidings-dev/tidings"
)

// JSON: any JSON body, mapped by the hook's template (tidings.HookTemplate): one Go
// text/template per field, run on the decoded body. The delivery's id is the
// Idempotency-Key or X-Request-Id header when the sender has one. When the hook has a
// secret, requests carry "Authorization: Bearer SECRET".
//
// Besides text/template's builtins, templates have lower, upper, trim, default
// ({{default "none" .plan}}), json (a value as JSON, for the tags object) and num (a
// number of the body, which keeps its exact text, as a float64 to compare:
// {{if gt (num .amount) 100.0}}).
//
// A template's cost is bounded: CheckTemplate refuses, when the hook is saved,
// {{template}} and {{define}}, ranges over integers or over anything but the body's
// fields, and ranges nested deeper than MaxTemplateRangeDepth; a run stops with an
// error when a field renders more than MaxTemplateOutput bytes, when functions make
// more than maxTemplateFuncOutput bytes in all, or when its ranges over this body
// would take more than maxTemplateRangeWork iterations.

// Template bounds.
const (
	MaxTemplateOutput     = 64 << 10 // bytes one field may render
	MaxTemplateRangeDepth = 2        // ranges in ranges
	maxTemplateFuncOutput = 1 << 20  // bytes printf and the other functions may make in one run
	maxTemplateRangeWork  = 1 << 20  // iterations the ranges may take on one body (estimated before the run)
)

func init() { sources[tidings.HookJSON] = jsonSource{} }

type jsonSource struct{}

func (jsonSource) Verify(h *tidings.Hook, r *Request) error { return checkBearer(h, r, false) }

func (jsonSource) Map(h *tidings.Hook, r *Request) (*Delivery, error) {
	if h.Template == nil {
		return nil, BadBody("the hook has no template")
	}
	events, err := runTemplate(h.Template, r.Body)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		e.Project, e.Channel = h.Project, h.Channel
	}
	d := &Delivery{Events: events}
	for _, name := range []string{"Idempotency-Key", "X-Request-Id"} {
		if id := deliveryID(r.Header.Get(name)); id != "" {
			d.ID, d.SenderKey = id, name
			break
		}
	}
	return d, nil
}

// TryTemplate runs t on a sample body as a delivery would, for the settings page's
// "try on a sample": the events it makes (without project and channel), or why not.
func TryTemplate(t *tidings.HookTemplate, body []byte) ([]*tidings.NewEvent, error) {
	if err := CheckTemplate(t); err != nil {
		return nil, err
	}
	return runTemplate(t, body)
}

// CheckTemplate parses t's fields and refuses what could make a run costly: a field
// longer than tidings.MaxHookTemplate, {{template}}/{{define}}/{{block}}, a range over
// an integer or over anything but a field of the body (.items, $.a.b, or an element
// of an enclosing range), and ranges nested deeper than MaxTemplateRangeDepth. It
// answers a tidings validation error naming the field ("template.tags").
func CheckTemplate(t *tidings.HookTemplate) error {
	var p tidings.Problems
	if t == nil || strings.TrimSpace(t.Event) == "" {
		p.Add("template.event", "required", "a json hook needs a template for the event's name")
	}
	if t != nil {
		for _, f := range t.Fields() {
			if _, err := parseField(f.Name, f.Text); err != nil {
				p.Add("template."+f.Name, "template", "%s", err)
			}
		}
	}
	return p.Err()
}

// parsed is one field's template with the shape of its ranges.
type parsed struct {
	tmpl   *template.Template
	ranges [MaxTemplateRangeDepth + 1]int // range nodes by depth (1, 2)
}

func parseField(name, text string) (*parsed, error) {
	if len(text) > tidings.MaxHookTemplate {
		return nil, fmt.Errorf("must be at most %d bytes", tidings.MaxHookTemplate)
	}
	tmpl, err := template.New(name).Option("missingkey=zero").Funcs(templateFuncs(nil)).Parse(text)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(tmpl.Templates()) > 1 {
		return nil, errors.New("{{define}} and {{block}} are not allowed")
	}
	p := &parsed{tmpl: tmpl}
	if tmpl.Tree != nil {
		if err := p.walk(tmpl.Tree.Root, 0, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// walk checks the nodes under n; depth is the ranges around them, elems the element
// variables those ranges declare.
func (p *parsed) walk(n parse.Node, depth int, elems []string) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := p.walk(c, depth, elems); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return errors.New("{{template}} is not allowed")
	case *parse.IfNode:
		return p.walkBranch(&n.BranchNode, depth, elems)
	case *parse.WithNode:
		return p.walkBranch(&n.BranchNode, depth, elems)
	case *parse.RangeNode:
		if depth+1 > MaxTemplateRangeDepth {
			return fmt.Errorf("ranges may be nested %d deep at most", MaxTemplateRangeDepth)
		}
		if err := rangeable(n.Pipe, elems); err != nil {
			return err
		}
		p.ranges[depth+1]++
		inner := elems
		switch len(n.Pipe.Decl) {
		case 1:
			inner = append(append([]string(nil), elems...), n.Pipe.Decl[0].Ident[0])
		case 2:
			inner = append(append([]string(nil), elems...), n.Pipe.Decl[1].Ident[0])
		}
		if err := p.walk(n.List, depth+1, inner); err != nil {
			return err
		}
		return p.walk(n.ElseList, depth, elems)
	}
	return nil
}

func (p *parsed) walkBranch(b *parse.BranchNode, depth int, elems []string) error {
	if err := p.walk(b.List, depth, elems); err != nil {
		return err
	}
	return p.walk(b.ElseList, depth, elems)
}

// rangeable holds when a range's pipeline is one field of the body: .items, .a.b,
// ., $.items, or an enclosing range's element ($e, $e.children).
func rangeable(pipe *parse.PipeNode, elems []string) error {
	for _, c := range pipe.Cmds {
		for _, a := range c.Args {
			if _, ok := a.(*parse.NumberNode); ok {
				return errors.New("range over an integer is not allowed")
			}
		}
	}
	const only = "range only over a field of the body (like .items or $e.children)"
	if len(pipe.Cmds) != 1 || len(pipe.Cmds[0].Args) != 1 {
		return errors.New(only)
	}
	switch a := pipe.Cmds[0].Args[0].(type) {
	case *parse.FieldNode, *parse.DotNode:
		return nil
	case *parse.ChainNode:
		if _, ok := a.Node.(*parse.FieldNode); ok {
			return nil
		}
	case *parse.VariableNode:
		if a.Ident[0] == "$" {
			return nil
		}
		for _, e := range elems {
			if a.Ident[0] == e {
				return nil
			}
		}
	}
	return errors.New(only)
}

// budget is a run's allowance for what functions make.
type budget struct{ left int }

var errFuncBudget = fmt.Errorf("the template's functions made more than %d bytes", maxTemplateFuncOutput)

func (b *budget) spend(s string) (string, error) {
	if b == nil {
		return s, nil
	}
	if b.left -= len(s); b.left < 0 {
		return "", errFuncBudget
	}
	return s, nil
}

// templateFuncs are the functions templates have: the builtins that make text,
// metered by b, and a few helpers.
func templateFuncs(b *budget) template.FuncMap {
	return template.FuncMap{
		"print":    func(a ...any) (string, error) { return b.spend(fmt.Sprint(a...)) },
		"printf":   func(f string, a ...any) (string, error) { return b.spend(fmt.Sprintf(f, a...)) },
		"println":  func(a ...any) (string, error) { return b.spend(fmt.Sprintln(a...)) },
		"html":     func(a ...any) (string, error) { return b.spend(template.HTMLEscaper(a...)) },
		"js":       func(a ...any) (string, error) { return b.spend(template.JSEscaper(a...)) },
		"urlquery": func(a ...any) (string, error) { return b.spend(template.URLQueryEscaper(a...)) },
		"lower":    func(s string) (string, error) { return b.spend(strings.ToLower(s)) },
		"upper":    func(s string) (string, error) { return b.spend(strings.ToUpper(s)) },
		"trim":     strings.TrimSpace,
		"default": func(def any, v any) any {
			if v == nil || v == "" {
				return def
			}
			return v
		},
		// num makes a body's number (kept as its text, json.Number) comparable:
		// {{if gt (num .amount) 100.0}}.
		// Its errors say what kind of value it got, never the value: they reach the
		// hook's log and the server's (a card number in a string, say).
		"num": func(v any) (float64, error) {
			switch v := v.(type) {
			case json.Number:
				f, err := v.Float64()
				if err != nil {
					return 0, errors.New("the number is out of range")
				}
				return f, nil
			case string:
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return 0, errors.New("the string is not a number (its text is not shown)")
				}
				return f, nil
			case bool:
				if v {
					return 1, nil
				}
				return 0, nil
			case nil:
				return 0, nil
			}
			return 0, errors.New("a list or an object is not a number")
		},
		"json": func(v any) (string, error) {
			out, err := json.Marshal(v)
			if err != nil {
				return "", errors.New("the value cannot be written as JSON") // json's error may quote it
			}
			return b.spend(string(out))
		},
	}
}

// capped is a field's output, refusing to grow past MaxTemplateOutput.
type capped struct{ bytes.Buffer }

var errTooMuchOutput = fmt.Errorf("renders more than %d KiB", MaxTemplateOutput>>10)

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > MaxTemplateOutput {
		return 0, errTooMuchOutput
	}
	return c.Buffer.Write(p)
}

// widest is the length of the body's largest array or object, which bounds what one
// range over it iterates.
func widest(v any) int {
	n := 0
	switch v := v.(type) {
	case []any:
		n = len(v)
		for _, e := range v {
			n = max(n, widest(e))
		}
	case map[string]any:
		n = len(v)
		for _, e := range v {
			n = max(n, widest(e))
		}
	}
	return n
}

func runTemplate(t *tidings.HookTemplate, body []byte) ([]*tidings.NewEvent, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers print as sent: 12.50, 12345678901234567890
	var data any
	if err := dec.Decode(&data); err != nil {
		return nil, BadBody("the body is not JSON: %s", jsonError(err))
	}
	if dec.More() {
		return nil, BadBody("the body is not JSON: more than one value")
	}
	fields := t.Fields()
	trees := make([]*parsed, len(fields))
	work, wide := 0, widest(data)
	for i, f := range fields {
		p, err := parseField(f.Name, f.Text)
		if err != nil {
			return nil, BadBody("template.%s: %s", f.Name, err)
		}
		trees[i] = p
		work += p.ranges[1]*wide + p.ranges[2]*wide*wide
	}
	if wide > 0 && work > maxTemplateRangeWork {
		return nil, BadBody("the template's ranges would take too long on this body (%d items in its widest list or object): nest no ranges over lists this long", wide)
	}
	b := &budget{left: maxTemplateFuncOutput}
	out := map[string]string{}
	for i, f := range fields {
		if f.Text == "" {
			continue
		}
		var w capped
		if err := trees[i].tmpl.Funcs(templateFuncs(b)).Execute(&w, data); err != nil {
			switch {
			case errors.Is(err, errTooMuchOutput):
				return nil, BadBody("template.%s %s", f.Name, errTooMuchOutput)
			case errors.Is(err, errFuncBudget):
				return nil, BadBody("template.%s: %s", f.Name, errFuncBudget)
			}
			return nil, BadBody("%s", execReason(f.Name, err))
		}
		out[f.Name] = strings.TrimSpace(strings.ReplaceAll(w.String(), "<no value>", ""))
	}
	e := &tidings.NewEvent{}
	if e.Event = label(out["event"], ""); e.Event == "" {
		return nil, BadBody("template.event rendered no visible name")
	}
	e.Description = text(out["description"])
	if icon, ok := tidings.NormalizeIcon(out["icon"]); ok {
		e.Icon = icon
	}
	e.UserID = userID(out["user_id"])
	switch out["notify"] {
	case "", "false":
	case "true":
		e.Notify = true
	default:
		return nil, BadBody(`template.notify must render "true" or "false"`)
	}
	if s := out["tags"]; s != "" {
		tags, err := templateTags(s)
		if err != nil {
			return nil, err
		}
		e.Tags = tags
	}
	return []*tidings.NewEvent{e}, nil
}

// templateTags reads the tags template's JSON object: string values cleaned, numbers
// kept as numbers when a reader can decode them, booleans, nulls left out.
func templateTags(s string) (tidings.Tags, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || dec.More() {
		return nil, BadBody("template.tags must render a JSON object of strings, numbers and booleans")
	}
	var t tagger
	for _, k := range jsonKeyOrder(s) { // in the order the template wrote them
		switch v := m[k].(type) {
		case nil:
		case string:
			t.add(k, v)
		case bool:
			t.addBool(k, v)
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if len(v) > tidings.MaxTagNumberLen || err != nil || math.IsInf(f, 0) {
				t.add(k, string(v))
				continue
			}
			key := tagKey(k)
			if _, dup := t.tags.Get(key); key != "" && !dup && len(t.tags) < tidings.MaxTags {
				t.tags = append(t.tags, tidings.Tag{Key: key, Kind: tidings.KindNumber, Value: string(v)})
			}
		default:
			return nil, BadBody("template.tags: the value of %q must be a string, a number or a boolean", line(k, 64))
		}
	}
	return t.tags, nil
}

// jsonKeyOrder is the keys of a JSON object in the order they are written, each once.
func jsonKeyOrder(s string) []string {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := tok.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// execReason is why field's template failed on a body, for the refusal, which the
// answer, the hook's log and the server's log show: the template's own place (line,
// column, the action) and a reason that names no value of the body. text/template's
// messages may quote one ("range can't iterate over 4242-…", "non-comparable types
// …: value"), so only reasons known to name none are kept as they are.
func execReason(field string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "template: ")
	where := ""
	// "event:1:5: executing "event" at <num .amount>: error calling num: …"
	if loc, rest, ok := strings.Cut(msg, ": executing "); ok {
		if _, action, ok := strings.Cut(rest, " at <"); ok {
			if node, reason, ok := strings.Cut(action, ">: "); ok {
				where = fmt.Sprintf(" (line %s, at <%s>)", strings.Replace(strings.TrimPrefix(loc, field+":"), ":", ", column ", 1), node)
				msg = reason
			}
		}
	} else {
		msg = strings.TrimPrefix(msg, field+": ")
	}
	return "template." + field + where + ": " + safeReason(msg)
}

// keptReasons start text/template's reasons that name only the template's own words
// and Go types; keptCalls those of the builtins' errors kept up to their first ": "
// (which may be followed by a number of the body).
var (
	keptReasons = []string{"can't evaluate field ", "wrong type for value; ", "invalid value; expected ",
		"wrong number of args for ", "nil pointer evaluating ", "map has no entry for key ", "can't give argument to non-function ",
		"can't handle ", "can't print "}
	keptCalls = []string{"incompatible types for comparison", "invalid type for comparison", "missing argument for comparison",
		"index out of range", "cannot index slice/array with", "can't index item of type", "index of ", "value is nil; should be of type",
		"value has type", "len of ", "invalid slice index", "can't slice item of type", "slice of ", "too many slice indexes",
		"cannot 3-index slice a string", "wrong number of args for "}
)

func safeReason(msg string) string {
	for _, k := range keptReasons {
		if strings.HasPrefix(msg, k) {
			return msg
		}
	}
	if rest, ok := strings.CutPrefix(msg, "error calling "); ok {
		call, reason, _ := strings.Cut(rest, ": ")
		if _, ours := templateFuncs(nil)[call]; ours && !builtinText[call] {
			return msg // num, json, lower, …: errors that name no value
		}
		for _, k := range keptCalls {
			if strings.HasPrefix(reason, k) {
				first, _, _ := strings.Cut(reason, ": ")
				return "error calling " + call + ": " + first
			}
		}
		return "error calling " + call + " (the reason is not shown: it could quote the body)"
	}
	switch {
	case strings.HasPrefix(msg, "range can't iterate over "):
		return "range over a value that is not a list or an object"
	case strings.HasPrefix(msg, "if/with can't use "):
		return "if or with on a value it cannot use"
	}
	return "it failed on this body (the reason is not shown: it could quote the body)"
}

// builtinText are the functions of templateFuncs that wrap text/template's own, whose
// errors are not ours.
var builtinText = map[string]bool{"print": true, "printf": true, "println": true, "html": true, "js": true, "urlquery": true}
