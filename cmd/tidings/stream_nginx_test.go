package main

import (
	"bufio"
	"context"
	"fmt"
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
	front := runNginx(t, a, b)

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
	for i := range 6 {
		on := []string{a, b, front}[i%3]
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
	want := publish(a, 200)
	if got := next(ids); got != want {
		t.Fatalf("after resuming: got %s, want %s", got, want)
	}
}

// runNginx runs deploy/nginx.conf, with plain HTTP on a free port, in front of a and b
// (as TestNginxInFront does) and returns its address.
func runNginx(t *testing.T, a, b string) string {
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
	site = strings.Replace(site, "10.0.0.11:8080", strings.TrimPrefix(a, "http://"), 1)
	site = strings.Replace(site, "10.0.0.12:8080", strings.TrimPrefix(b, "http://"), 1)
	site = strings.Replace(site, "listen 443 ssl http2;", fmt.Sprintf("listen 127.0.0.1:%d;", port), 1)
	site = regexp.MustCompile(`(?m)^\s*ssl_certificate.*$`).ReplaceAllString(site, "")
	dir := t.TempDir()
	main := fmt.Sprintf(`daemon off; master_process off; pid %[1]s/nginx.pid; error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
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
	front := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(front + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return front
			}
		}
		if time.Now().After(deadline) {
			stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer: %s %s", stdout, log)
		}
	}
}
