package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

// Page views: POST /v1/page (one view or a batch of up to 20), GET /v1/pages,
// GET /v1/page/settings, and what they add to GET /v1/users.

var goodView = map[string]any{"project": "my-saas", "user_id": "user-1", "path": "/pricing"}

// views is a batch body of the given views (each a JSON object).
func views(vs ...string) string {
	return `{"project":"my-saas","views":[` + strings.Join(vs, ",") + `]}`
}

// copies is n times the view v.
func copies(n int, v string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// view is one view of a batch.
func view(user, path string, ts int64) string {
	b, _ := json.Marshal(map[string]any{"user_id": user, "path": path, "timestamp": ts})
	return string(b)
}

type pagesPage struct {
	PageViews []struct {
		UserID    string `json:"user_id"`
		Path      string `json:"path"`
		Title     string `json:"title"`
		Referrer  string `json:"referrer"`
		Timestamp int64  `json:"timestamp"`
	} `json:"page_views"`
	Next *string `json:"next"`
}

type pageStored struct {
	Stored      int  `json:"stored"`
	GPC         bool `json:"gpc"`
	RateLimited int  `json:"rate_limited"`
}

// stored checks a POST /v1/page answer: 200 with n views stored.
func (e *env) stored(r *response, n int) pageStored {
	e.t.Helper()
	if r.status != 200 {
		e.t.Fatalf("POST /v1/page: %d %s", r.status, r.body)
	}
	var a pageStored
	if err := json.Unmarshal([]byte(r.body), &a); err != nil || a.Stored != n {
		e.t.Fatalf("POST /v1/page stored %d, want %d: %s", a.Stored, n, r.body)
	}
	return a
}

// pages reads GET /v1/pages with query q (after project=my-saas) and the full token.
func (e *env) pages(token, q string) pagesPage {
	e.t.Helper()
	r := e.do("GET", "/v1/pages?project=my-saas"+q, token, "")
	if r.status != 200 {
		e.t.Fatalf("GET /v1/pages%s: %d %s", q, r.status, r.body)
	}
	var p pagesPage
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// TestPageViews: views are stored from one view or a batch, from a public token in a
// browser, cleaned (query strings but utm_*), and read back newest first a page at a
// time; the user they name has them counted, with its sessions.
func TestPageViews(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	now := time.Now().Unix()
	base := now - 3*3600

	r := e.do("POST", "/v1/page", public, `{"project":"my-saas","user_id":"user-1","path":"/pricing?email=ada@example.com&utm_source=news&token=s3cret#plans",
		"title":"  Pricing  ","referrer":"https://www.google.com/search?q=ada%40example.com&utm_medium=cpc","timestamp":`+fmt.Sprint(base)+`}`,
		"Origin", "https://shop.example")
	e.stored(r, 1)
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("POST /v1/page is not open to browsers: %v", r.header)
	}
	// A batch: sessions are 30 minutes apart at most (base+10m is the first's session,
	// base+50m starts a second).
	e.stored(e.do("POST", "/v1/page", public, views(view("user-1", "/docs", base+600), view("user-1", "/docs/api", base+3000),
		view("user-2", "https://shop.example/cart?session=abc", base+60))), 3)
	e.stored(e.do("POST", "/api/v1/page", public, merge(goodView, map[string]any{"user_id": "user-3", "path": "/", "timestamp": base + 120})), 1)

	all := e.pages(e.full, "")
	if len(all.PageViews) != 5 || all.Next != nil {
		t.Fatalf("GET /v1/pages: %+v", all)
	}
	var got []string
	for _, v := range all.PageViews {
		got = append(got, fmt.Sprintf("%s %s %d", v.UserID, v.Path, v.Timestamp-base))
	}
	if want := []string{"user-1 /docs/api 3000", "user-1 /docs 600", "user-3 / 120", "user-2 /cart 60",
		"user-1 /pricing?utm_source=news 0"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("newest first, cleaned:\n got %q\nwant %q", got, want)
	}
	first := all.PageViews[4]
	if first.Title != "Pricing" || first.Referrer != "https://www.google.com/search?utm_medium=cpc" {
		t.Fatalf("title and referrer as stored: %+v", first)
	}
	if strings.Contains(e.do("GET", "/v1/pages?project=my-saas", e.full, "").body, "s3cret") {
		t.Fatal("a query string's secret was stored")
	}

	// A page at a time, by cursor, without doubles or gaps.
	var walked []string
	q := "&limit=2"
	for range 10 {
		p := e.pages(e.full, q)
		if len(p.PageViews) > 2 {
			t.Fatalf("limit=2 answered %d", len(p.PageViews))
		}
		for _, v := range p.PageViews {
			walked = append(walked, fmt.Sprintf("%s %s %d", v.UserID, v.Path, v.Timestamp-base))
		}
		if p.Next == nil {
			break
		}
		q = "&limit=2&before=" + *p.Next
	}
	if strings.Join(walked, ",") != strings.Join(got, ",") {
		t.Fatalf("pages by cursor: %q, want %q", walked, got)
	}
	if p := e.pages(e.full, "&user_id=user-1"); len(p.PageViews) != 3 || p.PageViews[0].Path != "/docs/api" {
		t.Fatalf("user-1's views: %+v", p)
	}
	if p := e.pages(e.full, "&user_id=nobody"); len(p.PageViews) != 0 || p.Next != nil || !strings.Contains(e.do("GET", "/v1/pages?project=my-saas&user_id=nobody", e.full, "").body, `"page_views":[]`) {
		t.Fatalf("a user without views: %+v", p)
	}

	// The users: page_views counted, sessions on the one user.
	r = e.do("GET", "/v1/users/user-1?project=my-saas", e.full, "")
	u := decode[struct {
		PageViews int64     `json:"page_views"`
		Sessions  int64     `json:"sessions"`
		FirstSeen time.Time `json:"first_seen"`
	}](t, r)
	if r.status != 200 || u.PageViews != 3 || u.Sessions != 2 || u.FirstSeen.Unix() != base {
		t.Fatalf("user-1: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/v1/users?project=my-saas", e.full, "")
	list := decode[struct {
		Users []struct {
			UserID    string `json:"user_id"`
			PageViews *int64 `json:"page_views"`
		}
	}](t, r)
	counts := map[string]int64{}
	for _, u := range list.Users {
		if u.PageViews == nil {
			t.Fatalf("GET /v1/users without page_views: %s", r.body)
		}
		counts[u.UserID] = *u.PageViews
	}
	if len(counts) != 3 || counts["user-1"] != 3 || counts["user-2"] != 1 || counts["user-3"] != 1 {
		t.Fatalf("page_views per user: %v", counts)
	}
	// Page views are not events: the feed has none.
	if r := e.do("GET", "/v1/events?project=my-saas", e.full, ""); !strings.Contains(r.body, `"events":[]`) {
		t.Fatalf("page views reached the feed: %s", r.body)
	}
}

// TestPageFields: every rule of a view, in one view and in a batch, has its bad input,
// answered as /v1/log answers it: 400 validation_failed naming the field.
func TestPageFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	now := time.Now().Unix()
	for _, c := range []struct {
		name string
		body string
		path string // "" when the request must succeed
		typ  string
	}{
		{"minimal", merge(goodView, nil), "", ""},
		{"all fields", merge(goodView, map[string]any{"title": "Pricing", "referrer": "https://google.com/", "timestamp": now - 60}), "", ""},
		{"nulls are left out", merge(goodView, map[string]any{"title": raw("null"), "referrer": raw("null"), "timestamp": raw("null")}), "", ""},
		{"project missing", merge(goodView, map[string]any{"project": nil}), "project", "required"},
		{"project capitals", merge(goodView, map[string]any{"project": "My-Saas"}), "project", "pattern"},
		{"project number", merge(goodView, map[string]any{"project": 1}), "project", "type"},
		{"user_id missing", merge(goodView, map[string]any{"user_id": nil}), "user_id", "required"},
		{"user_id empty", merge(goodView, map[string]any{"user_id": ""}), "user_id", "required"},
		{"user_id 128", merge(goodView, map[string]any{"user_id": strings.Repeat("u", 128)}), "", ""},
		{"user_id 129", merge(goodView, map[string]any{"user_id": strings.Repeat("u", 129)}), "user_id", "too_long"},
		{"user_id number", merge(goodView, map[string]any{"user_id": 42}), "user_id", "type"},
		{"user_id newline", merge(goodView, map[string]any{"user_id": "a\nb"}), "user_id", "control_character"},
		{"path missing", merge(goodView, map[string]any{"path": nil}), "path", "required"},
		{"path blank", merge(goodView, map[string]any{"path": "   "}), "path", "required"},
		{"path 1024", merge(goodView, map[string]any{"path": "/" + strings.Repeat("é", 1023)}), "", ""},
		{"path 1025", merge(goodView, map[string]any{"path": "/" + strings.Repeat("é", 1024)}), "path", "too_long"},
		{"path long query string dropped", merge(goodView, map[string]any{"path": "/a?q=" + strings.Repeat("x", 5000)}), "", ""},
		{"path tab", merge(goodView, map[string]any{"path": "/a\tb"}), "path", "control_character"},
		{"path array", merge(goodView, map[string]any{"path": []string{"/"}}), "path", "type"},
		{"title 256", merge(goodView, map[string]any{"title": strings.Repeat("é", 256)}), "", ""},
		{"title 257", merge(goodView, map[string]any{"title": strings.Repeat("é", 257)}), "title", "too_long"},
		{"title number", merge(goodView, map[string]any{"title": 7}), "title", "type"},
		{"referrer 1024", merge(goodView, map[string]any{"referrer": "https://a.example/" + strings.Repeat("r", 1006)}), "", ""},
		{"referrer 1025", merge(goodView, map[string]any{"referrer": "https://a.example/" + strings.Repeat("r", 1007)}), "referrer", "too_long"},
		{"referrer not a URL is dropped", merge(goodView, map[string]any{"referrer": "android-app://com.example"}), "", ""},
		{"referrer bool", merge(goodView, map[string]any{"referrer": true}), "referrer", "type"},
		{"timestamp fraction", merge(goodView, map[string]any{"timestamp": float64(now) - 0.5}), "", ""},
		{"timestamp 1999", merge(goodView, map[string]any{"timestamp": 946684799}), "timestamp", "range"},
		{"timestamp tomorrow+", merge(goodView, map[string]any{"timestamp": now + 25*3600}), "timestamp", "range"},
		{"timestamp milliseconds", merge(goodView, map[string]any{"timestamp": now * 1000}), "timestamp", "range"},
		{"timestamp string", merge(goodView, map[string]any{"timestamp": "2026-11-25"}), "timestamp", "type"},
		{"unknown field", merge(goodView, map[string]any{"url": "/x"}), "url", "unknown_field"},

		{"batch", views(view("u-1", "/a", now), view("u-2", "/b", now)), "", ""},
		{"batch of 20", views(copies(20, view("u", "/", now))...), "", ""},
		{"batch of 21", views(copies(21, view("u", "/", now))...), "views", "too_many"},
		{"batch empty", views(), "views", "required"},
		{"batch not an array", `{"project":"my-saas","views":{"user_id":"u","path":"/"}}`, "views", "type"},
		{"batch project missing", `{"views":[` + view("u", "/", now) + `]}`, "project", "required"},
		{"batch view not an object", views(view("u", "/", now), `"/about"`), "views.1", "type"},
		{"batch view path missing", views(view("u", "/", now), view("u", "/", now), view("u", "/", now), `{"user_id":"u"}`), "views.3.path", "required"},
		{"batch view user_id missing", views(`{"path":"/"}`), "views.0.user_id", "required"},
		{"batch view user_id 129", views(view(strings.Repeat("u", 129), "/", now)), "views.0.user_id", "too_long"},
		{"batch view title 257", views(`{"user_id":"u","path":"/","title":"` + strings.Repeat("t", 257) + `"}`), "views.0.title", "too_long"},
		{"batch view timestamp string", views(view("u", "/", now), `{"user_id":"u","path":"/","timestamp":"now"}`), "views.1.timestamp", "type"},
		{"batch view timestamp milliseconds", views(view("u", "/", now*1000)), "views.0.timestamp", "range"},
		{"batch view unknown field", views(`{"user_id":"u","path":"/","project":"my-saas"}`), "views.0.project", "unknown_field"},
		{"batch view duplicate key", views(`{"user_id":"u","path":"/","path":"/b"}`), "views.0", "invalid"},
		{"batch with a view's field", `{"project":"my-saas","user_id":"u","views":[` + view("u", "/", now) + `]}`, "user_id", "unknown_field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t)
			r := e.do("POST", "/v1/page", e.full, c.body)
			wantField(t, r, c.path, c.typ)
			if c.path != "" && !strings.Contains(r.problem.Detail, c.path) {
				t.Fatalf("detail does not name %s: %s", c.path, r.problem.Detail)
			}
			if ms := strings.Contains(c.name, "milliseconds"); ms != strings.Contains(r.problem.Detail, "looks like milliseconds: divide by 1000") {
				t.Fatalf("the milliseconds hint (want %t): %s", ms, r.problem.Detail)
			}
		})
	}

	// Every problem at once, in the body's order: by view, then by field.
	r := e.do("POST", "/v1/page", e.full, views(`{"path":"/","title":1}`, view("u", "/", now), `{"user_id":"u","path":" ","extra":1}`))
	var paths []string
	for _, f := range r.problem.Validation.Body {
		paths = append(paths, f.Path)
	}
	if want := "views.0.user_id views.0.title views.2.path views.2.extra"; strings.Join(paths, " ") != want {
		t.Fatalf("problems %q, want %q: %s", paths, want, r.body)
	}
	// A view that is not an object is one problem, not one per field it lacks.
	r = e.do("POST", "/v1/page", e.full, views(`7`, `null`, `{"path":"/"}`))
	paths = nil
	for _, f := range r.problem.Validation.Body {
		paths = append(paths, f.Path)
	}
	if want := "views.0 views.1 views.2.user_id"; strings.Join(paths, " ") != want {
		t.Fatalf("problems %q, want %q: %s", paths, want, r.body)
	}

	for name, body := range map[string]string{
		"not JSON":      `{"project":`,
		"trailing data": merge(goodView, nil) + `{}`,
		"duplicate key": `{"project":"my-saas","project":"shop","user_id":"u","path":"/"}`,
		"an array":      `[` + merge(goodView, nil) + `]`,
	} {
		e.want(e.do("POST", "/v1/page", e.full, body), 400, "invalid_json")
		_ = name
	}
	e.want(e.do("POST", "/v1/page", e.full, merge(goodView, nil), "Content-Type", "text/plain"), 415, "unsupported_media_type")
	// No Idempotency-Key: views are not kept under keys, and a client must not think its retry safe.
	e.want(e.do("POST", "/v1/page", e.full, merge(goodView, nil), "Idempotency-Key", "k-1"), 400, "validation_failed")
}

