package api

import (
	"strconv"

	"github.com/tidings-dev/tidings"
)

// decodeIntent reads the optional intent fields of a /v1/log event (priority, url,
// actions, key) into e; the domain's Check validates their values. An event without
// them costs four scans of its members and nothing else.
func decodeIntent(f *fields, e *tidings.NewEvent, p *tidings.Problems) {
	if raw, ok := f.get("priority"); ok {
		switch text, kind := scalarOf(raw); kind {
		case tidings.KindString:
			if text == "" {
				p.Add("priority", "enum", `must be "min", "low", "default", "high" or "urgent" (or 1 to 5)`)
			}
			e.Priority = text
		case tidings.KindNumber:
			if _, ok := tidings.ParsePriority(text); !ok { // 6, 2.5, 1e0: not one of the five
				p.Add("priority", "enum", `must be "min", "low", "default", "high" or "urgent", or a whole number from 1 to 5 (got %s)`, text)
				break
			}
			e.Priority = text
		default:
			f.wrongType("priority", `one of "min", "low", "default", "high", "urgent", or a number from 1 to 5`)
		}
	}
	if v, set := f.str("url"); set {
		if v == "" {
			tidings.CheckLink(p, "url", v)
		}
		e.URL = v
	}
	if v, set := f.str("key"); set {
		if v == "" {
			p.Add("key", "required", "must not be empty when sent: 1 to %d printable characters", tidings.MaxKeyLen)
		}
		e.ThreadKey = v
	}
	if raw, ok := f.get("actions"); ok {
		e.Actions = decodeActions(raw, p)
	}
}

var actionFields = fieldOrder{"label", "url", "id"}

// decodeActions reads the actions array. Past tidings.MaxActions only the count
// matters (Check reports it): those elements are not decoded.
func decodeActions(raw []byte, p *tidings.Problems) []tidings.Action {
	if raw[0] != '[' {
		p.Add("actions", "type", `must be an array of buttons, each {"label","url"} or {"label","id"}`)
		return nil
	}
	elems := splitArray(raw)
	actions := make([]tidings.Action, len(elems))
	for i, el := range elems {
		if i >= tidings.MaxActions {
			break
		}
		path := "actions." + strconv.Itoa(i)
		if el[0] != '{' {
			p.Add(path, "type", `must be an object: {"label","url"} or {"label","id"}`)
			continue
		}
		obj, err := decodeObject(el)
		if err != nil {
			p.Add(path, "invalid", "%s", tidings.ErrorMessage(err))
			continue
		}
		f := newFields(obj, path+".", p)
		a := &actions[i]
		a.Label, _ = f.str("label")
		a.URL, _ = f.str("url")
		a.ID, _ = f.str("id")
		f.rejectUnknown(actionFields.String())
	}
	return actions
}
