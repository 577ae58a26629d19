package api

import (
	"net/http"
	"time"

	"github.com/tidings-dev/tidings"
)

var (
	insightFields   = fieldOrder{"project", "title", "value", "change", "prefix", "suffix", "icon"}
	incrementFields = fieldOrder{"project", "title", "icon", "value"}
)

// optional reads an optional string as a pointer: nil keeps the stored value.
func (f *fields) optional(key string) *string {
	if v, set := f.str(key); set {
		return &v
	}
	return nil
}

// decodeInsight turns a POST /v1/insight body into a checked change. A value of the
// form {"$inc": N} without a change is an increment, as PATCH takes it (a community
// SDK sends it by POST); any other value still needs its change.
//
// changeDefault, called only when the body names no change, returns what the project
// takes a missing change for ("" when it takes none).
func decodeInsight(body []byte, changeDefault func(project string) string) (*tidings.InsightChange, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var value []byte
	hasChange := false
	for _, m := range obj {
		switch m.key {
		case "value":
			value = m.raw
		case "change":
			hasChange = true
		}
	}
	if len(value) > 0 && value[0] == '{' && !hasChange {
		return decodeIncrement(body)
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	c := &tidings.InsightChange{
		Project: f.required("project"),
		Title:   f.required("title"),
		Prefix:  f.optional("prefix"),
		Suffix:  f.optional("suffix"),
		Icon:    f.optional("icon"),
	}
	c.Change, _ = f.str("change")
	if !hasChange && c.Project != "" && changeDefault != nil {
		c.Change = changeDefault(c.Project)
	}
	if raw, ok := f.get("value"); ok {
		if c.Value, c.ValueKind = scalarOf(raw); c.ValueKind == "" {
			f.wrongType("value", "a string, number or boolean")
		}
	}
	f.rejectUnknown(insightFields.String())
	c.Check(&p)
	p.SortBy(insightFields)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeIncrement turns a PATCH /v1/insight body, as the LogSnag SDKs send it
// ({"project","title","icon"?,"value":{"$inc":N}}), into an increment.
func decodeIncrement(body []byte) (*tidings.InsightChange, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	c := &tidings.InsightChange{
		Project: f.required("project"),
		Title:   f.required("title"),
		Icon:    f.optional("icon"),
		Change:  tidings.ChangeIncrement,
	}
	raw, ok := f.get("value")
	switch {
	case !ok:
		p.Add("value", "required", `is required, as {"$inc": <number>}`)
	case raw[0] != '{':
		p.Add("value", "type", `must be an object {"$inc": <number>}`)
	default:
		inner, err := decodeObject(raw)
		if err != nil {
			p.Add("value", "invalid", "%s", tidings.ErrorMessage(err))
			break
		}
		vf := newFields(inner, "value.", &p)
		if inc, ok := vf.get("$inc"); ok {
			if c.Value, c.ValueKind = scalarOf(inc); c.ValueKind == "" {
				vf.wrongType("$inc", "a number")
			}
		} else {
			p.Add("value.$inc", "required", "is required")
		}
		vf.rejectUnknown("$inc")
	}
	f.rejectUnknown(incrementFields.String())
	c.Check(&p)
	p.SortBy(incrementFields)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Server) handleInsight(w http.ResponseWriter, r *http.Request) error {
	return s.publishInsight(w, r, func(body []byte, tok *tidings.Token) (*tidings.InsightChange, error) {
		return decodeInsight(body, func(project string) string {
			p, err := s.store.FindProject(r.Context(), tok.AccountID, project)
			if err != nil {
				return "" // an unknown project is said by the update itself
			}
			return p.InsightChangeDefault
		})
	})
}

func (s *Server) handleIncrement(w http.ResponseWriter, r *http.Request) error {
	return s.publishInsight(w, r, func(body []byte, _ *tidings.Token) (*tidings.InsightChange, error) { return decodeIncrement(body) })
}

func (s *Server) publishInsight(w http.ResponseWriter, r *http.Request, decode func([]byte, *tidings.Token) (*tidings.InsightChange, error)) error {
	tok, body, g, err := s.keyedRequest(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	defer g.done()
	c, err := decode(body, tok)
	if err != nil {
		return err
	}
	if err := tok.AllowPublish(tidings.RoleInsight, c.Project, ""); err != nil {
		return err
	}
	c.Key = keyFor(g, func(in *tidings.Insight) any { return insightOut(in) })
	in, err := s.store.ApplyInsight(r.Context(), tok.AccountID, c)
	if err == tidings.ErrKeyTaken {
		return g.lost(w, r)
	}
	if err != nil {
		return err
	}
	s.broker.Publish(tidings.Notice{AccountID: tok.AccountID, Insight: in})
	return g.write(w, insightOut(in))
}

// insightJSON is an insight as the API shows it; value is always a string (exact).
type insightJSON struct {
	Project   string    `json:"project"`
	Title     string    `json:"title"`
	Value     string    `json:"value"`
	Prefix    string    `json:"prefix"`
	Suffix    string    `json:"suffix"`
	Icon      string    `json:"icon"`
	Change    string    `json:"change"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AppendJSON appends the insight as encoding/json writes it (the answer of every
// increment; TestInsightJSONIsEncodingJSON).
func (in insightJSON) AppendJSON(b []byte) []byte {
	b = append(b, `{"project":`...)
	b = tidings.AppendJSONString(b, in.Project)
	b = append(b, `,"title":`...)
	b = tidings.AppendJSONString(b, in.Title)
	b = append(b, `,"value":`...)
	b = tidings.AppendJSONString(b, in.Value)
	b = append(b, `,"prefix":`...)
	b = tidings.AppendJSONString(b, in.Prefix)
	b = append(b, `,"suffix":`...)
	b = tidings.AppendJSONString(b, in.Suffix)
	b = append(b, `,"icon":`...)
	b = tidings.AppendJSONString(b, in.Icon)
	b = append(b, `,"change":`...)
	b = tidings.AppendJSONString(b, in.Change)
	b = append(b, `,"updated_at":"`...)
	b = in.UpdatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

func insightOut(in *tidings.Insight) insightJSON {
	return insightJSON{Project: in.Project, Title: in.Title, Value: in.Value, Prefix: in.Prefix, Suffix: in.Suffix,
		Icon: in.Icon, Change: in.Change, UpdatedAt: in.UpdatedAt}
}