// TestPageCosts: a call's cost is bounded whatever it sends: a body over 64 KiB is
// refused unread, and an array of thousands of views is refused as one problem,
// without a problem (or a decode) per view.
func TestPageCosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/page", e.full, merge(goodView, map[string]any{"title": strings.Repeat("x", api.MaxBodyBytes)}))
	e.want(r, 413, "payload_too_large")
	many := `{"project":"my-saas","views":[` + strings.Repeat(`{},`, 15000) + `{}]}`
	if len(many) > api.MaxBodyBytes {
		t.Fatalf("the body is %d bytes: over the limit, it tests nothing", len(many))
	}
	r = e.do("POST", "/v1/page", e.full, many)
	wantField(t, r, "views", "too_many")
	if len(r.problem.Validation.Body) != 1 || !strings.Contains(r.problem.Detail, "at most 20") || len(r.body) > 2048 {
		t.Fatalf("one problem for the whole array: %s", r.body)
	}
	// Twenty views of the longest fields fit in a body.
	long := fmt.Sprintf(`{"user_id":"%s","path":"/%s","title":"%s","referrer":"https://a.example/%s"}`,
		strings.Repeat("u", 128), strings.Repeat("p", 1023), strings.Repeat("t", 256), strings.Repeat("r", 1006))
	body := views(copies(20, long)...)
	if len(body) > api.MaxBodyBytes {
		t.Fatalf("20 views of the longest fields take %d bytes, over the body's limit", len(body))
	}
	e.stored(e.do("POST", "/v1/page", e.full, body), 20)
	if p := e.pages(e.full, "&limit=100"); len(p.PageViews) != 20 || len(p.PageViews[0].Path) != 1024 || len(p.PageViews[0].Title) != 256 {
		t.Fatalf("the longest views as stored: %d views", len(p.PageViews))
	}
}

