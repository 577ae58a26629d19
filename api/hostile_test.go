package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/internal/attack"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/sqlite"
)

// TestHostileText: the contract's "Hostile input" text rules, each with the input that
// an attacker with a public token sent in the audit.
func TestHostileText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	insight := map[string]any{"project": "my-saas", "title": "Revenue", "value": "10", "change": "update"}
	for _, c := range []struct {
		name     string
		endpoint string
		extra    map[string]any
		path     string // "" when accepted
		typ      string
	}{
		{"tag value CR forges SSE lines", "/v1/log", map[string]any{"tags": map[string]any{"k": "a\rid: 999\rretry: 1"}}, "tags.k", "control_character"},
		{"tag value LF", "/v1/log", map[string]any{"tags": map[string]any{"k": "a\nb"}}, "tags.k", "control_character"},
		{"tag value NUL", "/v1/log", map[string]any{"tags": map[string]any{"k": "a\x00b"}}, "tags.k", "control_character"},
		{"tag value C1", "/v1/log", map[string]any{"tags": map[string]any{"k": "a\u0085b"}}, "tags.k", "control_character"},
		{"tag value bidi override", "/v1/log", map[string]any{"tags": map[string]any{"file": "pay\u202egnp.exe"}}, "tags.file", "bidi_control"},
		{"tag value accents fine", "/v1/log", map[string]any{"tags": map[string]any{"city": "Zürich — 東京"}}, "", ""},
		{"tag number 1e400", "/v1/log", map[string]any{"tags": map[string]any{"n": raw("1e400")}}, "tags.n", "range"},
		{"tag number -1e400", "/v1/log", map[string]any{"tags": map[string]any{"n": raw("-1e400")}}, "tags.n", "range"},
		{"tag number 5000 digits", "/v1/log", map[string]any{"tags": map[string]any{"n": raw(strings.Repeat("9", 5000))}}, "tags.n", "too_long"},
		{"tag number 32 chars", "/v1/log", map[string]any{"tags": map[string]any{"n": raw("12345678901234567890123456789.50")}}, "", ""},
		{"tag number 33 chars", "/v1/log", map[string]any{"tags": map[string]any{"n": raw(strings.Repeat("1", 33))}}, "tags.n", "too_long"},
		{"tag number 1e308", "/v1/log", map[string]any{"tags": map[string]any{"n": raw("1e308")}}, "", ""},
		{"event zero-width only", "/v1/log", map[string]any{"event": "\u200b\u200b\u200c\u2060\ufeff"}, "event", "invisible"},
		{"event hangul filler only", "/v1/log", map[string]any{"event": "\u3164\u3164"}, "event", "invisible"},
		{"event bidi override", "/v1/log", map[string]any{"event": "pay\u202egnp.exe"}, "event", "bidi_control"},
		{"event bidi isolate", "/v1/log", map[string]any{"event": "a\u2066b"}, "event", "bidi_control"},
		{"event NUL", "/v1/log", map[string]any{"event": "a\x00b"}, "event", "control_character"},
		{"event CR", "/v1/log", map[string]any{"event": "a\rb"}, "event", "control_character"},
		{"event DEL", "/v1/log", map[string]any{"event": "a\x7fb"}, "event", "control_character"},
		{"event with ZWJ emoji fine", "/v1/log", map[string]any{"event": "Family 👩‍👩‍👧 joined"}, "", ""},
		{"event arabic fine", "/v1/log", map[string]any{"event": "مرحبا بالعالم"}, "", ""},
		{"description LF and TAB fine", "/v1/log", map[string]any{"description": "a\n\tb"}, "", ""},
		{"description CR LF fine", "/v1/log", map[string]any{"description": "a\r\nb\rc"}, "", ""},
		{"description NUL", "/v1/log", map[string]any{"description": "a\x00b"}, "description", "control_character"},
		{"description ESC", "/v1/log", map[string]any{"description": "\x1b[31mred"}, "description", "control_character"},
		{"user_id CR", "/v1/log", map[string]any{"user_id": "u\r1"}, "user_id", "control_character"},
		{"user_id invisible", "/v1/log", map[string]any{"user_id": "\u200b"}, "user_id", "invisible"},
		{"icon 20 combining marks", "/v1/log", map[string]any{"icon": "💰" + strings.Repeat("\u0301", 20)}, "icon", "emoji"},
		{"icon kiss with skin tones (10 code points)", "/v1/log", map[string]any{"icon": "👩🏽\u200d❤️\u200d💋\u200d👨🏻"}, "", ""},
		{"title CR", "/v1/insight", map[string]any{"title": "a\rb"}, "title", "control_character"},
		{"title NUL", "/v1/insight", map[string]any{"title": "a\x00b"}, "title", "control_character"},
		{"title bidi", "/v1/insight", map[string]any{"title": "a\u202eb"}, "title", "bidi_control"},
		{"title invisible", "/v1/insight", map[string]any{"title": "\u200b\u200d"}, "title", "invisible"},
		{"value CR", "/v1/insight", map[string]any{"value": "up\rid: 1"}, "value", "control_character"},
		{"prefix LF", "/v1/insight", map[string]any{"prefix": "$\n"}, "prefix", "control_character"},
		{"suffix CR", "/v1/insight", map[string]any{"suffix": "\r"}, "suffix", "control_character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			base := goodLog
			if c.endpoint == "/v1/insight" {
				base = insight
			}
			wantField(t, e.do("POST", c.endpoint, e.full, merge(base, c.extra)), c.path, c.typ)
		})
	}
}

