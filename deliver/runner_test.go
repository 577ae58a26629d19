package deliver_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// env is a store with account acme (project my-saas, channel payments) and a receiver.
type env struct {
	t       *testing.T
	dir     string
	store   outboxStore
	account *tidings.Account
}

// outboxStore is a store that signals new outbox jobs: both backends are.
type outboxStore interface {
	tidings.Store
	OutboxSignal() <-chan struct{}
}

// TestMain runs the delivery tests on SQLite, then on PostgreSQL.
func TestMain(m *testing.M) { testbackend.Main(m) }

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: testbackend.Location(t)}
	e.open()
	e.account = testbackend.Seed(t, e.store, "acme").Account
	return e
}

func (e *env) open() {
	e.store = testbackend.Open(e.t, e.dir).(outboxStore)
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) webhook(url, format, events string) *tidings.Webhook {
	e.t.Helper()
	w := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: url, Format: format, Events: events}
	if format == tidings.FormatStandard {
		w.Secret = tidings.NewWebhookSecret()
	}
	e.must(e.store.CreateWebhook(context.Background(), e.account.ID, w))
	return w
}

func (e *env) publish(ev tidings.NewEvent) *tidings.Event {
	e.t.Helper()
	ev.Project, ev.Channel = "my-saas", "payments"
	if ev.Parser == "" {
		ev.Parser = tidings.ParserText
	}
	stored, err := e.store.PublishEvent(context.Background(), e.account.ID, &ev)
	e.must(err)
	return stored
}

// run starts a runner that may reach loopback receivers, with quick retries.
func (e *env) run(cfg deliver.Config) {
	e.t.Helper()
	e.t.Cleanup(e.start(cfg))
}

// start is run, stopped when the test calls the function it returns (once).
func (e *env) start(cfg deliver.Config) (stop func()) {
	e.t.Helper()
	if cfg.Store == nil {
		cfg.Store = e.store
	}
	cfg.Signal = e.store.OutboxSignal()
	if cfg.Client == nil {
		cfg.Client = deliver.NewClient(true)
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(int) time.Duration { return 20 * time.Millisecond }
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { deliver.New(cfg).Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// receiver records what it is sent and answers with the statuses given, then 200.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*recorded
	statuses []int
	header   http.Header // sent with every answer
	got      chan *recorded
}

type recorded struct {
	method string
	url    *url.URL // path and query as received
	header http.Header
	body   []byte
	at     time.Time
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses, header: http.Header{}, got: make(chan *recorded, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		rec := &recorded{method: req.Method, url: req.URL, header: req.Header.Clone(), body: body, at: time.Now()}
		r.mu.Lock()
		r.requests = append(r.requests, rec)
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		for k, v := range r.header {
			w.Header()[k] = v
		}
		r.mu.Unlock()
		w.WriteHeader(status)
		r.got <- rec
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) next(t *testing.T, within time.Duration) *recorded {
	t.Helper()
	select {
	case rec := <-r.got:
		return rec
	case <-time.After(within):
		t.Fatalf("nothing delivered within %v", within)
		return nil
	}
}

func (r *receiver) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case rec := <-r.got:
		t.Fatalf("unexpected delivery: %s", rec.body)
	case <-time.After(d):
	}
}

// verify checks a Standard Webhooks signature as a receiver would: HMAC-SHA256 of
// "{id}.{timestamp}.{body}" with the base64-decoded secret after "whsec_".
func verify(t *testing.T, secret string, rec *recorded) {
	t.Helper()
	id, ts, sig := rec.header.Get("webhook-id"), rec.header.Get("webhook-timestamp"), rec.header.Get("webhook-signature")
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) != 32 {
		t.Fatalf("secret %q", secret)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(rec.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !strings.HasPrefix(id, "msg_") || sig != want {
		t.Fatalf("signature %q for id %q, want %q", sig, id, want)
	}
	sec, _ := strconv.ParseInt(ts, 10, 64)
	if d := time.Since(time.Unix(sec, 0)); d < -time.Minute || d > time.Minute {
		t.Fatalf("webhook-timestamp %s is %v off", ts, d)
	}
}

// TestStandardWebhook: a notify event reaches a standard webhook signed, with the event
// as /v1/log answers it; a 500 is retried with the same webhook-id; the attempts are kept.
func TestStandardWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rx := newReceiver(t, 500)
	w := e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookNotify)
	e.run(deliver.Config{})
	e.publish(tidings.NewEvent{Event: "not for webhooks"})
	ev := e.publish(tidings.NewEvent{Event: "New Subscription", Icon: "💰", Notify: true,
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})

	first := rx.next(t, 30*time.Second)
	second := rx.next(t, 30*time.Second)
	verify(t, w.Secret, first)
	verify(t, w.Secret, second)
	if first.header.Get("webhook-id") != second.header.Get("webhook-id") {
		t.Fatal("a retry has another webhook-id: receivers cannot drop the repeat")
	}
	var msg struct {
		Type, Timestamp string
		Data            tidings.EventJSON
	}
	if err := json.Unmarshal(second.body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "event.published" || msg.Data.ID != ev.ID || msg.Data.Event != "New Subscription" || msg.Data.Icon != "💰" ||
		msg.Data.Project != "my-saas" || msg.Data.Channel != "payments" || len(msg.Data.Tags) != 1 {
		t.Fatalf("body %s", second.body)
	}
	if _, err := time.Parse(time.RFC3339, msg.Timestamp); err != nil {
		t.Fatalf("timestamp %q", msg.Timestamp)
	}
	rx.quiet(t, 300*time.Millisecond) // the event without notify was not sent

	var attempts []*tidings.WebhookAttempt
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		attempts, _ = e.store.ListWebhookAttempts(context.Background(), e.account.ID, w.ID)
		if len(attempts) == 2 {
			break
		}
	}
	if len(attempts) != 2 || attempts[0].Status != 200 || attempts[1].Status != 500 || attempts[0].Attempt != 2 {
		t.Fatalf("attempts: %+v", attempts)
	}
	// The job leaves the outbox once its answer is recorded.
	n := -1
	for deadline := time.Now().Add(30 * time.Second); n != 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n, _, _ = e.store.PendingDeliveries(context.Background())
	}
	if n != 0 {
		t.Fatalf("%d jobs left", n)
	}
}