// TestPageTokens: who may record and read page views. Public or full tokens with the
// log role record them; a token limited to a channel may not (page views belong to no
// channel), nor one limited to another project. Only full tokens read them.
func TestPageTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	if _, err := e.store.CreateProject(ctx, e.acme.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	body := merge(goodView, nil)

	e.stored(e.do("POST", "/v1/page", public, body), 1)
	e.stored(e.do("POST", "/v1/page", e.token(e.acme, tidings.AccessPublic, "my-saas", ""), body), 1)
	e.want(e.do("POST", "/v1/page", "", body), 401, "missing_token")
	e.want(e.do("POST", "/v1/page", "tds_nope_nope", body), 401, "invalid_token")
	r := e.do("POST", "/v1/page", e.token(e.acme, tidings.AccessPublic, "my-saas", "payments"), body)
	e.want(r, 403, "forbidden")
	if !strings.Contains(r.problem.Detail, "page views belong to no channel") {
		t.Fatalf("the channel limit's refusal: %s", r.problem.Detail)
	}
	r = e.do("POST", "/v1/page", e.token(e.acme, tidings.AccessFull, "shop", ""), body)
	e.want(r, 403, "forbidden")
	if !strings.Contains(r.problem.Detail, `limited to project "shop"`) {
		t.Fatalf("the project limit's refusal: %s", r.problem.Detail)
	}
	e.want(e.do("POST", "/v1/page", e.token(e.acme, tidings.AccessPublic, "", "", tidings.RoleInsight), body), 403, "forbidden")
	e.want(e.do("POST", "/v1/page", public, merge(goodView, map[string]any{"project": "nope"})), 404, "project_not_found")
	e.want(e.do("POST", "/v1/page", public, views(view("u", "/", time.Now().Unix()))+" "), 200, "")

	// Reading: full tokens only, within their project, without a channel limit.
	if p := e.pages(e.full, ""); len(p.PageViews) != 3 {
		t.Fatalf("views: %+v", p)
	}
	if p := e.pages(e.token(e.acme, tidings.AccessFull, "my-saas", ""), ""); len(p.PageViews) != 3 {
		t.Fatalf("views with a project-limited token: %+v", p)
	}
	r = e.do("GET", "/v1/pages?project=my-saas", public, "")
	e.want(r, 403, "forbidden")
	e.want(e.do("GET", "/v1/pages?project=my-saas", e.token(e.acme, tidings.AccessFull, "shop", ""), ""), 403, "forbidden")
	r = e.do("GET", "/v1/pages?project=my-saas", e.token(e.acme, tidings.AccessFull, "my-saas", "payments"), "")
	e.want(r, 403, "forbidden")
	if !strings.Contains(r.problem.Detail, "page views belong to no channel") {
		t.Fatalf("the channel limit's refusal: %s", r.problem.Detail)
	}
	e.want(e.do("GET", "/v1/pages?project=nope", e.full, ""), 404, "project_not_found")
	e.want(e.do("GET", "/v1/pages?project=my-saas", "", ""), 401, "missing_token")
}

