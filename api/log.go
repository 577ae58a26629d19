package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/tidings-dev/tidings"
)

var logFields = fieldOrder{"project", "channel", "event", "description", "icon", "notify", "tags", "parser", "user_id", "timestamp",
	"priority", "url", "actions", "key"}

// logOrder ranks a /v1/log body's problems: logFields, each action's beside "actions".
var logOrder = fieldOrder{"project", "channel", "event", "description", "icon", "notify", "tags", "parser", "user_id", "timestamp",
	"priority", "url", "actions", "actions.0", "actions.1", "actions.2", "key"}

// decodeLog turns a /v1/log body into a checked event, reporting every problem at once.
func decodeLog(body []byte, now time.Time) (*tidings.NewEvent, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	e := &tidings.NewEvent{
		Project: f.required("project"),
		Channel: f.required("channel"),
		Event:   f.required("event"),
		Notify:  f.boolean("notify"),
	}
	e.Description, _ = f.str("description")
	e.Icon, _ = f.str("icon")
	e.Parser, _ = f.str("parser")
	if uid, set := f.str("user_id"); set {
		if uid == "" {
			p.Add("user_id", "required", "must not be empty when sent")
		}
		e.UserID = uid
	}
	if raw, ok := f.get("tags"); ok {
		e.Tags = decodeTags(raw, &p)
	}
	if raw, ok := f.get("timestamp"); ok {
		e.Timestamp = decodeTimestamp(raw, &p)
	}
	decodeIntent(f, e, &p)
	f.rejectUnknown(logFields.String())
	e.Check(&p, now)
	p.SortBy(logOrder)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return e, nil
}

func decodeTags(raw []byte, p *tidings.Problems) tidings.Tags {
	if raw[0] != '{' {
		p.Add("tags", "type", "must be an object of key/value pairs")
		return nil
	}
	obj, err := decodeObject(raw)
	if err != nil {
		p.Add("tags", "invalid", "%s", tidings.ErrorMessage(err))
		return nil
	}
	tags := make(tidings.Tags, 0, len(obj))
	for _, m := range obj {
		text, kind := scalarOf(m.raw)
		if kind == "" {
			p.Add("tags."+m.key, "type", "must be a string, number or boolean")
			continue
		}
		tags = append(tags, tidings.Tag{Key: m.key, Kind: kind, Value: text})
	}
	return tags
}

func decodeTimestamp(raw []byte, p *tidings.Problems) time.Time {
	return decodeTimestampAt(raw, p, "timestamp")
}

// decodeTimestampAt reads unix seconds, reporting a problem at path (views.3.timestamp).
func decodeTimestampAt(raw []byte, p *tidings.Problems, path string) time.Time {
	text, kind := scalarOf(raw)
	if kind != tidings.KindNumber {
		p.Add(path, "type", "must be a number of unix seconds")
		return time.Time{}
	}
	secs, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(secs, 0) || secs < 0 || secs > 1e11 {
		msg := "must be unix seconds between 946684800 (2000-01-01) and now + 24 hours"
		if secs >= 946684800e3 && secs < 1e14 { // Date.now() and the like
			msg += fmt.Sprintf("; %s looks like milliseconds: divide by 1000", text)
		}
		p.Add(path, "range", "%s", msg)
		return time.Time{}
	}
	return time.UnixMilli(int64(math.Round(secs * 1000))).UTC()
}

// handleLog publishes one event: POST /v1/log.
func (s *Server) handleLog(w http.ResponseWriter, r *http.Request) error {
	tok, body, g, err := s.keyedRequest(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	defer g.done()
	e, err := decodeLog(body, s.now())
	if err != nil {
		return err
	}
	if err := tok.AllowEvent(e); err != nil {
		return err
	}
	e.Key = keyFor(g, func(ev *tidings.Event) any { return eventOut(ev) })
	ev, err := s.store.PublishEvent(r.Context(), tok.AccountID, e)
	if err == tidings.ErrKeyTaken {
		return g.lost(w, r)
	}
	if err != nil {
		return err
	}
	s.broker.Publish(tidings.Notice{AccountID: tok.AccountID, Event: ev})
	return g.write(w, eventOut(ev))
}

// eventOut is an event as the API shows it.
func eventOut(ev *tidings.Event) tidings.EventJSON { return ev.JSON() }
