package tidings

import (
	"strings"
	"testing"
	"time"
)

func TestCleanPagePath(t *testing.T) {
	for in, want := range map[string]string{
		"/pricing":                                      "/pricing",
		"/reset?token=abc&email=a@b.c":                  "/reset",
		"/p?utm_source=x&email=a@b.c&UTM_medium=y":      "/p?utm_source=x&UTM_medium=y",
		"https://example.com/a/b?q=1#top":               "/a/b",
		"/app#/settings?code=1&utm_campaign=z":          "/app#/settings?utm_campaign=z",
		"/docs#section":                                 "/docs",
		"?q=1":                                          "/",
		"https://user:pw@example.com/x?utm_term=t#frag": "/x?utm_term=t",
	} {
		if got := CleanPagePath(in); got != want {
			t.Errorf("CleanPagePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanReferrer(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		"https://www.google.com/search?q=secret": "https://www.google.com/search",
		"https://news.ycombinator.com/item?id=1&utm_source=hn#c": "https://news.ycombinator.com/item?utm_source=hn",
		"https://user:pw@example.com/a":                          "https://example.com/a",
		"javascript:alert(1)":                                    "",
		"android-app://com.google.android.gm/":                   "",
		"/pricing?email=x":                                       "/pricing",
	} {
		if got := CleanReferrer(in); got != want {
			t.Errorf("CleanReferrer(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPageViewsCheck(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c := NewPageViews{Project: "my-saas", Host: "www.example.com", Views: []PageView{
		{UserID: "u1", Path: "/a?x=1"},
		{UserID: "u1", Path: "/b", Referrer: "https://example.com/a"},
		{UserID: "u1", Path: "/c", Referrer: "https://google.com/"},
		{UserID: "u1", Path: "/d", Referrer: "/c"},
	}}
	var p Problems
	c.Check(&p, now, true)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if c.Views[0].Path != "/a" || !c.Views[0].Timestamp.Equal(now) {
		t.Errorf("view 0 = %+v", c.Views[0])
	}
	for i, want := range []bool{true, false, true, false} {
		if c.Views[i].Entry != want {
			t.Errorf("view %d entry = %v, want %v", i, c.Views[i].Entry, want)
		}
	}

	bad := NewPageViews{Project: "My SaaS", Views: []PageView{
		{Path: "/a"},
		{UserID: "u", Path: "/" + strings.Repeat("x", MaxPagePathLen)},
		{UserID: "u", Path: "/t", Title: strings.Repeat("t", MaxPageTitleLen+1)},
		{UserID: "u", Path: "/r", Referrer: "https://e.com/" + strings.Repeat("r", MaxReferrerLen)},
		{UserID: "u", Path: "/ts", Timestamp: now.Add(48 * time.Hour)},
		{UserID: "u"},
	}}
	p = nil
	bad.Check(&p, now, true)
	for _, path := range []string{"project", "views.0.user_id", "views.1.path", "views.2.title", "views.3.referrer", "views.4.timestamp", "views.5.path"} {
		if !p.Has(path) {
			t.Errorf("no problem at %s in %v", path, p)
		}
	}

	p = nil
	over := NewPageViews{Project: "p", Views: make([]PageView, MaxPageViewsPerCall+1)}
	over.Check(&p, now, true)
	if !p.Has("views") {
		t.Errorf("a batch of %d passed: %v", MaxPageViewsPerCall+1, p)
	}
	p = nil
	one := NewPageViews{Project: "p", Views: []PageView{{Path: "/"}}}
	one.Check(&p, now, false)
	if !p.Has("user_id") {
		t.Errorf("a single view names its field without index: %v", p)
	}
}

func TestCountSessions(t *testing.T) {
	for _, c := range []struct {
		minutes []int64
		want    int64
	}{
		{nil, 0},
		{[]int64{5}, 1},
		{[]int64{0, 30, 60, 90}, 1},
		{[]int64{0, 31}, 2},
		{[]int64{0, 10, 100, 101, 200}, 3},
	} {
		if got := CountSessions(c.minutes); got != c.want {
			t.Errorf("CountSessions(%v) = %d, want %d", c.minutes, got, c.want)
		}
	}
}
