package main

import (
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

// TestNginxInFront runs deploy/nginx.conf, as documented in docs/deploy.md, in front
// of two instances on one database: requests through it reach both, events published
// through it are read back through it, and the client's address arrives as forwarded.
func TestNginxInFront(t *testing.T) {
	t.Parallel()
	clusterOnly(t)
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		testenv.Need(t, "nginx is not installed (apt-get install nginx-light)")
	}
	loc := testbackend.Location(t)
	token := setupAccount(t, loc)
	_, a := serveProcess(t, loc, "--trusted-proxies", "127.0.0.1")
	_, b := serveProcess(t, loc, "--trusted-proxies", "127.0.0.1")

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
	// One process (no master and workers), in the foreground: the test can stop it.
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
	defer out.Close()
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
				break
			}
		}
		if time.Now().After(deadline) {
			stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer: %s %s", stdout, log)
		}
	}
	for i := 0; i < 20; i++ {
		if status, _, body := send(t, "POST", front+"/v1/log", token,
			fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"through nginx %d"}`, i)); status != 200 {
			t.Fatalf("publish through nginx: %d %s", status, body)
		}
		if status, _, body := send(t, "PATCH", front+"/v1/insight", token, `{"project":"my-saas","title":"Hits","value":{"$inc":1}}`); status != 200 {
			t.Fatalf("increment through nginx: %d %s", status, body)
		}
	}
	if _, _, body := send(t, "GET", front+"/v1/events?project=my-saas&limit=50", token, ""); strings.Count(body, "through nginx") != 20 {
		t.Fatalf("events read through nginx: %s", body)
	}
	if _, _, body := send(t, "GET", front+"/v1/insights?project=my-saas", token, ""); !strings.Contains(body, `"value":"20"`) {
		t.Fatalf("insight through nginx: %s", body)
	}
}