// TestDescriptionLineBreaksNormalised: CR LF and lone CR are stored as LF.
func TestDescriptionLineBreaksNormalised(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"description": "a\r\nb\rc"}))
	got := decode[struct{ Description string }](t, r)
	if got.Description != "a\nb\nc" {
		t.Fatalf("description = %q", got.Description)
	}
}

// TestLoneSurrogateEscape: "\uD800" is no character; encoding/json would store U+FFFD.
func TestLoneSurrogateEscape(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for name, c := range map[string]struct {
		event string
		ok    bool
	}{
		"lone high":         {`a\uD800b`, false},
		"lone low":          {`a\uDC00b`, false},
		"high at end":       {`a\ud83d`, false},
		"high then text":    {`\uD83D\u0041`, false},
		"reversed pair":     {`\uDE00\uD83D`, false},
		"pair":              {`\uD83D\uDE00`, true},
		"escaped backslash": {`a\\uD800`, true},
		"plain escape":      {`\u00e9`, true},
	} {
		t.Run(name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			r := e.do("POST", "/v1/log", e.full, `{"project":"my-saas","channel":"payments","event":"`+c.event+`"}`)
			if c.ok {
				if r.status != 200 {
					t.Fatalf("got %d: %s", r.status, r.body)
				}
				return
			}
			e.want(r, 400, "invalid_json")
			if !strings.Contains(r.problem.Detail, "surrogate") {
				t.Fatalf("detail: %s", r.problem.Detail)
			}
		})
	}
}

// TestOversizedBodyAnsweredAtOnce: a Content-Length over the limit is answered 413 at
// once, without waiting for a body that is held back (the audit waited for the timeout).
func TestOversizedBodyAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for _, n := range []int{api.MaxBodyBytes + 1, 200 << 10, 10 << 20} {
		status := attack.HeldBackBody(t, e.srv.URL, "/v1/log", "application/json", n, "Authorization", "Bearer "+e.full)
		if !strings.HasPrefix(status, "413") {
			t.Fatalf("Content-Length %d: %s", n, status)
		}
		if status := attack.HeldBackBody(t, e.srv.URL, "/v1/insight", "application/json", n); !strings.HasPrefix(status, "413") {
			t.Fatalf("without a token, Content-Length %d: %s", n, status)
		}
	}
}

// TestFullDiskIsUnavailable: while the store cannot commit, /readyz answers 503 and
// writes get 503 unavailable with Retry-After (the audit saw "ready" and 500s); when
// room is back, both recover by themselves, and nothing half-written was kept.
func TestFullDiskIsUnavailable(t *testing.T) {
	t.Parallel()
	testbackend.SQLiteOnly(t) // the PostgreSQL outage test is in package postgres
	e := newEnv(t, noLimits)
	ctx := t.Context()
	e.want(e.do("GET", "/readyz", "", ""), 200, "")
	disk := e.store.(*sqlite.DB)
	pages, err := disk.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	disk.SetMaxPageCount(ctx, pages) // the disk is full
	desc := strings.Repeat("fills pages ", 800)
	var refused int
	for i := 0; i < 20; i++ {
		r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"description": desc}))
		switch r.status {
		case 200:
		case 503:
			refused++
			if r.problem.Code != "unavailable" || r.header.Get("Retry-After") == "" {
				t.Fatalf("full disk: %s, Retry-After %q", r.body, r.header.Get("Retry-After"))
			}
		default:
			t.Fatalf("full disk: %d %s", r.status, r.body)
		}
	}
	if refused == 0 {
		t.Fatal("no write was refused on a full disk")
	}
	r := e.do("GET", "/readyz", "", "")
	e.want(r, 503, "unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("readyz 503 without Retry-After")
	}
	before := countEvents(t, e)

	disk.SetMaxPageCount(ctx, 1<<30)    // room again
	time.Sleep(1100 * time.Millisecond) // readiness probes at most once a second
	e.want(e.do("GET", "/readyz", "", ""), 200, "")
	e.want(e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"description": desc})), 200, "")
	if after := countEvents(t, e); after != before+1 {
		t.Fatalf("%d events before the recovery, %d after one more", before, after)
	}
}

func countEvents(t *testing.T, e *env) int {
	n, err := e.store.CountEvents(t.Context(), e.acme.ID, "my-saas", "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