// TestPagesQuery: GET /v1/pages's parameters, each with its bad value.
func TestPagesQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	now := time.Now().Unix()
	var vs []string
	for i := range 60 {
		vs = append(vs, view("u", fmt.Sprintf("/p%d", i), now-int64(i)))
		if len(vs) == 20 {
			e.stored(e.do("POST", "/v1/page", e.full, views(vs...)), 20)
			vs = nil
		}
	}
	if p := e.pages(e.full, ""); len(p.PageViews) != 50 || p.Next == nil || p.PageViews[0].Path != "/p0" {
		t.Fatalf("the default page holds %d views (want 50, and a next)", len(p.PageViews))
	}
	if p := e.pages(e.full, "&limit=100"); len(p.PageViews) != 60 || p.Next != nil {
		t.Fatalf("limit=100: %d views, next %v", len(p.PageViews), p.Next)
	}
	if p := e.pages(e.full, "&limit=1"); len(p.PageViews) != 1 || p.Next == nil {
		t.Fatalf("limit=1: %+v", p)
	}
	for _, c := range []struct{ query, path, typ string }{
		{"", "project", "required"},
		{"project=My-Saas", "project", "pattern"},
		{"project=my-saas&limit=0", "limit", "range"},
		{"project=my-saas&limit=101", "limit", "range"},
		{"project=my-saas&limit=ten", "limit", "range"},
		{"project=my-saas&user_id=" + strings.Repeat("u", 129), "user_id", "too_long"},
		{"project=my-saas&user_id=", "user_id", "required"},
		{"project=my-saas&before=", "before", "cursor"},
	} {
		r := e.do("GET", "/v1/pages?"+c.query, e.full, "")
		if r.status != 400 || !r.has(c.path, c.typ) {
			t.Errorf("?%s: %d %s", c.query, r.status, r.body)
		}
	}
	// A cursor this server did not give.
	for _, bad := range []string{"not-a-cursor", "0", strings.Repeat("z", 300)} {
		if r := e.do("GET", "/v1/pages?project=my-saas&before="+bad, e.full, ""); r.status != 400 || r.problem.Code != "validation_failed" {
			t.Errorf("before=%.20s: %d %s", bad, r.status, r.body)
		}
	}
}

