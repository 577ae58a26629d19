package api

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// The answers written without reflection are what encoding/json wrote before, byte
// for byte, newline included: clients and kept idempotency answers see no change.
func TestInsightJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	text := func() string {
		pieces := []string{"a", " ", "\"", "\\", "<", "&", "\x00", "\n", "\u2028", "é", "🎉", "\xff", "$", "%"}
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		return sb.String()
	}
	for range 5000 {
		in := insightJSON{Project: text(), Title: text(), Value: text(), Prefix: text(), Suffix: text(), Icon: text(),
			Change: text(), UpdatedAt: time.UnixMilli(r.Int64N(4e12)).UTC()}
		ev := tidings.EventJSON{ID: text(), Project: text(), Event: text(), Tags: tidings.Tags{{Key: text(), Kind: tidings.KindString, Value: text()}},
			CreatedAt: time.UnixMilli(r.Int64N(4e12)).UTC()}
		for _, v := range []any{in, ev} {
			var want bytes.Buffer
			if err := newEncoder(&want).Encode(v); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			if err := writeJSON(rec, v); err != nil {
				t.Fatal(err)
			}
			if rec.Body.String() != want.String() {
				t.Fatalf("%+v:\nwritten       %q\nencoding/json %q", v, rec.Body.String(), want.String())
			}
			kept, err := encodeJSON(v)
			if err != nil || string(kept) != want.String() {
				t.Fatalf("kept answer %q, want %q", kept, want.String())
			}
			if !json.Valid(kept) {
				t.Fatalf("invalid: %s", kept)
			}
		}
	}
}
