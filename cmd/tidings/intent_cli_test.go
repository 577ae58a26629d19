package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestCLIEventAck: tidings event ack prints the event's acknowledgement, the first one
// when it was acknowledged before; another account's event or an unknown one fails.
func TestCLIEventAck(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	testbackend.Seed(t, s, "globex")
	ev := f.Publish(t, tidings.NewEvent{Event: "Database down", Priority: "urgent", Notify: true})[0]

	code, out, errs := runCLI(t, loc, "", "event", "ack", ev.ID, "--account", "acme", "--by", "ada@example.com")
	line := regexp.MustCompile(`^` + ev.ID + ` acknowledged by ada@example\.com at (\S+)\n$`)
	m := line.FindStringSubmatch(out)
	if code != 0 || errs != "" || m == nil {
		t.Fatalf("event ack: exit %d, %q, %q", code, out, errs)
	}
	at, err := time.Parse(time.RFC3339, m[1])
	if err != nil || time.Since(at) > time.Minute {
		t.Fatalf("at %q: %v", m[1], err)
	}
	// Again, by someone else: the first acknowledgement, said to be the first.
	code, again, errs := runCLI(t, loc, "", "event", "ack", ev.ID, "--account", "acme", "--by", "bob@example.com")
	if code != 0 || again != strings.TrimSuffix(out, "\n")+" (already: the first acknowledgement stays)\n" {
		t.Fatalf("again: exit %d, %q, %q", code, again, errs)
	}
	stored, err := s.FindEventByID(ctx, f.Account.ID, ev.ID)
	if err != nil || stored.Ack == nil || stored.Ack.By != "ada@example.com" {
		t.Fatalf("stored %+v %v", stored, err)
	}
	// Without --by: the user's name, marked as the CLI's.
	other := f.Publish(t, tidings.NewEvent{Event: "Disk full", Priority: "urgent"})[0]
	t.Run("default by", func(t *testing.T) {
		code, out, errs := runCLI(t, loc, "", "event", "ack", other.ID, "--account", "acme")
		if code != 0 || !strings.Contains(out, " (CLI) at ") && !strings.Contains(out, " by CLI at ") {
			t.Fatalf("exit %d, %q, %q", code, out, errs)
		}
	})

	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"event", "ack", ev.ID, "--account", "globex"}, 1, "no event"},
		{[]string{"event", "ack", "0190a000-0000-7000-8000-000000000000", "--account", "acme"}, 1, "no event"},
		{[]string{"event", "ack", ev.ID, "--account", "nope"}, 1, `no account named "nope"`},
		{[]string{"event", "ack", ev.ID, "--account", "acme", "--by", "a\nb"}, 1, "--by must be"},
		{[]string{"event", "ack", "--account", "acme"}, 2, "missing EVENT_ID"},
	} {
		code, out, errs := runCLI(t, loc, "", c.args...)
		if code != c.code || out != "" || !strings.Contains(errs, c.err) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, %q, %q; want exit %d with %q", c.args, code, out, errs, c.code, c.err)
		}
	}
	// --help documents the output.
	if code, out, _ := runCLI(t, "", "", "event", "ack", "--help"); code != 0 || !strings.Contains(out, "EVENT_ID acknowledged by BY at TIME") {
		t.Fatalf("--help: %d %s", code, out)
	}
}