// TestPageSettings: GET /v1/page/settings answers whether the project records visitors
// signalling Global Privacy Control, to public tokens from browsers too.
func TestPageSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	r := e.do("GET", "/v1/page/settings?project=my-saas", public, "", "Origin", "https://shop.example")
	if r.status != 200 || r.body != `{"project":"my-saas","ignore_gpc":false}`+"\n" || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("settings: %d %v %s", r.status, r.header, r.body)
	}
	e.must(e.store.SetIgnoreGPC(ctx, e.acme.ID, "my-saas", true))
	if r := e.do("GET", "/v1/page/settings?project=my-saas", e.full, ""); r.body != `{"project":"my-saas","ignore_gpc":true}`+"\n" {
		t.Fatalf("after SetIgnoreGPC: %s", r.body)
	}
	// Any token of the project's: a channel-limited one's track calls need the answer too.
	if r := e.do("GET", "/v1/page/settings?project=my-saas", e.token(e.acme, tidings.AccessPublic, "my-saas", "payments"), ""); r.status != 200 {
		t.Fatalf("a channel-limited token: %d %s", r.status, r.body)
	}
	if _, err := e.store.CreateProject(ctx, e.acme.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	e.want(e.do("GET", "/v1/page/settings?project=my-saas", e.token(e.acme, tidings.AccessPublic, "shop", ""), ""), 403, "forbidden")
	e.want(e.do("GET", "/v1/page/settings?project=nope", public, ""), 404, "project_not_found")
	if r := e.do("GET", "/v1/page/settings", public, ""); r.status != 400 || !r.has("project", "required") {
		t.Fatalf("no project: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/page/settings?project=My%20SaaS", public, ""); r.status != 400 || !r.has("project", "pattern") {
		t.Fatalf("a bad project: %d %s", r.status, r.body)
	}
	e.want(e.do("GET", "/v1/page/settings?project=my-saas", "", ""), 401, "missing_token")
	e.want(e.do("POST", "/v1/page/settings?project=my-saas", public, "{}"), 405, "method_not_allowed")
}

// TestPageCORS: browsers reach POST /v1/page and GET /v1/page/settings (whose
// Authorization header makes even the GET preflighted), and not GET /v1/pages.
func TestPageCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for path, methods := range map[string]string{
		"/v1/page":          "POST, PATCH, OPTIONS",
		"/api/v1/page":      "POST, PATCH, OPTIONS",
		"/v1/page/settings": "GET, OPTIONS",
	} {
		method := strings.Split(methods, ",")[0]
		r := e.do("OPTIONS", path, "", "", "Origin", "https://shop.example", "Access-Control-Request-Method", method,
			"Access-Control-Request-Headers", "authorization, content-type")
		if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "*" ||
			r.header.Get("Access-Control-Allow-Methods") != methods ||
			!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") ||
			!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Content-Type") ||
			r.header.Get("Access-Control-Max-Age") == "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s preflight: %d %v", path, r.status, r.header)
		}
	}
	r := e.do("POST", "/v1/page", "", merge(goodView, nil), "Origin", "https://shop.example")
	if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("errors must carry CORS headers too, or browsers hide them: %d %v", r.status, r.header)
	}
	r = e.do("OPTIONS", "/v1/pages", "", "", "Origin", "https://shop.example", "Access-Control-Request-Method", "GET")
	if r.status == 204 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("GET /v1/pages must not be open to browsers: %d %v", r.status, r.header)
	}
	if r := e.do("GET", "/v1/pages?project=my-saas", e.full, "", "Origin", "https://shop.example"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("GET /v1/pages answered a browser")
	}
}

