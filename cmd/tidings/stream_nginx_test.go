package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/testenv"
)

// TestStreamThroughNginx: GET /v1/events/stream through deploy/nginx.conf in front of two
// instances: each event published (on either instance) arrives at once, not held in
// nginx's buffers, and a reconnect with Last-Event-ID gets what it missed.
func TestStreamThroughNginx(t *testing.T) {
	t.Parallel()
	clusterOnly(t)
	loc := testbackend.Location(t)
	token := setupAccount(t, loc)
	_, a := serveProcess(t, loc, "--trusted-proxies", "127.0.0.1")
	_, b := serveProcess(t, loc, "--trusted-proxies", "127.0.0.1")
	front, _ := runNginx(t, a, b)
	streamThroughNginx(t, front, token, a, b)
}

// TestNginxInFrontOfSQLite: deploy/nginx.conf in front of one server on SQLite (the
// data folder is one server's): the live stream as TestStreamThroughNginx checks it;
// a signed hook delivery of ~900 KiB passes (200) and one over 1 MiB is refused by
// nginx (413); the access log has no line of /hooks/ (the path is the credential).
func TestNginxInFrontOfSQLite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the real binary")
	}
	if testbackend.Postgres() {
		t.Skip("the PostgreSQL run has TestStreamThroughNginx, with two instances")
	}
	loc := testbackend.Location(t)
	token := setupAccount(t, loc)
	code, out, errs := runCLI(t, loc, "", "hook", "create", "--project", "my-saas", "--channel", "payments", "--source", "github")
	if code != 0 {
		t.Fatal(errs)
	}
	hookPath, secret, _ := strings.Cut(strings.TrimSpace(out), "\n")
	_, a := serveProcess(t, loc, "--trusted-proxies", "127.0.0.1")
	front, dir := runNginx(t, a)
	streamThroughNginx(t, front, token, a)

	deliver := func(size int, id string) int {
		t.Helper()
		star := fmt.Sprintf(`{"action":"created","repository":{"full_name":"acme/app"},"sender":{"login":"ada"},"padding":%q}`,
			strings.Repeat("x", size))
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(star))
		req, _ := http.NewRequest("POST", front+hookPath, strings.NewReader(star))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "star")
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("a hook delivery of %d bytes through nginx: %v", len(star), err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if status := deliver(900<<10, "big"); status != http.StatusOK {
		t.Errorf("a signed delivery of ~900 KiB through nginx: %d, want 200", status)
	}
	if status := deliver(1<<20, "too-big"); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a delivery over 1 MiB through nginx: %d, want 413", status)
	}
	log, err := os.ReadFile(filepath.Join(dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "/v1/events/stream") || strings.Contains(string(log), "/hooks/") {
		t.Errorf("nginx's access log: want the stream's lines and none of /hooks/:\n%s", log)
	}
}

// streamThroughNginx checks the live stream through nginx at front: each event
// published on one of publishOn or through front arrives at once, and a reconnect
// with Last-Event-ID gets what it missed.
func streamThroughNginx(t *testing.T, front, token string, publishOn ...string) {
	t.Helper()
	open := func(last string) (chan string, context.CancelFunc) {
		req, _ := http.NewRequest("GET", front+"/v1/events/stream?project=my-saas", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		ctx, cancel := context.WithCancel(context.Background())
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil || res.StatusCode != 200 {
			cancel()
			t.Fatalf("the stream through nginx: %v %v", res, err)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
			cancel()
			t.Fatalf("Content-Type %q", ct)
		}
		ids := make(chan string, 1024)
		go func() {
			defer res.Body.Close()
			defer close(ids)
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					ids <- id
				}
			}
		}()
		return ids, cancel
	}
	next := func(ids chan string) string {
		t.Helper()
		select {
		case id, ok := <-ids:
			if !ok {
				t.Fatal("the stream ended")
			}
			return id
		case <-time.After(30 * time.Second):
			t.Fatal("no event through nginx (buffered?)")
		}
		return ""
	}
	publish := func(on string, i int) string {
		t.Helper()
		status, _, body := send(t, "POST", on+"/v1/log", token, fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"live %d"}`, i))
		if status != 200 {
			t.Fatalf("publish: %d %s", status, body)
		}
		return strings.Split(strings.Split(body, `"id":"`)[1], `"`)[0]
	}

	ids, cancel := open("")
	var last string
	targets := append(append([]string(nil), publishOn...), front)
	for i := range 6 {
		on := targets[i%len(targets)]
		want := publish(on, i)
		// Each arrives before the next is published: nothing waits in a buffer.
		if got := next(ids); got != want {
			t.Fatalf("event %d: got %s, want %s", i, got, want)
		}
		last = want
	}
	cancel()
	var missed []string
	for i := range 5 {
		missed = append(missed, publish(front, 100+i))
	}
	ids, cancel = open(last)
	defer cancel()
	for i, want := range missed {
		if got := next(ids); got != want {
			t.Fatalf("missed event %d: got %s, want %s", i, got, want)
		}
	}
	want := publish(publishOn[0], 200)
	if got := next(ids); got != want {
		t.Fatalf("after resuming: got %s, want %s", got, want)
	}
}

// runNginx runs deploy/nginx.conf, with plain HTTP on a free port, in front of the
// instances (one or two; as TestNginxInFront does) and returns its address and its
// folder, which holds access.log.
func runNginx(t *testing.T, instances ...string) (front, dir string) {
	t.Helper()
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		testenv.Need(t, "nginx is not installed (apt-get install nginx-light)")
	}
	conf, err := os.ReadFile("../../deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	site := string(conf)
	site = strings.Replace(site, "10.0.0.11:8080", strings.TrimPrefix(instances[0], "http://"), 1)
	if len(instances) > 1 {
		site = strings.Replace(site, "10.0.0.12:8080", strings.TrimPrefix(instances[1], "http://"), 1)
	} else {
		site = regexp.MustCompile(`(?m)^\s*server 10\.0\.0\.12:8080.*$`).ReplaceAllString(site, "")
	}
	site = strings.Replace(site, "listen 443 ssl http2;", fmt.Sprintf("listen 127.0.0.1:%d;", port), 1)
	site = regexp.MustCompile(`(?m)^\s*ssl_certificate.*$`).ReplaceAllString(site, "")
	dir = t.TempDir()
	main := fmt.Sprintf(`daemon off; master_process off; pid %[1]s/nginx.pid; error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log %[1]s/access.log;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fcgi;
  uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
  include %[1]s/tidings.conf;
}
`, dir)
	os.WriteFile(filepath.Join(dir, "tidings.conf"), []byte(site), 0o600)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o600)
	cmd := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	front = fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(front + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return front, dir
			}
		}
		if time.Now().After(deadline) {
			stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer: %s %s", stdout, log)
		}
	}
}
