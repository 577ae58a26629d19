package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestTailFollowsServer: tidings tail against a real server's GET /v1/events/stream,
// through a proxy whose connections the test cuts: the events published while tail
// was away arrive when it is back, each once and in order; readable lines name the
// channel and the event; a revoked token ends tail with a one-line error and exit 1.
func TestTailFollowsServer(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	m := startServer(t, data, nil)
	for _, args := range [][]string{
		{"account", "create", "acme"},
		{"project", "create", "my-saas"},
		{"channel", "create", "my-saas", "payments"},
		{"channel", "create", "my-saas", "deploys"},
	} {
		if code, _, errs := runCLI(t, data, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, tok, _ := runCLI(t, data, "", "token", "create", "--access", "full", "--name", "tail")
	tok = strings.TrimSpace(tok)
	target, _ := url.Parse(m.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)

	var published []string
	publish := func(channel, name string) {
		t.Helper()
		status, resp := post(t, m.URL()+"/v1/log", tok, fmt.Sprintf(`{"project":"my-saas","channel":%q,"event":%q,"icon":"💰","tags":{"plan":"pro"}}`, channel, name))
		if status != 200 {
			t.Fatalf("publish: %d %s", status, resp)
		}
		var ev struct{ ID string }
		json.Unmarshal([]byte(resp), &ev)
		if channel == "payments" {
			published = append(published, ev.ID)
		}
	}
	publish("payments", "Before tail") // not shown: tail starts with what arrives after it

	var out, errs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"tail", "--url", proxy.URL, "--token", tok, "-p", "my-saas", "-c", "payments", "--json"}, strings.NewReader(""), &out, &errs)
	}()
	ids := func() []string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var e struct{ ID, Channel string }
			if line != "" && json.Unmarshal([]byte(line), &e) == nil {
				got = append(got, e.ID)
			}
		}
		return got
	}
	// The stream is open once an event published now arrives; from that one on, tail
	// must show every event.
	published = published[:0]
	tailWait(t, "tail's first event", func() bool {
		if len(ids()) > 0 {
			return true
		}
		publish("payments", fmt.Sprintf("Paid %d", len(published)))
		time.Sleep(50 * time.Millisecond)
		return false
	})
	published = published[slices.Index(published, ids()[0]):]
	tailWait(t, "every event so far", func() bool { return len(ids()) >= len(published) })
	for round := range 3 {
		proxy.CloseClientConnections() // tail is cut off …
		publish("deploys", "Elsewhere")
		for i := range 3 {
			publish("payments", fmt.Sprintf("Missed %d.%d", round, i)) // … while these happen
		}
		tailWait(t, "the missed events", func() bool { return len(ids()) >= len(published) })
	}
	publish("payments", "Live again")
	tailWait(t, "the live event", func() bool { return len(ids()) >= len(published) })
	if got := strings.Join(ids(), " "); got != strings.Join(published, " ") {
		t.Fatalf("tail printed\n%s\nwant (each once, in order)\n%s", got, strings.Join(published, " "))
	}
	if !strings.Contains(errs.String(), "connecting again") {
		t.Errorf("standard error: %q", errs.String())
	}
	cancel()
	if c := <-exit; c != 0 {
		t.Errorf("tail after Ctrl-C: exit %d, stderr %q", c, errs.String())
	}

	// A channel that does not exist (a typo) is final: one line and exit 1, no retries.
	typoCtx, typoCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer typoCancel()
	var typoOut, typoErrs syncBuffer
	code := run(typoCtx, []string{"tail", "--url", m.URL(), "--token", tok, "-p", "my-saas", "--channel", "typo"}, strings.NewReader(""), &typoOut, &typoErrs)
	if lines := strings.Split(strings.TrimSpace(typoErrs.String()), "\n"); code != 1 || len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "tidings tail: ") || !strings.Contains(lines[0], "channel_not_found") || typoOut.String() != "" {
		t.Errorf("tail --channel typo: exit %d, stdout %q, stderr %q", code, typoOut.String(), typoErrs.String())
	}

	// Readable lines, then a revocation ends tail: exit 1, one line.
	var out2, errs2 syncBuffer
	exit2 := make(chan int, 1)
	go func() {
		exit2 <- run(context.Background(), []string{"tail", "--url", m.URL(), "--token", tok, "-p", "my-saas"}, strings.NewReader(""), &out2, &errs2)
	}()
	tailWait(t, "a readable line", func() bool {
		if strings.Contains(out2.String(), "💰 #deploys  Readable  plan=pro") {
			return true
		}
		publish("deploys", "Readable")
		time.Sleep(50 * time.Millisecond)
		return false
	})
	id := strings.Split(strings.TrimPrefix(tok, "tds_"), "_")[0]
	if code, _, e := runCLI(t, data, "", "token", "revoke", id); code != 0 {
		t.Fatal(e)
	}
	tailWait(t, "tail to end after the revocation", func() bool {
		select {
		case code = <-exit2:
			return true
		default:
			return false
		}
	})
	if code != 1 || !strings.Contains(errs2.String(), "revoked") || !strings.HasSuffix(errs2.String(), "\n") {
		t.Errorf("after revocation: exit %d, stderr %q", code, errs2.String())
	}
	if lines := strings.Split(strings.TrimSpace(errs2.String()), "\n"); !strings.Contains(lines[len(lines)-1], "tidings tail: ") {
		t.Errorf("the last line of standard error: %q", lines[len(lines)-1])
	}
}
