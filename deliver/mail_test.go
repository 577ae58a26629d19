package deliver_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
)

// mailbox is the mail server seen from the runner (tidings.Mailer): it keeps every
// attempt and answers with the errors given, then accepts.
type mailbox struct {
	mu       sync.Mutex
	attempts []*tidings.MailMessage
	answers  []error
	got      chan *tidings.MailMessage
}

func newMailbox(answers ...error) *mailbox {
	return &mailbox{answers: answers, got: make(chan *tidings.MailMessage, 1000)}
}

func (b *mailbox) Send(ctx context.Context, m *tidings.MailMessage) error {
	b.mu.Lock()
	b.attempts = append(b.attempts, m)
	var err error
	if len(b.answers) > 0 {
		err, b.answers = b.answers[0], b.answers[1:]
	}
	b.mu.Unlock()
	if err == nil {
		b.got <- m
	}
	return err
}

func (b *mailbox) next(t *testing.T) *tidings.MailMessage {
	t.Helper()
	select {
	case m := <-b.got:
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no mail within 30 s")
		return nil
	}
}

func (b *mailbox) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-b.got:
		t.Fatalf("unexpected mail %q to %s", m.Subject, m.To)
	case <-time.After(d):
	}
}

func (b *mailbox) tries() []*tidings.MailMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*tidings.MailMessage(nil), b.attempts...)
}

// mailEnv is a push env whose runner also mails, on a clock.
type mailEnv struct {
	*pushEnv
	box *mailbox
	clk *clock
}

const publicURL = "https://tidings.example.com"

func newMailEnv(t *testing.T, box *mailbox, push bool) *mailEnv {
	e := &mailEnv{pushEnv: newPushEnv(t), box: box, clk: &clock{}}
	cfg := deliver.Config{Mailer: box, PublicURL: publicURL, Now: e.clk.Now}
	if push {
		cfg.VAPID = e.vapid
	}
	e.env.run(cfg)
	return e
}

// member adds a member with routes for the project ("" leaves the default, push).
func (e *mailEnv) member(email, by string) *tidings.User {
	e.t.Helper()
	u := e.user(email)
	if by != "" {
		r, err := tidings.ParseRoutes(by)
		e.must(err)
		e.must(e.store.SetRoutes(context.Background(), e.account.ID, u.ID, "my-saas", "", &r))
	}
	return u
}

// record waits until the event's record of the target is settled (not pending) and
// returns its status.
func (e *env) record(eventID, target string) string {
	e.t.Helper()
	var status string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		recs, err := e.store.EventPushes(context.Background(), e.account.ID, eventID)
		e.must(err)
		for _, r := range recs {
			if r.SubscriptionID == target {
				status = r.Status
			}
		}
		if status != "" && status != tidings.PushPending {
			return status
		}
	}
	e.t.Fatalf("the record of %s for %s is %q after 30 s", eventID, target, status)
	return ""
}

var messageID = regexp.MustCompile(`^<m\.[0-9a-f]{24}@tidings\.example\.com>$`)

// TestMailToMember: a member whose route is email gets a mail of a notify event (and
// none of one without notify), with the unsubscribe link of the member and project and
// a Message-ID of the public host; the member who chose push gets no mail; both
// records say sent.
func TestMailToMember(t *testing.T) {
	t.Parallel()
	e := newMailEnv(t, newMailbox(), true)
	ada := e.member("ada@example.com", "email")
	bob := e.member("bob@example.com", "")
	bobDev, bobSub := e.device(bob)
	e.publish(tidings.NewEvent{Event: "not for mail"})
	ev := e.publish(tidings.NewEvent{Event: "New Subscription", Icon: "💰", Notify: true, Parser: tidings.ParserMarkdown,
		Description: "A **premium** plan", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})
	m := e.box.next(t)
	key, err := tidings.MailKey(context.Background(), e.store)
	e.must(err)
	if m.To != "ada@example.com" || m.Subject != "💰 New Subscription · #payments" || !messageID.MatchString(m.MessageID) ||
		m.ListUnsubscribe != tidings.UnsubscribeURL(publicURL, key, ada.ID, "my-saas") {
		t.Fatalf("mail to %s %q id %q unsubscribe %q", m.To, m.Subject, m.MessageID, m.ListUnsubscribe)
	}
	if !strings.Contains(m.Text, publicURL+"/p/my-saas/events/"+ev.ID) || !strings.Contains(m.HTML, "<strong>premium</strong>") {
		t.Fatalf("mail parts:\n%s\n%s", m.Text, m.HTML)
	}
	message(t, bobDev.Next(t, 30*time.Second))
	if s := e.record(ev.ID, tidings.MailTarget(ada.ID)); s != tidings.PushSent {
		t.Fatalf("ada's mail record %q", s)
	}
	if s := e.record(ev.ID, bobSub.ID); s != tidings.PushSent {
		t.Fatalf("bob's device record %q", s)
	}
	e.box.quiet(t, pollQuiet)
}

