package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestPublishFile: `tidings publish --file` sends a file of events in batches, fills in
// -p and -c, names each refused line and why, exits 1 if any was refused; with
// --idempotency-key the same file sent again stores nothing twice. A single publish
// with a key is stored once too.
func TestPublishFile(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	for _, args := range [][]string{{"account", "create", "acme"}, {"project", "create", "my-saas"}, {"channel", "create", "my-saas", "deploys"}} {
		if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, token, _ := runCLI(t, loc, "", "token", "create", "--access", "full")
	token = strings.TrimSpace(token)
	remote := func(stdin string, args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), append(args, "--url", m.URL(), "--token", token), strings.NewReader(stdin), &out, &errs)
		return code, out.String(), errs.String()
	}
	var lines []string
	for i := range 250 {
		switch i {
		case 17:
			lines = append(lines, `{"event": "broken"`)
		case 120:
			lines = append(lines, `{"channel":"nowhere","event":"lost"}`)
		case 200:
			lines = append(lines, `{"event":"   "}`)
		case 201:
			lines = append(lines, "")
		default:
			lines = append(lines, fmt.Sprintf(`{"event":"Imported %d","tags":{"n":%d}}`, i, i))
		}
	}
	file := filepath.Join(t.TempDir(), "events.ndjson")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testbackend.Open(t, loc)
	a, _ := s.FindAccount(context.Background(), "acme")
	count := func() int {
		n, err := s.CountEvents(context.Background(), a.ID, "my-saas", "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for run := range 2 {
		code, out, errs := remote("", "publish", "--file", file, "-p", "my-saas", "-c", "deploys", "--idempotency-key", "import-1")
		if code != 1 || out != "246 of 249 events stored, in 3 requests\n" {
			t.Fatalf("run %d: exit %d, %q, %q", run, code, out, errs)
		}
		for _, want := range []string{"line 18: not a JSON object", "line 121: 404 channel_not_found", "line 201: 400 validation_failed: event:",
			"3 of 249 events were refused"} {
			if !strings.Contains(errs, want) {
				t.Fatalf("run %d: %q not in\n%s", run, want, errs)
			}
		}
		if n := count(); n != 246 {
			t.Fatalf("run %d: %d events stored, want 246", run, n)
		}
	}
	// From standard input, without a key: sent again, stored again.
	code, out, errs := remote(`{"project":"my-saas","channel":"deploys","event":"piped"}`, "publish", "--file", "-")
	if code != 0 || out != "1 of 1 events stored, in 1 request\n" || count() != 247 {
		t.Fatalf("stdin: exit %d, %q, %q", code, out, errs)
	}
	// Flags that belong in the file's lines are refused.
	if code, _, errs := remote("", "publish", "--file", file, "-e", "x"); code != 1 || !strings.Contains(errs, "give each event's fields in its line") {
		t.Fatalf("--file with -e: exit %d, %q", code, errs)
	}
	// One event with a key: twice, one event, the same id.
	var ids []string
	for range 2 {
		code, out, errs := remote("", "publish", "-p", "my-saas", "-c", "deploys", "-e", "Deployed v2", "--idempotency-key", "deploy-v2")
		if code != 0 {
			t.Fatalf("keyed publish: exit %d, %q", code, errs)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	if ids[0] != ids[1] || count() != 248 {
		t.Fatalf("the keyed publish twice: %v, %d events", ids, count())
	}
	for range 2 {
		code, out, errs := remote("", "insight", "-p", "my-saas", "-t", "Deploys", "-v", "1", "--change", "increment", "--idempotency-key", "deploys-count")
		if code != 0 || out != "Deploys: 1\n" {
			t.Fatalf("keyed increment: exit %d, %q, %q", code, out, errs)
		}
	}
	if _, err := s.FindEvent(context.Background(), a.ID, "my-saas", ids[0]); err != nil {
		t.Fatal(err)
	}
}
