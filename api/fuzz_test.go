package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tidings-dev/tidings"
)

// FuzzDecodeLog: decoding never panics, answers only with codes of the contract, and an
// accepted event satisfies every rule when checked again.
func FuzzDecodeLog(f *testing.F) {
	for _, s := range []string{
		`{"project":"my-saas","channel":"payments","event":"New Subscription","icon":"💰","notify":true,"tags":{"plan":"premium","n":1,"b":true}}`,
		`{"project":"my-saas","channel":"payments","event":"x","timestamp":1795320000.5,"user_id":"u","parser":"markdown"}`,
		`{"project":"a","project":"b"}`, `{"tags":{"a":null}}`, `[]`, `{"a":1} 2`, "{\"event\":\"\xff\"}", `{"icon":":moneybag:"}`,
		`{"project":"my-saas","channel":"payments","event":"\u0000"}`, `{"tags":{"k":{"x":[1,2,{"y":"z"}]}}}`,
		`{"project":"p","channel":"c","event":"e","tags":{"k":"a\rid: 1","n":1e400}}`,
		`{"project":"p","channel":"c","event":"\u200b","description":"a\r\nb\u0007"}`,
		`{"project":"p","channel":"c","event":"pay\u202egnp.exe","user_id":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := decodeLog(body, now)
		if err != nil {
			if c := tidings.ErrorCode(err); c != tidings.EInvalidJSON && c != tidings.EValidation {
				t.Fatalf("code %q for %q", c, body)
			}
			return
		}
		var p tidings.Problems
		again := *e
		again.Check(&p, now)
		if err := p.Err(); err != nil {
			t.Fatalf("accepted event breaks a rule: %v (%q)", err, body)
		}
		if !tidings.ValidName(e.Project) || !tidings.ValidName(e.Channel) || e.Event == "" {
			t.Fatalf("accepted %+v", e)
		}
		// What is accepted is safe to show and to read back: no CR anywhere (SSE
		// would take it for a line end), no control characters outside a description's
		// line breaks and tabs, tags that a strict JSON reader decodes.
		for _, text := range []string{e.Event, e.UserID, e.Description} {
			if strings.ContainsRune(text, '\r') {
				t.Fatalf("accepted a CR: %q", body)
			}
		}
		if strings.ContainsFunc(e.Event+e.UserID, unicode.IsControl) {
			t.Fatalf("accepted a control character: %q", body)
		}
		tags, err := json.Marshal(e.Tags)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(tags, &back); err != nil {
			t.Fatalf("accepted tags %s that a strict reader refuses: %v", tags, err)
		}
		for _, tag := range e.Tags {
			if strings.ContainsFunc(tag.Value, unicode.IsControl) {
				t.Fatalf("accepted a control character in a tag: %q", body)
			}
		}
	})
}

// FuzzDecodeInsight does the same for insight bodies, POST and PATCH.
func FuzzDecodeInsight(f *testing.F) {
	for _, s := range []string{
		`{"project":"my-saas","title":"Revenue","value":"12.50","change":"increment","prefix":"$"}`,
		`{"project":"my-saas","title":"Status","value":true,"change":"update","icon":"🟢"}`,
		`{"project":"my-saas","title":"A","value":{"$inc":1e3}}`, `{"value":1e999999}`, `{"value":"-.5","change":"decrement"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		withDefault := func(body []byte) (*tidings.InsightChange, error) {
			return decodeInsight(body, func(string) string { return tidings.ChangeUpdate })
		}
		withoutDefault := func(body []byte) (*tidings.InsightChange, error) { return decodeInsight(body, nil) }
		for _, decode := range []func([]byte) (*tidings.InsightChange, error){withoutDefault, withDefault, decodeIncrement} {
			c, err := decode(body)
			if err != nil {
				if code := tidings.ErrorCode(err); code != tidings.EInvalidJSON && code != tidings.EValidation {
					t.Fatalf("code %q", code)
				}
				continue
			}
			// Applying it to nothing must work or fail with a rule's error, never panic.
			if _, err := c.Apply(nil, time.Now()); err != nil && tidings.ErrorCode(err) == tidings.EInternal {
				t.Fatal(err)
			}
		}
	})
}

// FuzzScanObject: the fast object scanner accepts only what the token-walking decoder
// accepts, with the same members in the same order.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{
		`{"project":"my-saas","channel":"payments","event":"New Subscription","icon":"💰","notify":true,"tags":{"plan":"premium","n":1,"b":true}}`,
		` { "a" : [1, {"b": "c\"}"}] , "d":null } `, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{}`, `{"a":"\ud800"}`,
		`{"a":"x` + "\x01" + `"}`, `{"a":01}`, `{"a":1.}`, `{"a":tru}`, `{"a":1}x`, `{"k":{"x":[1,2,{"y":"z"}]}}`,
		`{"a":"\\"}`, `{"a":[}`, `{"a":"}"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := scanObject(body)
		slow, err := decodeObjectSlow(body)
		if !ok {
			return // the slow path decides and words the answer
		}
		if err != nil {
			t.Fatalf("fast path accepted what the decoder refuses (%v): %q", err, body)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%d members, decoder %d: %q", len(fast), len(slow), body)
		}
		for i := range fast {
			if fast[i].key != slow[i].key || string(fast[i].raw) != string(slow[i].raw) {
				t.Fatalf("member %d: %q=%s, decoder %q=%s", i, fast[i].key, fast[i].raw, slow[i].key, slow[i].raw)
			}
		}
	})
}
