package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/testenv"
)

// TestWebhookDeliveredAfterKill: an event answered 200 reaches its webhook even when the
// process is killed (SIGKILL) before it could deliver; the message is signed with the
// secret `webhook create` printed.
func TestWebhookDeliveredAfterKill(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	var up atomic.Bool
	refused := make(chan struct{}, 10)
	got := make(chan *http.Request, 10)
	bodies := make(chan []byte, 10)
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable) // down while the first process lives
			refused <- struct{}{}
			return
		}
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	defer rx.Close()
	// The receiver is on loopback: webhook create refuses it unless told it may.
	create := []string{"webhook", "create", "--project", "my-saas", "--url", rx.URL, "--events", "all", "--name", "audit log"}
	if code, out, errs := runCLI(t, data, "", create...); code != 1 || out != "" ||
		errs != "tidings webhook create: --url "+rx.URL+" is a loopback or private address, which webhooks may not reach: give --allow-private-targets for a closed network (the server needs it too)\n" {
		t.Fatalf("webhook create to %s: exit %d, %q, %q; want a one-line refusal", rx.URL, code, out, errs)
	}
	if _, list, _ := runCLI(t, data, "", "webhook", "list"); list != "" {
		t.Fatalf("the refused webhook was saved: %q", list)
	}
	code, out, errs := runCLI(t, data, "", append(create, "--allow-private-targets")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "wh_") || !strings.HasPrefix(lines[1], "whsec_") || errs != "" {
		t.Fatalf("webhook create --allow-private-targets: %d %q %q", code, out, errs)
	}
	if _, list, _ := runCLI(t, data, "", "webhook", "list"); !strings.Contains(list, lines[0]) || !strings.Contains(list, "audit log") ||
		strings.Contains(list, lines[1]) {
		t.Fatalf("webhook list: %q", list)
	}

	cmd, url := serveProcess(t, data, "--allow-private-targets")
	status, resp := post(t, url+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Paid","notify":true}`)
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}
	var ev struct{ ID string }
	json.Unmarshal([]byte(resp), &ev)
	// Killed once its first attempt failed, so that the job waits for a retry rather than
	// for a lease: a process killed in the middle of an attempt holds the job for the
	// lease's 2 minutes on PostgreSQL, whose instances share the outbox (and the test's
	// 20 s would end first; CI hit that once under load).
	select {
	case <-refused:
	case <-time.After(20 * time.Second):
		t.Fatal("the first process never tried to deliver")
	}
	time.Sleep(time.Second) // its failed attempt is recorded
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	up.Store(true)
	serveProcess(t, data, "--allow-private-targets")
	select {
	case r := <-got:
		body := <-bodies
		ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
		want, _ := deliver.Sign(lines[1], r.Header.Get("webhook-id"), ts, body)
		if r.Header.Get("webhook-signature") != want || !strings.Contains(string(body), ev.ID) {
			t.Fatalf("delivered %s with signature %q, want %q", body, r.Header.Get("webhook-signature"), want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the acknowledged event never reached its webhook after the restart")
	}
}

// standardWebhooksJS is the official Standard Webhooks library for JavaScript, which
// verifies what our webhooks send as a receiver would.
const standardWebhooksJS = "standardwebhooks@1.1.1"

// TestStandardWebhooksLibraryVerifies: the official standardwebhooks library (npm)
// verifies the signature of each type we send — event.published, event.action and
// event.acknowledged — with the secret `webhook create` printed, and reads the bodies
// the contract names.
func TestStandardWebhooksLibraryVerifies(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Need(t, "Node.js is needed to verify webhooks with the standardwebhooks library: apt-get install nodejs npm")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Need(t, "npm is needed to install the standardwebhooks library: apt-get install npm")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", standardWebhooksJS)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		testenv.Need(t, "npm install %s failed (no registry?): %v\n%s", standardWebhooksJS, err, out)
	}

	type delivery struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	got := make(chan delivery, 10)
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{Headers: map[string]string{"webhook-id": r.Header.Get("webhook-id"),
			"webhook-timestamp": r.Header.Get("webhook-timestamp"), "webhook-signature": r.Header.Get("webhook-signature")}, Body: string(b)}
	}))
	defer rx.Close()
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	code, out, errs := runCLI(t, data, "", "webhook", "create", "--project", "my-saas", "--url", rx.URL, "--allow-private-targets")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("webhook create: %d %q %s", code, out, errs)
	}
	secret := lines[1]
	m := startServer(t, data, func(c *Config) { c.AllowPrivateTargets = true })
	status, resp := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Refund requested","notify":true,`+
		`"actions":[{"label":"Approve","id":"approve"}]}`)
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}
	var ev struct{ ID string }
	json.Unmarshal([]byte(resp), &ev)
	next := func() delivery {
		t.Helper()
		select {
		case d := <-got:
			return d
		case <-time.After(30 * time.Second):
			t.Fatal("the webhook got nothing")
			return delivery{}
		}
	}
	var all []delivery
	all = append(all, next())
	a, err := m.store.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.store.PressAction(context.Background(), &tidings.ActionPress{AccountID: a.ID, EventID: ev.ID, ActionID: "approve",
		By: "ada@example.com", Via: "Pixel 8", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	all = append(all, next())
	if _, _, err := m.store.AcknowledgeEvent(context.Background(), a.ID, ev.ID, "ada@example.com", time.Now()); err != nil {
		t.Fatal(err)
	}
	all = append(all, next())

	b, _ := json.Marshal(all)
	if err := os.WriteFile(filepath.Join(dir, "deliveries.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
const { Webhook } = require("standardwebhooks");
const wh = new Webhook(process.env.SECRET.replace(/^whsec_/, ""));
for (const d of require("./deliveries.json")) {
  const msg = wh.verify(d.body, d.headers);
  const x = msg.data;
  const by = x.by === undefined ? "" : " by=" + x.by + " at=" + !isNaN(Date.parse(x.at));
  const action = x.action === undefined ? "" : " action=" + x.action.id + "/" + x.action.label + " via=" + x.via;
  const ev = msg.type === "event.published" ? x : x.event;
  const acked = ev.acknowledged ? " acknowledged=" + ev.acknowledged.by : "";
  console.log(msg.type + " " + ev.id + by + action + acked);
}
try {
  const d = require("./deliveries.json")[0];
  wh.verify(d.body.replace("Refund", "Refunx"), d.headers);
  console.log("tampered: accepted");
} catch (e) {
  console.log("tampered: refused");
}
`
	file := filepath.Join(dir, "verify.js")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, node, file)
	run.Dir = dir
	run.Env = append(os.Environ(), "SECRET="+secret)
	outb, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("standardwebhooks refused a message: %v\n%s", err, outb)
	}
	want := "event.published " + ev.ID + "\n" +
		"event.action " + ev.ID + " by=ada@example.com at=true action=approve/Approve via=Pixel 8\n" +
		"event.acknowledged " + ev.ID + " by=ada@example.com at=true acknowledged=ada@example.com\n" +
		"tampered: refused\n"
	if string(outb) != want {
		t.Fatalf("standardwebhooks read:\n%s\nwant:\n%s", outb, want)
	}
}