// TestCLIRepeatUrgent: project update --repeat-urgent-every/--repeat-urgent-times set a
// project's escalation; the one not given stays; a wrong value changes nothing.
func TestCLIRepeatUrgent(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	escalation := func() (time.Duration, int) {
		t.Helper()
		p, err := s.FindProject(context.Background(), f.Account.ID, "my-saas")
		if err != nil {
			t.Fatal(err)
		}
		return p.RepeatUrgentEvery, p.RepeatUrgentTimes
	}
	if every, times := escalation(); every != tidings.RepeatUrgentEvery || times != tidings.RepeatUrgentTimes {
		t.Fatalf("defaults: %v %d", every, times)
	}
	code, out, errs := runCLI(t, loc, "", "project", "update", "my-saas", "--repeat-urgent-every", "1m", "--repeat-urgent-times", "3")
	if code != 0 || !strings.HasSuffix(out, "\trepeat-urgent-every=1m\trepeat-urgent-times=3\tnotify=everyone\n") {
		t.Fatalf("update: exit %d, %q, %q", code, out, errs)
	}
	if every, times := escalation(); every != time.Minute || times != 3 {
		t.Fatalf("stored %v %d", every, times)
	}
	if code, out, errs := runCLI(t, loc, "", "project", "update", "my-saas", "--repeat-urgent-times", "0"); code != 0 ||
		!strings.HasSuffix(out, "repeat-urgent-every=1m\trepeat-urgent-times=0\tnotify=everyone\n") {
		t.Fatalf("times alone: exit %d, %q, %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, loc, "", "project", "update", "my-saas", "--repeat-urgent-every", "1h30m"); code != 0 ||
		!strings.HasSuffix(out, "repeat-urgent-every=1h30m\trepeat-urgent-times=0\tnotify=everyone\n") {
		t.Fatalf("every alone: exit %d, %q, %q", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--repeat-urgent-every", "30s"}, "--repeat-urgent-every must be a duration from 1m to 24h"},
		{[]string{"--repeat-urgent-every", "25h"}, "--repeat-urgent-every must be"},
		{[]string{"--repeat-urgent-every", "5"}, "--repeat-urgent-every must be"},
		{[]string{"--repeat-urgent-every", "soon"}, "--repeat-urgent-every must be"},
		{[]string{"--repeat-urgent-times", "101"}, "--repeat-urgent-times must be a whole number from 0 (never) to 100"},
		{[]string{"--repeat-urgent-times", "-1"}, "--repeat-urgent-times must be"},
		{[]string{"--repeat-urgent-times", "3.5"}, "--repeat-urgent-times must be"},
		{[]string{"--repeat-urgent-times", "2", "--repeat-urgent-every", "0s"}, "--repeat-urgent-every must be"},
	} {
		code, out, errs := runCLI(t, loc, "", append([]string{"project", "update", "my-saas"}, c.args...)...)
		if code != 1 || out != "" || !strings.Contains(errs, c.err) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, %q, %q; want a one-line error with %q", c.args, code, out, errs, c.err)
		}
	}
	if every, times := escalation(); every != 90*time.Minute || times != 0 {
		t.Fatalf("a refused update changed the escalation: %v %d", every, times)
	}
	// At creation too, checked before the project exists.
	if code, _, errs := runCLI(t, loc, "", "project", "create", "ops", "--repeat-urgent-every", "10s"); code != 1 || !strings.Contains(errs, "--repeat-urgent-every") {
		t.Fatalf("create: exit %d, %q", code, errs)
	}
	if code, out, errs := runCLI(t, loc, "", "project", "create", "ops", "--repeat-urgent-every", "2m"); code != 0 {
		t.Fatalf("create: exit %d, %q, %q", code, out, errs)
	}
	if code, out, _ := runCLI(t, loc, "", "project", "list"); code != 0 || !strings.Contains(out, "repeat-urgent-every=2m") {
		t.Fatalf("project list: %q", out)
	}
}

// TestPublishIntentFromShell: tidings publish sends --priority, --click, --key and
// --action; a wrong one exits 1 with the server's (or the flag's) message.
func TestPublishIntentFromShell(t *testing.T) {
	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	t.Setenv("TIDINGS_URL", m.URL())
	t.Setenv("TIDINGS_TOKEN", f.Token(t, tidings.AccessFull, "", "")) // urgent needs a full token
	remote := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	code, out, errs := remote("publish", "-p", "my-saas", "-c", "payments", "-e", "Deploy 1432 waits", "--priority", "urgent",
		"--click", "https://ci.example.com/d/1432", "--key", "deploy-1432",
		"--action", "Open PR=https://github.com/acme/app/pull/1432?tab=files", "--action", "Approve=approve")
	if code != 0 || errs != "" {
		t.Fatalf("publish: exit %d, %q, %q", code, out, errs)
	}
	ev, err := s.FindEventByID(context.Background(), f.Account.ID, strings.TrimSpace(out))
	want := []tidings.Action{{Label: "Open PR", URL: "https://github.com/acme/app/pull/1432?tab=files"}, {Label: "Approve", ID: "approve"}}
	if err != nil || ev.Priority != tidings.PriorityUrgent || ev.URL != "https://ci.example.com/d/1432" || ev.ThreadKey != "deploy-1432" ||
		len(ev.Actions) != 2 || ev.Actions[0] != want[0] || ev.Actions[1] != want[1] {
		t.Fatalf("the published event: %+v %v", ev, err)
	}
	if code, out, errs := remote("publish", "-p", "my-saas", "-c", "payments", "-e", "x", "--priority", "2"); code != 0 {
		t.Fatalf("--priority 2: exit %d, %q, %q", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--priority", "loud"}, "priority: must be"},
		{[]string{"--click", "javascript:alert(1)"}, "url: must be an absolute http:// or https:// URL"},
		{[]string{"--key", strings.Repeat("k", 129)}, "key: must be at most 128 characters"},
		{[]string{"--action", "Approve"}, "write Label=https://… (a button that opens the URL) or Label=id"},
		{[]string{"--action", "=approve"}, "write Label="},
		{[]string{"--action", "Approve=Approve"}, "actions.0.id"},
		{[]string{"--action", "A=a", "--action", "B=b", "--action", "C=c", "--action", "D=d"}, "at most 3 actions (got 4)"},
		{[]string{"--action", "A=a", "--action", "B=a"}, "actions.1.id"},
	} {
		code, out, errs := remote(append([]string{"publish", "-p", "my-saas", "-c", "payments", "-e", "x"}, c.args...)...)
		if code != 1 || out != "" || !strings.Contains(errs, c.err) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, %q, %q; want a one-line error with %q", c.args, code, out, errs, c.err)
		}
	}
}

// TestActAsSignedInMember: serve wires the API's session hook to the dashboard's
// sessions: a signed-in member acknowledges and presses through the API without a
// token, as themselves; a request from another site does not act as them.
func TestActAsSignedInMember(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	if code, _, errs := runCLI(t, data, "a long password\n", "user", "create", "ada@example.com"); code != 0 {
		t.Fatal(errs)
	}
	m := startServer(t, data, nil)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	post := func(path, token string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", m.URL()+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	req, _ := http.NewRequest("POST", m.URL()+"/v1/log", strings.NewReader(`{"project":"my-saas","channel":"payments","event":"Deploy waits",`+
		`"priority":"urgent","actions":[{"label":"Approve","id":"approve"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("publish: %v %v", res, err)
	}
	var ev struct{ ID string }
	json.NewDecoder(res.Body).Decode(&ev)
	res.Body.Close()

	// Not signed in: the token rules.
	if code, body := post("/v1/events/"+ev.ID+"/ack", ""); code != 401 {
		t.Fatalf("no session: %d %s", code, body)
	}
	if res, err := c.PostForm(m.URL()+"/login", url.Values{"email": {"ada@example.com"}, "password": {"a long password"}}); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	// From another site, the cookie does not act.
	if code, body := post("/v1/events/"+ev.ID+"/ack", "", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); code != 401 {
		t.Fatalf("cross-site: %d %s", code, body)
	}
	code, body := post("/v1/events/"+ev.ID+"/actions/approve", "", "Sec-Fetch-Site", "same-origin")
	if code != 200 || !strings.Contains(body, `"by":"ada@example.com","via":"dashboard"`) {
		t.Fatalf("press as the member: %d %s", code, body)
	}
	code, body = post("/v1/events/"+ev.ID+"/ack", "", "Sec-Fetch-Site", "same-origin")
	if code != 200 || !strings.Contains(body, `"acknowledged":{"by":"ada@example.com"`) {
		t.Fatalf("ack as the member: %d %s", code, body)
	}
}