// TestChatFormats: Slack, Discord and ntfy get the bodies their incoming webhooks take,
// Markdown reduced to text, with a link when the public URL is set.
func TestChatFormats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	slack, discord, ntfy := newReceiver(t), newReceiver(t), newReceiver(t)
	e.webhook(slack.URL, tidings.FormatSlack, tidings.WebhookAll)
	e.webhook(discord.URL, tidings.FormatDiscord, tidings.WebhookAll)
	e.webhook(ntfy.URL, tidings.FormatNtfy, tidings.WebhookAll)
	e.run(deliver.Config{PublicURL: "https://tidings.example.com/"})
	ev := e.publish(tidings.NewEvent{Event: "Deploy <failed> & @everyone", Icon: "🚨", Parser: tidings.ParserMarkdown,
		Description: "## Build\n\nThe **api** job failed: `exit 1`"})
	link := "https://tidings.example.com/p/my-saas/events/" + ev.ID

	var s struct{ Text string }
	json.Unmarshal(slack.next(t, 30*time.Second).body, &s)
	if !strings.Contains(s.Text, "*🚨 Deploy &lt;failed&gt; &amp; @everyone* in #payments") ||
		!strings.Contains(s.Text, "Build The api job failed: exit 1") || !strings.Contains(s.Text, "<"+link+"|Open in Tidings>") {
		t.Fatalf("slack text %q", s.Text)
	}
	var d struct {
		Content         string
		AllowedMentions struct{ Parse []string } `json:"allowed_mentions"`
	}
	json.Unmarshal(discord.next(t, 30*time.Second).body, &d)
	if !strings.Contains(d.Content, "**🚨 Deploy <failed> & @everyone**") || !strings.Contains(d.Content, link) ||
		d.AllowedMentions.Parse == nil || len(d.AllowedMentions.Parse) != 0 {
		t.Fatalf("discord %+v", d)
	}
	n := ntfy.next(t, 30*time.Second)
	if n.header.Get("Title") != "🚨 Deploy <failed> & @everyone" || n.header.Get("Click") != link ||
		n.header.Get("Markdown") != "yes" || n.header.Get("Tags") != "my-saas,payments" || !strings.Contains(string(n.body), "**api**") {
		t.Fatalf("ntfy headers %v body %q", n.header, n.body)
	}
	if n.header.Get("Priority") != "" || n.header.Get("Actions") != "" {
		t.Fatalf("a default event without actions: ntfy headers %v", n.header)
	}

	// Priority, the sender's link and URL buttons reach ntfy as its own headers.
	e.publish(tidings.NewEvent{Event: "Disk full", Priority: "high", URL: "https://grafana.example.com/d/1",
		Actions: []tidings.Action{{Label: "Runbook", URL: "https://wiki.example.com/disk"}, {Label: "Approve", ID: "approve"},
			{Label: "Free, now; please", URL: "https://ops.example.com/free?a=1,2"}}})
	slack.next(t, 30*time.Second)
	discord.next(t, 30*time.Second)
	n = ntfy.next(t, 30*time.Second)
	if n.header.Get("Priority") != "4" || n.header.Get("Click") != "https://grafana.example.com/d/1" ||
		n.header.Get("Actions") != `view, Runbook, https://wiki.example.com/disk; view, "Free, now; please", "https://ops.example.com/free?a=1,2"` {
		t.Fatalf("ntfy headers of an intent event %v", n.header)
	}
}

// TestRetryAfterHonoured: a 429 with Retry-After is tried again no sooner.
func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rx := newReceiver(t, 429)
	rx.header.Set("Retry-After", "1")
	e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookAll)
	e.run(deliver.Config{})
	e.publish(tidings.NewEvent{Event: "x"})
	first := rx.next(t, 30*time.Second)
	second := rx.next(t, 30*time.Second)
	if gap := second.at.Sub(first.at); gap < 900*time.Millisecond {
		t.Fatalf("retried after %v despite Retry-After: 1", gap)
	}
}

