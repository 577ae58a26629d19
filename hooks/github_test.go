package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

const githubSecret = "It's a Secret to Everybody"

func githubHook() *tidings.Hook {
	return &tidings.Hook{ID: "hook_0123456789ab", AccountID: 1, Project: "app", Channel: "github",
		Source: tidings.HookGitHub, Secret: githubSecret}
}

// githubSigned makes the headers GitHub sends with body.
func githubSigned(event, delivery string, body []byte, secret string) http.Header {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return http.Header{
		"X-Github-Event":      {event},
		"X-Github-Delivery":   {delivery},
		"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(mac.Sum(nil))},
		"Content-Type":        {"application/json"},
		"User-Agent":          {"GitHub-Hookshot/044aadd"},
	}
}

// GitHub's documented example: this secret and body sign to this value.
func TestGitHubDocumentedSignature(t *testing.T) {
	h := githubSigned("ping", "x", []byte("Hello, World!"), githubSecret)
	if got, want := h.Get("X-Hub-Signature-256"), "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	if err := (githubSource{}).Verify(githubHook(), &Request{Header: h, Body: []byte("Hello, World!"), Now: now}); err != nil {
		t.Fatal(err)
	}
}

func TestGitHubMapping(t *testing.T) {
	for _, tc := range []struct {
		event, file, name, icon, priority string
		notify                            bool
		tags                              map[string]string
		url                               string
	}{
		{"ping", "ping", "GitHub hook connected", "🔌", "default", false, map[string]string{"repo": "Codertocat/Hello-World"}, "https://github.com/Codertocat/Hello-World"},
		{"push", "push", "Push", "⬆️", "default", false, map[string]string{"branch": "main", "commits": "2", "pusher": "Codertocat"}, "https://github.com/Codertocat/Hello-World/compare/6113728f27ae...7dc1f3b3d6b4"},
		{"release", "release.published", "Release published", "🚀", "default", true, map[string]string{"tag": "0.0.1"}, "https://github.com/Codertocat/Hello-World/releases/tag/0.0.1"},
		{"release", "release.created", "release", "", "default", false, map[string]string{"action": "created"}, ""},
		{"workflow_run", "workflow_run.completed.failure", "Workflow failed", "❌", "high", true, map[string]string{"workflow": "Build", "branch": "main", "run": "562"}, "https://github.com/Codertocat/Hello-World/actions/runs/30433642"},
		{"workflow_run", "workflow_run.completed.success", "workflow_run", "", "default", false, map[string]string{"action": "completed"}, ""},
		{"pull_request", "pull_request.opened", "Pull request opened", "🔀", "default", false, map[string]string{"number": "2", "branch": "changes", "base": "master"}, "https://github.com/Codertocat/Hello-World/pull/2"},
		{"pull_request", "pull_request.closed.merged", "Pull request merged", "🟣", "default", false, map[string]string{"number": "2"}, ""},
		{"pull_request", "pull_request.closed.unmerged", "pull_request", "", "default", false, map[string]string{"action": "closed"}, ""},
		{"issues", "issues.opened", "Issue opened", "🐛", "default", false, map[string]string{"number": "1", "labels": "bug"}, "https://github.com/Codertocat/Hello-World/issues/1"},
		{"star", "star.created", "New star", "⭐", "default", false, map[string]string{"stars": "1"}, ""},
		{"fork", "fork", "fork", "", "default", false, map[string]string{"github-event": "fork"}, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := testdata(t, "github", tc.file+".json")
			d, err := deliver(t, githubHook(), githubSigned(tc.event, "72d3162e-cc78-11e3-81ab-4c9367dc0958", body, githubSecret), body)
			if err != nil {
				t.Fatal(err)
			}
			if d.ID != "72d3162e-cc78-11e3-81ab-4c9367dc0958" || len(d.Events) != 1 {
				t.Fatalf("delivery %q, %d events", d.ID, len(d.Events))
			}
			e := d.Events[0]
			if e.Event != tc.name || e.Notify != tc.notify || e.Priority != tc.priority {
				t.Errorf("got %q notify %v priority %q", e.Event, e.Notify, e.Priority)
			}
			var p tidings.Problems
			icon := tc.icon
			tidings.CheckIcon(&p, "icon", &icon)
			if e.Icon != icon {
				t.Errorf("icon %q, want %q", e.Icon, icon)
			}
			for k, v := range tc.tags {
				if got := tag(e, k); got != v {
					t.Errorf("tag %s = %q, want %q", k, got, v)
				}
			}
			if tc.url != "" && e.URL != tc.url {
				t.Errorf("url %q", e.URL)
			}
			if want := "Codertocat"; tc.file != "fork" && e.UserID != want {
				t.Errorf("user %q", e.UserID)
			}
		})
	}
	body := testdata(t, "github", "push.json")
	d, _ := deliver(t, githubHook(), githubSigned("push", "1", body, githubSecret), body)
	if got := d.Events[0].Description; got != "2 commits to main: Fix typo" {
		t.Errorf("push description %q", got)
	}
}