// TestMailWithoutPush: with mail and no push key, email routes are served alone.
func TestMailWithoutPush(t *testing.T) {
	t.Parallel()
	e := newMailEnv(t, newMailbox(), false)
	e.member("ada@example.com", "push,email")
	dev, _ := e.device(e.member("bob@example.com", "push"))
	e.publish(tidings.NewEvent{Event: "deploy", Notify: true})
	if m := e.box.next(t); m.To != "ada@example.com" {
		t.Fatalf("mail to %s", m.To)
	}
	dev.Quiet(t, pollQuiet)
}

// TestMailRetried: a 4xx reply and a cut connection are tried again with the same
// Message-ID, and the mail is delivered once; a 5xx reply is final: one attempt, the
// record says failed, and the outbox is empty.
func TestMailRetried(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		answers []error
		tries   int
		status  string
		detail  string // the record's, once settled: the server's final reply
	}{
		{"4xx then accepted", []error{&tidings.MailError{Code: 451, Reply: "4.3.0 try again later"}}, 2, tidings.PushSent, ""},
		{"connection cut, twice", []error{errors.New("EOF"), errors.New("read: connection reset by peer")}, 3, tidings.PushSent, ""},
		{"5xx", []error{&tidings.MailError{Code: 550, Reply: "5.1.1 no such user"}}, 1, tidings.PushFailed, "550 5.1.1 no such user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newMailEnv(t, newMailbox(c.answers...), false)
			ada := e.member("ada@example.com", "email")
			ev := e.publish(tidings.NewEvent{Event: "x", Notify: true})
			if s := e.record(ev.ID, tidings.MailTarget(ada.ID)); s != c.status {
				t.Fatalf("record %q, want %q", s, c.status)
			}
			if rec := e.recordOf(ev.ID, tidings.MailTarget(ada.ID), func(*tidings.PushRecord) bool { return true }); rec.Detail != c.detail {
				t.Fatalf("the record's detail %q, want %q", rec.Detail, c.detail)
			}
			e.settled(0)
			tries := e.box.tries()
			if len(tries) != c.tries {
				t.Fatalf("%d attempts, want %d", len(tries), c.tries)
			}
			for _, m := range tries {
				if m.MessageID != tries[0].MessageID {
					t.Fatalf("Message-IDs %q and %q: a retry must carry the first one", tries[0].MessageID, m.MessageID)
				}
			}
		})
	}
}

// TestMailQuietHours: during a member's quiet hours nothing is mailed; at their end one
// summary says how many arrived and lists them, with the link that stops all email.
func TestMailQuietHours(t *testing.T) {
	t.Parallel()
	e := newMailEnv(t, newMailbox(), false)
	ctx := context.Background()
	night := e.member("night@example.com", "email")
	now := e.clk.Now().UTC()
	start := now.Hour()*60 + now.Minute()
	e.must(e.store.SetNotifyPrefs(ctx, night.ID, &tidings.NotifyPrefs{QuietStart: start, QuietEnd: (start + 2) % 1440, TimeZone: "UTC"}))
	var last *tidings.Event
	for i := 0; i < 3; i++ {
		last = e.publish(tidings.NewEvent{Event: "paid", Notify: true})
	}
	if s := e.record(last.ID, tidings.MailTarget(night.ID)); s != tidings.PushQuiet {
		t.Fatalf("record %q", s)
	}
	e.settled(1) // the summary, due at the end of the quiet hours
	e.box.quiet(t, pollQuiet)
	e.clk.Advance(3 * time.Minute)
	m := e.box.next(t)
	if m.To != "night@example.com" || m.Subject != "3 events arrived during your quiet hours" || !strings.HasPrefix(m.MessageID, "<quiet.") {
		t.Fatalf("summary %q %q", m.Subject, m.MessageID)
	}
	key, err := tidings.MailKey(ctx, e.store)
	e.must(err)
	if m.ListUnsubscribe != tidings.UnsubscribeURL(publicURL, key, night.ID, tidings.UnsubscribeAll) ||
		strings.Count(m.Text, "- paid\n  my-saas / #payments · ") != 3 || !strings.Contains(m.Text, publicURL+"/p/my-saas/events/"+last.ID) {
		t.Fatalf("summary List-Unsubscribe %q, text:\n%s", m.ListUnsubscribe, m.Text)
	}
	e.settled(0)
	e.box.quiet(t, pollQuiet)
}

