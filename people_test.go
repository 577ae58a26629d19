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

// TestPropertiesBytes: properties are stored without HTML escaping (a "<" is one byte,
// not six), a user keeps at most MaxPropertiesBytes of them, and a page of users or
// groups ends before PageBytes of properties, with a cursor (the audit: 100 properties
// of 1,024 "<" each made a 100-user page 61.5 MB).
func TestPropertiesBytes(t *testing.T) {
	tags := Tags{{Key: "html", Kind: KindString, Value: "<b>&</b>"}, {Key: "n", Kind: KindNumber, Value: "12.50"}}
	if got := string(tags.JSON()); got != `{"html":"<b>&</b>","n":12.50}` {
		t.Fatalf("stored JSON = %s", got)
	}
	var back Tags
	if err := back.UnmarshalJSON(tags.JSON()); err != nil || !slices.Equal(back, tags) {
		t.Fatalf("read back %v %v", back, err)
	}
	var big Tags
	for i := range MaxPropertiesPerCall {
		big = append(big, Tag{Key: "k" + strings.Repeat("x", 3) + string(rune('a'+i%26)) + string(rune('a'+i/26)), Kind: KindString, Value: strings.Repeat("<", 1024)})
	}
	_, err := MergeProperties(nil, big, nil)
	if ErrorCode(err) != EValidation || !strings.Contains(ErrorMessage(err), "at most 16 KiB of properties") {
		t.Fatalf("%d properties of 1,024 characters: %v", len(big), err)
	}
	if _, err := MergeProperties(nil, big[:15], nil); err != nil {
		t.Fatalf("15 KiB of properties: %v", err)
	}

	page := &PersonPage{}
	for i := range 100 {
		page.People = append(page.People, &Person{UserID: "u" + strings.Repeat("0", i%3) + string(rune('a'+i%26)), Properties: big[:15]})
	}
	page.TrimPeople()
	total := 0
	for _, u := range page.People {
		total += len(u.Properties.JSON())
	}
	if len(page.People) == 100 || total > PageBytes || page.Next != page.People[len(page.People)-1].UserID {
		t.Fatalf("a page of 100 users with 15 KiB each: kept %d (%d bytes), next %q", len(page.People), total, page.Next)
	}
	one := &PersonPage{People: []*Person{{UserID: "solo", Properties: big[:15]}}}
	one.TrimPeople()
	if len(one.People) != 1 || one.Next != "" {
		t.Fatalf("a page of one user: %+v", one)
	}
	groups := &GroupPage{}
	for i := range 50 {
		groups.Groups = append(groups.Groups, &Group{GroupID: string(rune('a' + i%26)), Properties: big[:15]})
	}
	groups.TrimGroups()
	if len(groups.Groups) == 50 || groups.Next == "" {
		t.Fatalf("a page of 50 groups with 15 KiB each kept %d", len(groups.Groups))
	}
}
