package api

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// scanObject is decodeObject's fast path: one pass over the body finds the members
// of the top-level object, their raw values sliced from data (not copied), then
// json.Valid checks the whole text once. It answers ok only for what the slow path
// accepts, with the same members (FuzzScanObject compares them); anything it does not
// accept goes to the slow path, which words the error. The slow path's json.Decoder
// token walk allocated for every token: this one allocates the keys and the slice.
func scanObject(data []byte) (object, bool) {
	if !utf8.Valid(data) || loneSurrogate(data) >= 0 {
		return nil, false
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	obj := make(object, 0, 12)
	var seen map[string]bool // for objects too large to compare keys pairwise
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return nil, false
			}
			end := stringEnd(data, i)
			if end < 0 {
				return nil, false
			}
			key, ok := unquote(data[i:end])
			if !ok {
				return nil, false
			}
			if len(obj) < 16 {
				for _, m := range obj {
					if m.key == key {
						return nil, false // duplicate: the slow path says so
					}
				}
			} else {
				if seen == nil {
					seen = make(map[string]bool, 2*len(obj))
					for _, m := range obj {
						seen[m.key] = true
					}
				}
				if seen[key] {
					return nil, false
				}
				seen[key] = true
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return nil, false
			}
			i = skipSpace(data, i+1)
			vend := valueEnd(data, i)
			if vend <= i {
				return nil, false
			}
			obj = append(obj, member{key, data[i:vend]})
			i = skipSpace(data, vend)
			if i >= len(data) {
				return nil, false
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return nil, false
			}
			i = skipSpace(data, i+1)
		}
	}
	if skipSpace(data, i) != len(data) || !json.Valid(data) {
		return nil, false
	}
	return obj, true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just after the string starting at data[i] ('"'), or -1.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index just after the value starting at data[i], or -1. It
// only finds the value's extent; json.Valid checks its text afterwards.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := stringEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// unquote returns the text of a JSON string literal (quotes included in raw). Without
// a backslash a valid literal is its text; with one, encoding/json decodes it.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 {
				return "", false // control characters must be escaped
			}
		}
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