// TestMailBurstCollapsed: 40 events in a burst make at most 10 mails a minute and one
// collapsed mail that says how many more came, not 40 mails.
func TestMailBurstCollapsed(t *testing.T) {
	t.Parallel()
	e := newMailEnv(t, newMailbox(), false)
	e.member("ada@example.com", "email")
	for i := 0; i < 40; i++ {
		e.publish(tidings.NewEvent{Event: "deploy loop", Notify: true})
	}
	e.settled(0)
	normal, collapsed := 0, 0
	for _, m := range e.box.tries() {
		if strings.Contains(m.Text, "beyond your limit") {
			collapsed++
		} else {
			normal++
		}
	}
	if normal != tidings.PushesPerMinute || collapsed != 1 {
		t.Fatalf("%d mails and %d collapsed for 40 events", normal, collapsed)
	}
}

// recordOf waits until the event's record of the target satisfies ok and returns it.
func (e *env) recordOf(eventID, target string, ok func(*tidings.PushRecord) bool) *tidings.PushRecord {
	e.t.Helper()
	var last *tidings.PushRecord
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		recs, err := e.store.EventPushes(context.Background(), e.account.ID, eventID)
		e.must(err)
		for _, r := range recs {
			if r.SubscriptionID == target {
				if last = r; ok(r) {
					return r
				}
			}
		}
	}
	e.t.Fatalf("the record of %s for %s after 30 s: %+v", eventID, target, last)
	return nil
}

// TestMailNotSentSaysWhy: while a mail waits for its retry, its record keeps the mail
// server's reply; a mail that is then not sent at all — the server restarted without
// a mail server, the member left, the urgent event was acknowledged — ends with a
// record that says why, not "being sent" forever, and nothing more is mailed.
func TestMailNotSentSaysWhy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		priority  string
		mailer    bool // the restarted runner has the mail server
		meanwhile func(e *mailEnv, ev *tidings.Event, ada *tidings.User)
		status    string
		detail    string
	}{
		{"no mail server", "", false, func(*mailEnv, *tidings.Event, *tidings.User) {}, tidings.PushFailed,
			"this server has no mail server now (--smtp-url)"},
		{"member left", "", true, func(e *mailEnv, _ *tidings.Event, ada *tidings.User) {
			e.must(e.store.DeleteUser(context.Background(), e.account.ID, ada.ID))
		}, tidings.PushUnsent, "no longer a member"},
		{"acknowledged", "urgent", true, func(e *mailEnv, ev *tidings.Event, _ *tidings.User) {
			_, _, err := e.store.AcknowledgeEvent(context.Background(), e.account.ID, ev.ID, "bob@example.com", e.clk.Now())
			e.must(err)
		}, tidings.PushUnsent, "acknowledged before it went out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			box := newMailbox(&tidings.MailError{Code: 451, Reply: "4.3.0 try again later"})
			e := &mailEnv{pushEnv: newPushEnv(t), box: box, clk: &clock{}}
			cfg := deliver.Config{Mailer: box, PublicURL: publicURL, Now: e.clk.Now, Backoff: func(int) time.Duration { return time.Hour }}
			stop := e.env.start(cfg)
			ada := e.member("ada@example.com", "email")
			ev := e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: c.priority})
			target := tidings.MailTarget(ada.ID)
			rec := e.recordOf(ev.ID, target, func(r *tidings.PushRecord) bool { return r.Detail != "" })
			if rec.Status != tidings.PushPending || rec.Detail != "451 4.3.0 try again later" {
				t.Fatalf("the record of a mail waiting for its retry: %+v", rec)
			}
			stop()
			c.meanwhile(e, ev, ada)
			if !c.mailer {
				cfg.Mailer = nil
			}
			e.env.run(cfg)
			e.clk.Advance(2 * time.Hour) // the retry is due
			rec = e.recordOf(ev.ID, target, func(r *tidings.PushRecord) bool { return r.Status != tidings.PushPending })
			if rec.Status != c.status || rec.Detail != c.detail {
				t.Fatalf("record %q %q, want %q %q", rec.Status, rec.Detail, c.status, c.detail)
			}
			if n := len(box.tries()); n != 1 {
				t.Fatalf("%d attempts to send, want the first only", n)
			}
		})
	}
}
