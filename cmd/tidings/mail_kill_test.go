package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/mail"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/smtptest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestKilledServerMailsEveryEventOnce: members whose route is email; notify events
// are published and the server is killed with SIGKILL while their mails are being
// sent (the SMTP server holds each message a moment before it answers, so some are
// taken without the sender hearing it). Started again, the server mails what is left:
// every event's mail to every member arrives, and a mail sent twice — the one whose
// answer the dead server never heard — carries the same Message-ID both times, so the
// receiver can drop the copy. On PostgreSQL the dead server's leases are shortened by
// the runner's test hook (TIDINGS_TEST_LEASE); the embedded store releases them at
// start.
func TestKilledServerMailsEveryEventOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	// Under the flood limit of 10 mails a minute per member: each event is one mail.
	const events = 8
	members := []string{"ada@example.com", "bob@example.com", "carol@example.com", "dan@example.com"}
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	func() { // the members, before the server starts
		ctx := context.Background()
		db := testbackend.Open(t, data)
		defer db.Close()
		a, err := db.FindAccount(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		for _, email := range members {
			u := &tidings.User{AccountID: a.ID, Email: email, PasswordHash: "x", Role: tidings.UserMember}
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			if err := db.SetRoutes(ctx, a.ID, u.ID, "my-saas", "", &tidings.Routes{Email: true}); err != nil {
				t.Fatal(err)
			}
		}
	}()
	srv := smtptest.Start(t, smtptest.Options{DataDelay: 250 * time.Millisecond})
	metrics := freeAddr(t)
	flags := []string{"--smtp-url", srv.URL(), "--mail-from", "Tidings <tidings@example.com>", "--metrics-addr", metrics}
	hook := []string{deliver.EnvTestLease + "=3s"}
	cmd, url := serveWithEnv(t, data, hook, flags...)

	var want []string // "event to member" of every delivery
	for i := range events {
		name := fmt.Sprintf("Order %d", i)
		if status, resp := post(t, url+"/v1/log", token, fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":%q,"notify":true}`, name)); status != 200 {
			t.Fatalf("publish %s: %d %s", name, status, resp)
		}
		for _, m := range members {
			want = append(want, name+" to "+m)
		}
	}
	// Some mails are taken; others are under way, held by the SMTP server.
	srv.Wait(t, 8)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	atKill := len(srv.Messages())

	serveWithEnv(t, data, hook, flags...)
	// Every delivery's mail arrives, and the outbox is empty: what the dead server held
	// was sent again.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if got := mailed(t, srv.Messages()); len(got) == len(want) && queueDepth(t, metrics) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes, mails of %d of %d deliveries; %d jobs in the outbox", len(mailed(t, srv.Messages())), len(want), queueDepth(t, metrics))
		}
	}
	got := mailed(t, srv.Messages())
	ids, copies := map[string]string{}, 0
	for _, d := range want {
		mails := got[d]
		if len(mails) == 0 {
			t.Fatalf("no mail of %s", d)
		}
		for _, id := range mails[1:] {
			if id != mails[0] {
				t.Fatalf("the mails of %s carry Message-IDs %q: a copy must carry the first one's", d, mails)
			}
		}
		if other, ok := ids[mails[0]]; ok {
			t.Fatalf("%s and %s share the Message-ID %s", d, other, mails[0])
		}
		ids[mails[0]] = d
		copies += len(mails) - 1
	}
	if atKill >= len(want) {
		t.Fatalf("every mail was taken before the kill (%d): the restart was not tested", atKill)
	}
	t.Logf("%d deliveries: %d mails taken before the kill, %d after; %d sent twice with the same Message-ID", len(want), atKill,
		len(srv.Messages())-atKill, copies)
}

// mailed reads the accepted messages: the Message-IDs of the mails of each delivery,
// by "event to member" (the event's name from the subject "Order 1 · #payments").
func mailed(t *testing.T, msgs []smtptest.Message) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range msgs {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatalf("not a mail: %v\n%s", err, m.Data)
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err != nil {
			t.Fatal(err)
		}
		name, _, ok := strings.Cut(subject, " · #")
		if !ok || len(m.To) != 1 || msg.Header.Get("Message-ID") == "" {
			t.Fatalf("a mail to %v, subject %q, Message-ID %q", m.To, subject, msg.Header.Get("Message-ID"))
		}
		d := name + " to " + m.To[0]
		out[d] = append(out[d], msg.Header.Get("Message-ID"))
	}
	return out
}

// queueDepth reads the outbox's depth from the server's metrics (-1 when it does not
// answer).
func queueDepth(t *testing.T, addr string) int {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "tidings_delivery_queue_depth "); ok {
			var n int
			if _, err := fmt.Sscan(v, &n); err == nil {
				return n
			}
		}
	}
	return -1
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