// TestPageGPC: a visitor whose browser sends Sec-GPC: 1 is not recorded, unless the
// project ignores the signal.
func TestPageGPC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	now := time.Now().Unix()
	batch := views(view("gpc-1", "/a", now-2), view("gpc-1", "/b", now-1))

	for _, body := range []string{merge(goodView, map[string]any{"user_id": "gpc-1"}), batch} {
		r := e.do("POST", "/v1/page", public, body, "Sec-GPC", "1")
		if a := e.stored(r, 0); !a.GPC || r.body != `{"stored":0,"gpc":true}`+"\n" {
			t.Fatalf("with Sec-GPC: 1: %s", r.body)
		}
	}
	if p := e.pages(e.full, ""); len(p.PageViews) != 0 {
		t.Fatalf("a GPC visitor's views were stored: %+v", p)
	}
	e.want(e.do("GET", "/v1/users/gpc-1?project=my-saas", e.full, ""), 404, "not_found")
	// The signal does not excuse a bad call.
	e.want(e.do("POST", "/v1/page", public, merge(goodView, map[string]any{"project": "nope"}), "Sec-GPC", "1"), 404, "project_not_found")
	if r := e.do("POST", "/v1/page", public, merge(goodView, map[string]any{"path": nil}), "Sec-GPC", "1"); r.status != 400 || !r.has("path", "required") {
		t.Fatalf("a bad body with Sec-GPC: %d %s", r.status, r.body)
	}
	// Sec-GPC: 0 is no signal.
	if a := e.stored(e.do("POST", "/v1/page", public, merge(goodView, map[string]any{"user_id": "gpc-0"}), "Sec-GPC", "0"), 1); a.GPC {
		t.Fatal("Sec-GPC: 0 answered gpc")
	}

	e.must(e.store.SetIgnoreGPC(ctx, e.acme.ID, "my-saas", true))
	if r := e.do("POST", "/v1/page", public, batch, "Sec-GPC", "1"); r.body != `{"stored":2}`+"\n" {
		t.Fatalf("a project that ignores GPC: %s", r.body)
	}
	if p := e.pages(e.full, "&user_id=gpc-1"); len(p.PageViews) != 2 {
		t.Fatalf("a project that ignores GPC stored %d views", len(p.PageViews))
	}
}

