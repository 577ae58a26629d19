package tidings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Tag limits.
const (
	MaxTags         = 32
	MaxTagValueLen  = 1024
	MaxTagNumberLen = 32 // characters of a number as sent: strict JSON readers choke on more
)

// Kinds of JSON value a tag or insight value can be.
const (
	KindString = "string"
	KindNumber = "number"
	KindBool   = "bool"
)

// checkTagNumber refuses numbers that a reader of the API could not decode: beyond the
// range of a float64 (1e400) or longer than MaxTagNumberLen characters.
func checkTagNumber(p *Problems, path, text string) {
	if len(text) > MaxTagNumberLen {
		p.Add(path, "too_long", "a number must be at most %d characters as sent (send long numbers as strings)", MaxTagNumberLen)
		return
	}
	if f, err := strconv.ParseFloat(text, 64); err != nil || math.IsInf(f, 0) {
		p.Add(path, "range", "must be a finite number (send it as a string to keep it exactly)")
	}
}

// Tag is one key/value pair of an event. Value holds the text of the value: a string as
// it is, a number as its JSON literal, a boolean as "true" or "false". Filters match on it.
type Tag struct {
	Key   string
	Kind  string
	Value string
}

// Tags keeps the order in which the client sent them.
type Tags []Tag

// Get returns the tag with the given key.
func (t Tags) Get(key string) (Tag, bool) {
	for _, tag := range t {
		if tag.Key == key {
			return tag, true
		}
	}
	return Tag{}, false
}

// MarshalJSON writes the tags as one JSON object, in order, each value in its own kind.
func (t Tags) MarshalJSON() ([]byte, error) { return t.JSON(), nil }

// JSON is the tags as stored: MarshalJSON's object without HTML escaping, so that a
// "<" takes one byte, not six ("\u003c"); json.Marshal would escape it again.
func (t Tags) JSON() []byte { return t.AppendJSON(make([]byte, 0, 16+32*len(t))) }

// UnmarshalJSON reads what MarshalJSON wrote, keeping the order. It is used to read
// stored tags back; requests are decoded by the API's strict decoder.
func (t *Tags) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("tags: want an object")
	}
	out := Tags{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		vt, err := dec.Token()
		if err != nil {
			return err
		}
		tag := Tag{Key: kt.(string)}
		switch v := vt.(type) {
		case string:
			tag.Kind, tag.Value = KindString, v
		case json.Number:
			tag.Kind, tag.Value = KindNumber, v.String()
		case bool:
			tag.Kind, tag.Value = KindBool, strconv.FormatBool(v)
		default:
			return fmt.Errorf("tags: value of %q has an unsupported type", tag.Key)
		}
		out = append(out, tag)
	}
	*t = out
	return nil
}

// checkTags checks key/value pairs (an event's tags, a user's properties) under path:
// at most max, keys by the naming rule, strings by the label rule and length, numbers
// readable.
func checkTags(p *Problems, path string, tags Tags, max int, noun string) {
	if len(tags) > max {
		p.Add(path, "too_many", "at most %d %ss are allowed (got %d)", max, noun, len(tags))
	}
	for _, tag := range tags {
		at := path + "." + tag.Key
		if !ValidName(tag.Key) {
			p.Add(at, "pattern", "%s key %s", noun, NameRuleMessage)
		}
		switch tag.Kind {
		case KindString:
			if n := utf8.RuneCountInString(tag.Value); n > MaxTagValueLen {
				p.Add(at, "too_long", "must be at most %d characters (got %d)", MaxTagValueLen, n)
			}
			checkText(p, at, tag.Value, ruleLabel)
		case KindNumber:
			checkTagNumber(p, at, tag.Value)
		}
	}
}

// checkID checks an application's identifier of a user or group (user_id, group_id):
// required by the caller, at most MaxUserIDLen characters, one visible line.
func checkID(p *Problems, path, id string) {
	if n := utf8.RuneCountInString(id); n > MaxUserIDLen {
		p.Add(path, "too_long", "must be at most %d characters (got %d)", MaxUserIDLen, n)
	}
	checkText(p, path, id, ruleLine)
	checkVisible(p, path, id)
}
