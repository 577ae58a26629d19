package tidings

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// encodingJSON is v as the API wrote it before AppendJSON: encoding/json without HTML
// escaping, less the newline.
func encodingJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// randomText mixes the characters JSON escapes or keeps: controls, quotes, HTML
// characters, U+2028, multi-byte runes, emoji and invalid UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", " ", "\"", "\\", "/", "<", ">", "&", "\x00", "\x01", "\b", "\f", "\n", "\r", "\t", "\x1f", "\x7f",
		"é", "ß", "日本", "\u2028", "\u2029", "\u2027", "🎉", "👍🏽", "\xff", "\xc3", "\xed\xa0\x80", "\ufffd", "{}", "0"}
	var sb strings.Builder
	for range r.IntN(12) {
		sb.WriteString(pieces[r.IntN(len(pieces))])
	}
	return sb.String()
}

func TestAppendJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		s := randomText(r)
		if got, want := string(AppendJSONString(nil, s)), encodingJSON(t, s); got != want {
			t.Fatalf("string %q: appended %s, encoding/json %s", s, got, want)
		}
		var tags Tags
		for range r.IntN(4) {
			switch r.IntN(3) {
			case 0:
				tags = append(tags, Tag{Key: randomText(r), Kind: KindString, Value: randomText(r)})
			case 1:
				tags = append(tags, Tag{Key: randomText(r), Kind: KindNumber, Value: "-12.5e3"})
			default:
				tags = append(tags, Tag{Key: randomText(r), Kind: KindBool, Value: "true"})
			}
		}
		if i%7 == 0 {
			tags = nil
		}
		e := EventJSON{ID: "0193c5a4-8f00-7000-8000-000000000001", Project: randomText(r), Channel: randomText(r), Event: randomText(r),
			Description: randomText(r), Icon: randomText(r), Notify: r.IntN(2) == 0, Tags: tags, Parser: "markdown",
			UserID: []string{"", randomText(r)}[r.IntN(2)], Timestamp: r.Int64N(4e9),
			CreatedAt: time.UnixMilli(r.Int64N(4e12)).UTC()}
		if r.IntN(5) == 0 {
			e.CreatedAt = time.Unix(r.Int64N(4e9), 0).UTC() // whole seconds: no fraction written
		}
		got := string(e.AppendJSON(nil))
		if want := encodingJSON(t, e); got != want {
			t.Fatalf("event %+v:\nappended      %s\nencoding/json %s", e, got, want)
		}
		if !utf8.ValidString(got) || !json.Valid([]byte(got)) {
			t.Fatalf("not valid JSON: %s", got)
		}
	}
}
