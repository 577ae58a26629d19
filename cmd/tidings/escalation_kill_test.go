package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/pushtest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// serveWithEnv starts `tidings serve` as its own process with extra environment
// variables (a test hook) and waits until it answers.
func serveWithEnv(t *testing.T, data string, env []string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary(t), append([]string{"serve", "--addr", addr}, append(storeArgs(data), flags...)...)...)
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return cmd, url
			}
		}
	}
	t.Fatal("server did not become ready")
	return nil, ""
}

// TestEscalationGoesOnAfterKill: an urgent event is pushed again on its schedule; the
// server is killed with SIGKILL in the middle of the escalation and started again, and
// the repeats go on from the outbox, up to the project's number and no further. The
// repeat interval is shortened by the runner's test hook (TIDINGS_TEST_REPEAT_EVERY),
// since a project's is at least a minute.
func TestEscalationGoesOnAfterKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	svc := pushtest.New(t)
	dev := svc.Device()
	const times = 6
	func() { // a member with a device, and the project's escalation, before the server starts
		ctx := context.Background()
		db := testbackend.Open(t, data)
		defer db.Close()
		a, err := db.FindAccount(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		u := &tidings.User{AccountID: a.ID, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserMember}
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		v, err := deliver.LoadVAPID(ctx, db, "", "")
		if err != nil {
			t.Fatal(err)
		}
		svc.VAPIDKey = v.Public
		if _, err := db.SavePushSubscription(ctx, &tidings.PushSubscription{AccountID: a.ID, UserID: u.ID, Endpoint: dev.Endpoint,
			P256dh: dev.P256dh, Auth: dev.Auth}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRepeatUrgent(ctx, a.ID, "my-saas", time.Minute, times); err != nil {
			t.Fatal(err)
		}
	}()
	hook := []string{deliver.EnvTestRepeatEvery + "=3s"}
	cmd, url := serveWithEnv(t, data, hook, "--allow-private-targets")
	status, resp := post(t, url+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"DB down","notify":true,"priority":"urgent"}`)
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}
	var ev struct{ ID, Priority string }
	json.Unmarshal([]byte(resp), &ev)
	if ev.Priority != "urgent" {
		t.Fatalf("the answer has no urgent priority: %s", resp)
	}
	next := func() deliver.Message {
		t.Helper()
		p := dev.Next(t, 30*time.Second)
		var m deliver.Message
		if err := json.Unmarshal(p.Plaintext, &m); err != nil || m.EventID != ev.ID {
			t.Fatalf("push %s: %v", p.Plaintext, err)
		}
		return m
	}
	if m := next(); m.Renotify || !m.Ack {
		t.Fatalf("first push %+v", m)
	}
	repeats := 0
	for ; repeats < 2; repeats++ {
		if m := next(); !m.Renotify || !m.Ack {
			t.Fatalf("repeat %+v", m)
		}
	}
	// A repeat was pushed: once its job is finished (well within a second) the next one
	// waits in the outbox for its time, 3 s after it.
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killedAt := time.Now()

	serveWithEnv(t, data, hook, "--allow-private-targets")
	for ; repeats < times; repeats++ {
		if m := next(); !m.Renotify {
			t.Fatalf("repeat after the restart %+v", m)
		}
	}
	// No more than the project's number, across both processes.
	for _, p := range dev.Drain(5 * time.Second) {
		t.Fatalf("a push after the last repeat: %s", p.Plaintext)
	}
	t.Logf("%d repeats in all, %d after the kill; the last %v after it", repeats, repeats-2, time.Since(killedAt).Round(time.Second))
}
