package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestIdleConnectionsDoNotStarveTheServer is issue 35's: anonymous clients that each
// send one GET /healthz and then stay idle, more of them than the server's limit of open
// files. Before the connection cap, accept failed with "too many open files" and
// publishes timed out; now the idle ones are closed to make room, and a publish and a
// health check are answered.
func TestIdleConnectionsDoNotStarveTheServer(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	const nofile, idle = 256, 400
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// ulimit -n sets the hard limit too: the server cannot raise it.
	args := append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile), binary(t),
		"serve", "--addr", addr, "--token-rate", "0", "--public-ip-rate", "0"}, storeArgs(data)...)
	cmd := exec.Command("sh", args...)
	var logs syncBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + addr
	waitReady(t, url)

	// The idle clients: each sends one request and keeps its connection. Past the
	// limit, the old server never accepted them: their answers are not waited for
	// beyond a deadline.
	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	for range idle {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err) // the kernel's backlog (4096) holds far more
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		wg.Go(func() {
			if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				res.Body.Close()
			}
		})
	}
	wg.Wait()

	// A new client: a publish and a health check, each on a fresh connection.
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", url+"/v1/log", strings.NewReader(`{"project":"my-saas","channel":"payments","event":"after the flood"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("publish with %d idle connections open: %v\nserver log:\n%s", idle, err, tail(logs.String()))
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("publish: %d", res.StatusCode)
	}
	res, err = client.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("healthz with %d idle connections open: %v", idle, err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("healthz: %d", res.StatusCode)
	}
	if strings.Contains(logs.String(), "too many open files") {
		t.Fatalf("the server ran out of files:\n%s", tail(logs.String()))
	}
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
	}
	t.Fatal("server did not become ready")
}

// tail is the end of a log, for a failure's message.
func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