func TestGitHubFormEncoded(t *testing.T) {
	payload := testdata(t, "github", "star.created.json")
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	h := githubSigned("star", "d1", body, githubSecret)
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	d, err := deliver(t, githubHook(), h, body)
	if err != nil || d.Events[0].Event != "New star" {
		t.Fatal(err)
	}
}

func TestGitHubRefusals(t *testing.T) {
	body := testdata(t, "github", "push.json")
	good := githubSigned("push", "d1", body, githubSecret)
	without := func(k string) http.Header { h := good.Clone(); h.Del(k); return h }
	for _, tc := range []struct {
		name   string
		hook   func(*tidings.Hook)
		header http.Header
		body   []byte
		status int
	}{
		{"wrong secret", nil, githubSigned("push", "d1", body, "another"), body, 401},
		{"missing signature", nil, without("X-Hub-Signature-256"), body, 401},
		{"sha1 only", nil, http.Header{"X-Github-Event": {"push"}, "X-Hub-Signature": {"sha1=abc"}}, body, 401},
		{"malformed signature", nil, http.Header{"X-Github-Event": {"push"}, "X-Hub-Signature-256": {"sha256=zz"}}, body, 401},
		{"body changed", nil, good, append(body, ' '), 401},
		{"hook without secret", func(h *tidings.Hook) { h.Secret = "" }, good, body, 401},
		{"missing event", nil, without("X-Github-Event"), body, 400},
		{"unparsable body", nil, githubSigned("push", "d1", []byte("{oops"), githubSecret), []byte("{oops"), 400},
		{"form without payload", nil, func() http.Header {
			h := githubSigned("push", "d1", []byte("a=b"), githubSecret)
			h.Set("Content-Type", "application/x-www-form-urlencoded")
			return h
		}(), []byte("a=b"), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := githubHook()
			if tc.hook != nil {
				tc.hook(h)
			}
			_, err := deliver(t, h, tc.header, tc.body)
			refusal(t, err, tc.status)
			if strings.Contains(err.Error(), "oops") || strings.Contains(err.Error(), "Codertocat") {
				t.Errorf("the reason quotes the body: %v", err)
			}
		})
	}
}

func TestGitHubHostile(t *testing.T) {
	long := strings.Repeat("🎉", 20000)
	var p map[string]any
	json.Unmarshal(testdata(t, "github", "push.json"), &p)
	p["ref"] = "refs/heads/\u202emain\x1b[31m" + long
	p["head_commit"] = map[string]any{"message": "\x00\x07evil\r\n\u2066" + long}
	p["pusher"] = map[string]any{"name": "\n\t"}
	p["compare"] = "javascript:alert(1)"
	p["repository"] = map[string]any{"full_name": strings.Repeat("r", 3000), "html_url": "https://github.com/" + long}
	p["sender"] = map[string]any{"login": "a\u202eb"}
	body, _ := json.Marshal(p)
	d, err := deliver(t, githubHook(), githubSigned("push", strings.Repeat("d", 500), body, githubSecret), body)
	if err != nil {
		t.Fatal(err)
	}
	e := d.Events[0]
	if e.URL != "" || e.UserID != "ab" || tag(e, "pusher") != "" || !strings.HasPrefix(tag(e, "branch"), "main[31m🎉") {
		t.Errorf("url %q user %q pusher %q branch %.20q", e.URL, e.UserID, tag(e, "pusher"), tag(e, "branch"))
	}
	if !strings.HasPrefix(d.ID, "sha256:") || len(d.ID) != 39 {
		t.Errorf("a long delivery id is not hashed: %q", d.ID)
	}
	// An unknown event whose name is hostile still makes a checked event.
	d, err = deliver(t, githubHook(), githubSigned("\u202e\x00", "d2", []byte("{}"), githubSecret), []byte("{}"))
	if err != nil || d.Events[0].Event != "github event" {
		t.Fatalf("%v %q", err, d.Events[0].Event)
	}
}