// TestPageRateLimit: page views count against a public token's per-visitor limit as a
// batch's events do: the call spends one, each further view one more; views past the
// limit are not stored (the answer says how many), and a call past it is a 429.
func TestPageRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) // stopped: nothing refills
	e := newEnvProxied(t, api.Limits{TokenRate: 1000, TokenBurst: 1000, PublicIPRate: 1, PublicIPBurst: 5}, func() time.Time { return now })
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	body := merge(goodView, nil)
	ok := 0
	for range 8 {
		r := e.do("POST", "/v1/page", public, body, "X-Forwarded-For", "203.0.113.66")
		if r.status == 200 {
			ok++
			continue
		}
		e.want(r, 429, "rate_limited")
		if r.header.Get("Retry-After") == "" || !strings.Contains(r.problem.Detail, "per visitor") {
			t.Fatalf("the 429: %v %s", r.header, r.body)
		}
	}
	if ok != 5 {
		t.Fatalf("one visitor stored %d calls of one view, want the burst, 5", ok)
	}
	// Another visitor's batch of 8: the call and 4 more views fit its burst of 5.
	r := e.do("POST", "/v1/page", public, views(copies(8, view("u", "/", now.Unix()))...),
		"X-Forwarded-For", "198.51.100.7")
	if a := e.stored(r, 5); a.RateLimited != 3 || r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("a batch past the limit: %v %s", r.header, r.body)
	}
	e.want(e.do("POST", "/v1/page", public, body, "X-Forwarded-For", "198.51.100.7"), 429, "rate_limited")
	// A batch within the burst spends one per view.
	r = e.do("POST", "/v1/page", public, views(view("u", "/", now.Unix()), view("u", "/", now.Unix())), "X-Forwarded-For", "198.51.100.8")
	if e.stored(r, 2); r.header.Get("RateLimit-Remaining") != "3" {
		t.Fatalf("a batch of 2 left %s of 5", r.header.Get("RateLimit-Remaining"))
	}
	// A full token has no per-visitor limit.
	e.stored(e.do("POST", "/v1/page", e.full, views(copies(20, view("u", "/", now.Unix()))...),
		"X-Forwarded-For", "203.0.113.66"), 20)
	if p := e.pages(e.full, "&limit=100"); len(p.PageViews) != 5+5+2+20 {
		t.Fatalf("%d views stored, want 32", len(p.PageViews))
	}
}

// TestPageTenancy: another account's token neither reads nor writes this account's page
// views, even under the same project name.
func TestPageTenancy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	globex := e.account("globex") // it has a project my-saas too
	gFull := e.token(globex, tidings.AccessFull, "", "")
	gPublic := e.token(globex, tidings.AccessPublic, "", "")
	if _, err := e.store.CreateProject(ctx, e.acme.ID, "acme-only"); err != nil {
		t.Fatal(err)
	}

	e.stored(e.do("POST", "/v1/page", e.full, merge(goodView, map[string]any{"user_id": "acme-user", "path": "/acme"})), 1)
	e.stored(e.do("POST", "/v1/page", gPublic, merge(goodView, map[string]any{"user_id": "globex-user", "path": "/globex"})), 1)
	if p := e.pages(e.full, ""); len(p.PageViews) != 1 || p.PageViews[0].Path != "/acme" {
		t.Fatalf("acme reads %+v", p)
	}
	if p := e.pages(gFull, ""); len(p.PageViews) != 1 || p.PageViews[0].Path != "/globex" {
		t.Fatalf("globex reads %+v", p)
	}
	if p := e.pages(gFull, "&user_id=acme-user"); len(p.PageViews) != 0 {
		t.Fatalf("globex reads acme's user: %+v", p)
	}
	e.want(e.do("GET", "/v1/users/acme-user?project=my-saas", gFull, ""), 404, "not_found")
	for _, tok := range []string{gPublic, gFull} {
		e.want(e.do("POST", "/v1/page", tok, merge(goodView, map[string]any{"project": "acme-only"})), 404, "project_not_found")
		e.want(e.do("GET", "/v1/page/settings?project=acme-only", tok, ""), 404, "project_not_found")
	}
	e.want(e.do("GET", "/v1/pages?project=acme-only", gFull, ""), 404, "project_not_found")
	// A cursor of acme's is no key to its views from globex.
	e.stored(e.do("POST", "/v1/page", e.full, merge(goodView, map[string]any{"user_id": "acme-user", "path": "/acme-2"})), 1)
	p := e.pages(e.full, "&limit=1")
	if p.Next == nil {
		t.Fatal("no cursor")
	}
	if r := e.do("GET", "/v1/pages?project=my-saas&limit=1&before="+*p.Next, gFull, ""); r.status == 200 && strings.Contains(r.body, "/acme") {
		t.Fatalf("globex read acme's views by its cursor: %s", r.body)
	}
	if u := decode[struct {
		PageViews int64 `json:"page_views"`
	}](t, e.do("GET", "/v1/users/acme-user?project=my-saas", e.full, "")); u.PageViews != 2 {
		t.Fatalf("acme-user's page_views: %d", u.PageViews)
	}
}

