package tidings

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSearch(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	w := func(words ...string) Term { return Term{Words: words} }
	for _, c := range []struct {
		q    string
		want Search
	}{
		{"", Search{}},
		{"Deploy FAILED", Search{Terms: []Term{w("deploy"), w("failed")}}},
		{"Zürich", Search{Terms: []Term{w("zurich")}}},
		{"subscr*", Search{Terms: []Term{{Words: []string{"subscr"}, Prefix: true}}}},
		{`"payment failed" plan:pro`, Search{Terms: []Term{w("payment", "failed")}, Tags: []Tag{{Key: "plan", Value: "pro"}}}},
		{`"new subscr"*`, Search{Terms: []Term{{Words: []string{"new", "subscr"}, Prefix: true}}}},
		{`city:"New York" paid`, Search{Terms: []Term{w("paid")}, Tags: []Tag{{Key: "city", Value: "New York"}}}},
		{`"unclosed phrase`, Search{Terms: []Term{w("unclosed", "phrase")}}},
		{"100%_", Search{Terms: []Term{w("100")}}},
		{"build-42", Search{Terms: []Term{w("build", "42")}}}, // one token, two words: a phrase
		{"+++ —", Search{}},
		{"since:7d", Search{Since: now.Add(-7 * 24 * time.Hour)}},
		{"since:30m", Search{Since: now.Add(-30 * time.Minute)}},
		{"after:2026-11-01 before:2026-11-20", Search{Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			Until: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}},
		{"since:2026-11-01T10:00:00Z", Search{Since: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}},
		// A date before any event's is a bound all the same (the audit: before:0001-01-01,
		// Go's zero time, was taken as no bound and returned everything).
		{"before:0001-01-01", Search{Until: earliestTimestamp}},
		{"after:1970-01-01", Search{Since: earliestTimestamp}},
		// Any key:value is a tag filter, even one that looks like an address; quote it to search its words.
		{"https://example.com", Search{Tags: []Tag{{Key: "https", Value: "//example.com"}}}},
		{`"https://example.com"`, Search{Terms: []Term{w("https", "example", "com")}}},
	} {
		got, err := ParseSearch(c.q, now)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.q, got, c.want)
		}
	}
	for _, bad := range []string{"since:7y", "after:yesterday", "before:2026-13-01", "a*", `"x"*`,
		"after:2026-11-20 before:2026-11-01", strings.Repeat("word ", 17), strings.Repeat("x", MaxSearchLength+1)} {
		_, err := ParseSearch(bad, now)
		if ErrorCode(err) != EValidation || !strings.Contains(err.Error(), "q") {
			t.Errorf("%q: %v, want a validation error on q", bad, err)
		}
	}
}

// TestMatchesTerms: the live feed's filter agrees with the stores' search on words,
// phrases, prefixes, accents and tag values.
func TestMatchesTerms(t *testing.T) {
	ev := &Event{Event: "Payment failed", Description: "Card of **Zoë** in Zürich declined",
		Tags: Tags{{Key: "order", Kind: KindString, Value: "ord-7731"}}}
	for q, want := range map[string]bool{
		"payment":          true,
		"PAYMENT FAILED":   true,
		`"payment failed"`: true,
		`"failed payment"`: false,
		"zurich zoe":       true,
		"zür*":             true,
		"declin*":          true,
		"decline":          false,
		"7731":             true,
		`"ord 7731"`:       true,
		"refund":           false,
		`"card of zo"*`:    true,
	} {
		s, err := ParseSearch(q, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got := (EventQuery{Terms: s.Terms}).Matches(ev); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}
