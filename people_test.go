package tidings

import (
	"slices"
	"strings"
	"testing"
)

// TestParsePersonSearch: properties as key:value (quoted values keep their spaces),
// one other word as the start of a user ID, more refused with a clear message.
func TestParsePersonSearch(t *testing.T) {
	for _, c := range []struct {
		box, prefix, err string
		props            []Tag
	}{
		{box: "", props: nil},
		{box: "plan:pro ada", prefix: "ada", props: []Tag{{Key: "plan", Value: "pro"}}},
		{box: `name:"Ada Lovelace" seats:3`, props: []Tag{{Key: "name", Value: "Ada Lovelace"}, {Key: "seats", Value: "3"}}},
		{box: `user/42`, prefix: "user/42"},
		{box: `"ada l"`, prefix: "ada l"},
		{box: "ada bob", prefix: "ada", err: "one user ID at a time"},
		{box: strings.Repeat("x", MaxSearchLength+1), err: "at most 512 bytes"},
	} {
		var q PersonQuery
		err := ParsePersonSearch(&q, c.box)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(ErrorMessage(err), c.err)) {
			t.Errorf("%q: error %v, want %q", c.box, err, c.err)
			continue
		}
		if q.IDPrefix != c.prefix || !slices.Equal(q.Properties, c.props) {
			t.Errorf("%q: prefix %q, properties %v", c.box, q.IDPrefix, q.Properties)
		}
	}
	if got := LikePrefix(`a%b_c\`); got != `a\%b\_c\\%` {
		t.Errorf("LikePrefix: %s", got)
	}
}