// TestUsersSort: GET /v1/users sorts by last seen (the default), events or first seen,
// largest or newest first; any other order is a 400.
func TestUsersSort(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	now := time.Now().Unix()
	// early: first seen first, 1 event, seen last of all by a page view; busy: 3 events.
	e.stored(e.do("POST", "/v1/page", e.full, merge(goodView, map[string]any{"user_id": "early", "timestamp": now - 7200})), 1)
	for i := range 3 {
		if r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"user_id": "busy", "timestamp": now - 3600 + int64(i)})); r.status != 200 {
			t.Fatalf("log: %d %s", r.status, r.body)
		}
	}
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"user_id": "early", "timestamp": now - 7000})); r.status != 200 {
		t.Fatalf("log: %d %s", r.status, r.body)
	}
	e.stored(e.do("POST", "/v1/page", e.full, merge(goodView, map[string]any{"user_id": "early", "timestamp": now - 10})), 1)
	order := func(sort string) string {
		t.Helper()
		r := e.do("GET", "/v1/users?project=my-saas"+sort, e.full, "")
		if r.status != 200 {
			t.Fatalf("sort %s: %d %s", sort, r.status, r.body)
		}
		var ids []string
		for _, u := range decode[struct {
			Users []struct {
				UserID string `json:"user_id"`
			}
		}](t, r).Users {
			ids = append(ids, u.UserID)
		}
		return strings.Join(ids, " ")
	}
	for sort, want := range map[string]string{
		"":                 "early busy",
		"&sort=last_seen":  "early busy",
		"&sort=events":     "busy early",
		"&sort=first_seen": "busy early",
	} {
		if got := order(sort); got != want {
			t.Errorf("%q: %q, want %q", sort, got, want)
		}
	}
	for _, bad := range []string{"name", "LAST_SEEN", "-events"} {
		r := e.do("GET", "/v1/users?project=my-saas&sort="+bad, e.full, "")
		if r.status != 400 || !r.has("sort", "enum") {
			t.Errorf("sort=%s: %d %s", bad, r.status, r.body)
		}
	}
}

// TestProblemMessage: every problem answer carries a top-level message, the same text
// as detail (LogSnag's Python and Ruby SDKs print only it), whatever its status; a
// batch's refused events too. (The env's do checks it on every answer of every test;
// this one reads the raw members.)
func TestProblemMessage(t *testing.T) {
	t.Parallel()
	e := newEnvClock(t, api.Limits{TokenRate: 1000, TokenBurst: 1000, PublicIPRate: 1, PublicIPBurst: 1},
		func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) })
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	for _, c := range []struct {
		method, path, token, body string
		header                    []string
		status                    int
	}{
		{"POST", "/v1/page", e.full, `{"project":"My SaaS"}`, nil, 400},
		{"POST", "/v1/page", e.full, `{`, nil, 400},
		{"GET", "/v1/pages?project=my-saas&limit=0", e.full, "", nil, 400},
		{"POST", "/v1/page", "", merge(goodView, nil), nil, 401},
		{"POST", "/v1/log", "tds_x_y", merge(goodLog, nil), nil, 401},
		{"GET", "/v1/pages?project=my-saas", e.token(e.acme, tidings.AccessFull, "my-saas", "payments"), "", nil, 403},
		{"POST", "/v1/page", e.full, merge(goodView, map[string]any{"project": "nope"}), nil, 404},
		{"GET", "/v1/nothing", e.full, "", nil, 404},
		{"PUT", "/v1/page", e.full, "{}", nil, 405},
		{"POST", "/v1/page", e.full, merge(goodView, map[string]any{"title": strings.Repeat("x", 70000)}), nil, 413},
		{"POST", "/v1/page", e.full, merge(goodView, nil), []string{"Content-Type", "text/plain"}, 415},
		{"POST", "/v1/page", public, merge(goodView, nil), nil, 200},
		{"POST", "/v1/page", public, merge(goodView, nil), nil, 429},
	} {
		r := e.do(c.method, c.path, c.token, c.body, c.header...)
		if r.status != c.status {
			t.Fatalf("%s %s: %d, want %d: %s", c.method, c.path, r.status, c.status, r.body)
		}
		if c.status == 200 {
			continue
		}
		var members map[string]any
		if err := json.Unmarshal([]byte(r.body), &members); err != nil {
			t.Fatal(err)
		}
		if msg, ok := members["message"].(string); !ok || msg == "" || msg != members["detail"] {
			t.Errorf("%s %s %d: message %v, detail %v", c.method, c.path, c.status, members["message"], members["detail"])
		}
	}
	r := e.do("POST", "/v1/log/batch", e.full, batchOf(goodLogJSON(), merge(goodLog, map[string]any{"channel": "nowhere"})))
	var batch struct {
		Results []struct {
			Error map[string]any `json:"error"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &batch); err != nil || len(batch.Results) != 2 || batch.Results[1].Error == nil {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	if pe := batch.Results[1].Error; pe["message"] == nil || pe["message"] != pe["detail"] {
		t.Fatalf("a batch's refused event has no message: %v", pe)
	}
}