// TestFinalAnswerNotRetried: a 400 is the receiver's final word.
func TestFinalAnswerNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rx := newReceiver(t, 400)
	e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookAll)
	e.run(deliver.Config{})
	e.publish(tidings.NewEvent{Event: "x"})
	rx.next(t, 30*time.Second)
	rx.quiet(t, 300*time.Millisecond)
}

// TestPrivateTargetsRefused: without --allow-private-targets nothing is sent to a
// loopback address, and the attempt says why.
func TestPrivateTargetsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rx := newReceiver(t)
	w := e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookAll)
	e.run(deliver.Config{Client: deliver.NewClient(false)})
	e.publish(tidings.NewEvent{Event: "x"})
	var attempts []*tidings.WebhookAttempt
	for deadline := time.Now().Add(30 * time.Second); len(attempts) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		attempts, _ = e.store.ListWebhookAttempts(context.Background(), e.account.ID, w.ID)
	}
	if len(attempts) != 1 || !strings.Contains(attempts[0].Error, "--allow-private-targets") {
		t.Fatalf("attempts %+v", attempts)
	}
	rx.quiet(t, 300*time.Millisecond)
}

// TestHangingReceiverDoesNotHoldOthers: one receiver that never answers does not delay
// another.
func TestHangingReceiverDoesNotHoldOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	fast := newReceiver(t)
	e.webhook(hang.URL, tidings.FormatStandard, tidings.WebhookAll)
	e.webhook(fast.URL, tidings.FormatStandard, tidings.WebhookAll)
	e.run(deliver.Config{})
	for i := 0; i < 5; i++ {
		e.publish(tidings.NewEvent{Event: "x"})
	}
	for i := 0; i < 5; i++ {
		fast.next(t, 30*time.Second)
	}
}

// TestDeliveredAfterRestart: an event acknowledged while nothing could send it (the
// process stopped before its runner did) is delivered by the next start.
func TestDeliveredAfterRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rx := newReceiver(t)
	e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookAll)
	ev := e.publish(tidings.NewEvent{Event: "acknowledged, then the process died"})
	e.must(e.store.Close())
	e.open()
	e.run(deliver.Config{})
	var msg struct{ Data tidings.EventJSON }
	json.Unmarshal(rx.next(t, 30*time.Second).body, &msg)
	if msg.Data.ID != ev.ID {
		t.Fatalf("delivered %+v", msg.Data)
	}
}

// TestHangingWebhooksDoNotStallPush: with every place of the webhook pool held by
// receivers that never answer, push notifications still go out: each kind of job has
// its own pool of workers.
func TestHangingWebhooksDoNotStallPush(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	release := make(chan struct{})
	hanging := make(chan struct{}, 16)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hanging <- struct{}{}
		<-release
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	for i := 0; i < 3; i++ {
		e.webhook(hang.URL, tidings.FormatStandard, tidings.WebhookAll)
	}
	phone, _ := e.device(e.user("ada@example.com"))
	e.env.run(deliver.Config{VAPID: e.vapid, Workers: 2})
	e.publish(tidings.NewEvent{Event: "first", Notify: true})
	for i := 0; i < 2; i++ { // both webhook places hang
		select {
		case <-hanging:
		case <-time.After(30 * time.Second):
			t.Fatal("the webhooks were never called")
		}
	}
	phone.Next(t, 30*time.Second)
	e.publish(tidings.NewEvent{Event: "second", Notify: true})
	if m := message(t, phone.Next(t, 30*time.Second)); m.Title != "second" {
		t.Fatalf("the second push: %+v", m)
	}
}

// TestStopLetsDeliveriesFinish: a runner told to stop lets the request under way
// finish within its grace period, and the job is done, not left to be sent again;
// one that outlasts the grace period is cut short and stays due.
func TestStopLetsDeliveriesFinish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer bool // the receiver answers once the runner is stopping
		left   int  // jobs left in the outbox
	}{{"answers within the grace period", true, 0}, {"never answers", false, 1}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			arrived, stopping, release := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
			rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				<-stopping
				if !c.answer {
					<-release
				}
			}))
			t.Cleanup(rx.Close)
			t.Cleanup(func() { close(release) }) // before rx.Close, which waits for the handler
			e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookAll)
			grace := time.Minute // generous: the answer comes at once
			if !c.answer {
				grace = 50 * time.Millisecond
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() {
				done <- deliver.New(deliver.Config{Store: e.store, Signal: e.store.OutboxSignal(), Client: deliver.NewClient(true),
					Grace: grace, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Run(ctx)
			}()
			e.publish(tidings.NewEvent{Event: "under way"})
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("nothing was sent")
			}
			cancel()
			close(stopping)
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("Run did not return")
			}
			if n, _, err := e.store.PendingDeliveries(context.Background()); err != nil || n != c.left {
				t.Fatalf("jobs left: %d (%v), want %d", n, err, c.left)
			}
		})
	}
}
