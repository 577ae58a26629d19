// The check pass reads each event's tags JSON with this small scanner, in Go.

package sqlite

import (
	"bytes"
	"encoding/json"
)

// eachTag calls fn with each member of a flat JSON object (an event's tags): its key,
// and its value as the tag dictionary keeps it (a string's text, a number's literal, a
// boolean's word). It reports false for anything else.
func eachTag(js []byte, fn func(key, value []byte)) bool {
	i := skipSpace(js, 0)
	if i >= len(js) || js[i] != '{' {
		return false
	}
	i = skipSpace(js, i+1)
	if i < len(js) && js[i] == '}' {
		return skipSpace(js, i+1) == len(js)
	}
	for {
		key, next, ok := jsonString(js, i)
		if !ok {
			return false
		}
		i = skipSpace(js, next)
		if i >= len(js) || js[i] != ':' {
			return false
		}
		i = skipSpace(js, i+1)
		if i >= len(js) {
			return false
		}
		var value []byte
		switch c := js[i]; {
		case c == '"':
			if value, next, ok = jsonString(js, i); !ok {
				return false
			}
		case c == 't' && bytes.HasPrefix(js[i:], []byte("true")), c == 'f' && bytes.HasPrefix(js[i:], []byte("false")):
			next = i + 4
			if c == 'f' {
				next++
			}
			value = js[i:next]
		case c == '-' || c >= '0' && c <= '9':
			next = i
			for next < len(js) && bytes.IndexByte([]byte("+-.0123456789eE"), js[next]) >= 0 {
				next++
			}
			value = js[i:next]
		default:
			return false // null, an object or an array: not a tag value
		}
		fn(key, value)
		i = skipSpace(js, next)
		if i >= len(js) {
			return false
		}
		switch js[i] {
		case ',':
			i = skipSpace(js, i+1)
		case '}':
			return skipSpace(js, i+1) == len(js)
		default:
			return false
		}
	}
}

func skipSpace(js []byte, i int) int {
	for i < len(js) && (js[i] == ' ' || js[i] == '\t' || js[i] == '\n' || js[i] == '\r') {
		i++
	}
	return i
}

// jsonString reads the JSON string at js[i] and returns its text and the index after it.
func jsonString(js []byte, i int) ([]byte, int, bool) {
	if i >= len(js) || js[i] != '"' {
		return nil, 0, false
	}
	escaped := false
	for j := i + 1; j < len(js); j++ {
		switch js[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			if !escaped {
				return js[i+1 : j], j + 1, true
			}
			var s string
			if err := json.Unmarshal(js[i:j+1], &s); err != nil {
				return nil, 0, false
			}
			return []byte(s), j + 1, true
		}
	}
	return nil, 0, false
}
