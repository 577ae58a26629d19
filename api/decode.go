package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// MaxBodyBytes is the largest request body accepted (a batch takes MaxBatchBytes).
const MaxBodyBytes = 64 << 10

// readBody checks the media type and reads at most limit bytes: a larger body is
// refused from its Content-Length without reading it, or as soon as the limit is
// crossed while reading.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // the common case, without parsing
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, tidings.Errorf(tidings.EUnsupportedMediaType,
				"send the body as JSON with the header Content-Type: application/json")
		}
	}
	if r.ContentLength > limit {
		// Answer now and close: without "Connection: close" net/http would first
		// read up to 256 KiB of the unread body, waiting for a client that holds it back.
		w.Header().Set("Connection", "close")
		return nil, tooLarge(limit)
	}
	if r.ContentLength >= 0 {
		// A known length within the limit: read it into a buffer of that size at once
		// (net/http ends the body there).
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, tidings.Errorf(tidings.EInvalidJSON, "the request body could not be read")
		}
		return body, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge(limit)
	}
	if err != nil {
		return nil, tidings.Errorf(tidings.EInvalidJSON, "the request body could not be read")
	}
	return body, nil
}

func tooLarge(limit int64) error {
	return tidings.Errorf(tidings.EPayloadTooLarge, "the request body is larger than %d KiB", limit>>10)
}

// member is one key and its raw value, in the order sent.
type member struct {
	key string
	raw json.RawMessage
}

// object is a JSON object decoded one level deep.
type object []member

// decodeObject parses data as exactly one JSON object of valid UTF-8, rejecting
// duplicate keys and anything after the object.
func decodeObject(data []byte) (object, error) {
	if obj, ok := scanObject(data); ok {
		return obj, nil
	}
	return decodeObjectSlow(data)
}

// decodeObjectSlow walks the body with encoding/json's tokens: the reference that
// scanObject must agree with, and the one that words every error.
func decodeObjectSlow(data []byte) (object, error) {
	if !utf8.Valid(data) {
		return nil, tidings.Errorf(tidings.EInvalidJSON, "the body is not valid UTF-8")
	}
	if at := loneSurrogate(data); at >= 0 {
		return nil, tidings.Errorf(tidings.EInvalidJSON,
			"the body is not valid JSON text: a \\u escape at byte %d is half of a surrogate pair, which is no character", at)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	obj, err := readObject(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, tidings.Errorf(tidings.EInvalidJSON, "unexpected data after the JSON object")
	}
	return obj, nil
}

// loneSurrogate returns the offset of the first \uD800–\uDFFF escape that is not part of
// a high-low pair, or -1. encoding/json would turn it into U+FFFD without a word.
// Outside strings valid JSON has no backslash, so escapes need no string tracking.
func loneSurrogate(data []byte) int {
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			continue
		}
		if data[i+1] != 'u' {
			i++ // \\, \" and the like: skip the escaped byte
			continue
		}
		r, ok := hex4(data, i+2)
		switch {
		case !ok || r < 0xD800 || r > 0xDFFF:
		case r <= 0xDBFF && i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u':
			if low, ok := hex4(data, i+8); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 11 // the pair
				continue
			}
			return i
		default:
			return i
		}
		i += 5
	}
	return -1
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(data[at:at+4]), 16, 32)
	return rune(n), err == nil
}

func readObject(dec *json.Decoder) (object, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if tok != json.Delim('{') {
		return nil, tidings.Errorf(tidings.EInvalidJSON, "the body must be a JSON object")
	}
	var obj object
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key := tok.(string) // inside an object the decoder yields only string keys here
		if seen[key] {
			return nil, tidings.Errorf(tidings.EInvalidJSON, "duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err)
		}
		obj = append(obj, member{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err)
	}
	return obj, nil
}

func syntaxError(err error) error {
	msg := err.Error()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg = se.Error() + " (at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the JSON ends too early"
	}
	return tidings.Errorf(tidings.EInvalidJSON, "the body is not valid JSON: %s", msg)
}

// fields reads typed members of an object and collects every problem.
type fields struct {
	p      *tidings.Problems
	prefix string
	obj    object         // its keys are unique (decodeObject refuses a key sent twice)
	used   []bool         // by member: a reader asked for it
	index  map[string]int // by key, for a large object only
}

// scanMembers is the largest object whose members are found by a scan: our bodies have
// a dozen, and a map per object cost more than the scans. A larger (hostile) one gets a
// map, so that its cost stays linear in its size.
const scanMembers = 16

func newFields(obj object, prefix string, p *tidings.Problems) *fields {
	f := &fields{p: p, prefix: prefix, obj: obj, used: make([]bool, len(obj))}
	if len(obj) > scanMembers {
		f.index = make(map[string]int, len(obj))
		for i, m := range obj {
			f.index[m.key] = i
		}
	}
	return f
}

// member finds key's member, marking it asked for; -1 if absent.
func (f *fields) member(key string) int {
	if f.index != nil {
		i, ok := f.index[key]
		if !ok {
			return -1
		}
		f.used[i] = true
		return i
	}
	for i := range f.obj {
		if f.obj[i].key == key {
			f.used[i] = true
			return i
		}
	}
	return -1
}

// get returns the raw value of key; null counts as absent.
func (f *fields) get(key string) (json.RawMessage, bool) {
	i := f.member(key)
	if i < 0 || string(f.obj[i].raw) == "null" {
		return nil, false
	}
	return f.obj[i].raw, true
}

func (f *fields) path(key string) string { return f.prefix + key }

func (f *fields) wrongType(key, want string) {
	f.p.Add(f.path(key), "type", "must be %s", want)
}

// str reads an optional string; set reports whether it was present.
func (f *fields) str(key string) (v string, set bool) {
	raw, ok := f.get(key)
	if !ok {
		return "", false
	}
	v, ok = unquote(raw)
	if !ok {
		f.wrongType(key, "a string")
		return "", false
	}
	return v, true
}

// required reads a required string, reporting it when missing.
func (f *fields) required(key string) string {
	if _, ok := f.get(key); !ok {
		f.p.Add(f.path(key), "required", "is required")
		return ""
	}
	v, _ := f.str(key)
	return v
}

func (f *fields) boolean(key string) bool {
	raw, ok := f.get(key)
	if !ok {
		return false
	}
	switch string(raw) {
	case "true":
		return true
	case "false":
		return false
	}
	f.wrongType(key, "true or false")
	return false
}

// scalar reads a string, number or boolean as text with its kind; kind is "" when absent.
func (f *fields) scalar(key string) (text, kind string) {
	raw, ok := f.get(key)
	if !ok {
		return "", ""
	}
	return scalarOf(raw)
}

func scalarOf(raw json.RawMessage) (text, kind string) {
	switch c := raw[0]; {
	case c == '"':
		s, _ := unquote(raw)
		return s, tidings.KindString
	case c == 't' || c == 'f':
		return string(raw), tidings.KindBool
	case c == '-' || c >= '0' && c <= '9':
		return string(raw), tidings.KindNumber
	}
	return "", "" // object, array or null
}

// rejectUnknown reports every member that no reader asked for, naming the allowed ones.
func (f *fields) rejectUnknown(allowed string) {
	for i, m := range f.obj {
		if !f.used[i] {
			f.p.Add(f.path(m.key), "unknown_field", "unknown field (allowed: %s)", allowed)
		}
	}
}

// fieldOrder lists a body's fields in the order the reference documents them.
type fieldOrder []string

func (o fieldOrder) String() string { return strings.Join(o, ", ") }
