package tidings

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The answers of the publishing path are written by appending to a byte slice rather
// than by encoding/json's reflection (docs/performance.md, "The request path"). What
// they append is byte for byte what encoding/json writes with SetEscapeHTML(false);
// TestAppendJSONIsEncodingJSON holds them to it.

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string, escaped as encoding/json escapes it
// without HTML escaping: quotes, backslashes, control characters, U+2028 and U+2029;
// invalid UTF-8 becomes U+FFFD.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendJSON appends the tags as one JSON object, in order, each value in its kind.
func (t Tags) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, tag := range t {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, tag.Key)
		b = append(b, ':')
		switch tag.Kind {
		case KindNumber, KindBool:
			b = append(b, tag.Value...)
		default:
			b = AppendJSONString(b, tag.Value)
		}
	}
	return append(b, '}')
}

// AppendJSON appends the event as encoding/json writes it (without the newline).
func (e EventJSON) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = AppendJSONString(b, e.ID)
	b = append(b, `,"project":`...)
	b = AppendJSONString(b, e.Project)
	b = append(b, `,"channel":`...)
	b = AppendJSONString(b, e.Channel)
	b = append(b, `,"event":`...)
	b = AppendJSONString(b, e.Event)
	b = append(b, `,"description":`...)
	b = AppendJSONString(b, e.Description)
	b = append(b, `,"icon":`...)
	b = AppendJSONString(b, e.Icon)
	b = append(b, `,"notify":`...)
	b = strconv.AppendBool(b, e.Notify)
	b = append(b, `,"tags":`...)
	b = e.Tags.AppendJSON(b) // nil too: encoding/json calls MarshalJSON, "{}"
	b = append(b, `,"parser":`...)
	b = AppendJSONString(b, e.Parser)
	if e.UserID != "" {
		b = append(b, `,"user_id":`...)
		b = AppendJSONString(b, e.UserID)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, e.Timestamp, 10)
	b = append(b, `,"created_at":"`...)
	b = e.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","priority":`...)
	b = AppendJSONString(b, e.Priority)
	if e.URL != "" {
		b = append(b, `,"url":`...)
		b = AppendJSONString(b, e.URL)
	}
	if len(e.Actions) > 0 {
		b = append(b, `,"actions":[`...)
		for i, a := range e.Actions {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"label":`...)
			b = AppendJSONString(b, a.Label)
			if a.URL != "" {
				b = append(b, `,"url":`...)
				b = AppendJSONString(b, a.URL)
			}
			if a.ID != "" {
				b = append(b, `,"id":`...)
				b = AppendJSONString(b, a.ID)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if e.Key != "" {
		b = append(b, `,"key":`...)
		b = AppendJSONString(b, e.Key)
	}
	if e.Ack != nil {
		b = append(b, `,"acknowledged":{"by":`...)
		b = AppendJSONString(b, e.Ack.By)
		b = append(b, `,"at":"`...)
		b = e.Ack.At.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `"}`...)
	}
	return append(b, '}')
}
