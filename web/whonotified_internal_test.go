package web

import (
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestRecordsText: a member's line from what became of their devices and mail, with
// the mail record's detail: the server's reply, or why it was not sent.
func TestRecordsText(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for _, c := range []struct {
		name       string
		push, mail map[string]int
		detail     string
		want       string
	}{
		{"push and email", map[string]int{tidings.PushSent: 2}, map[string]int{tidings.PushSent: 1}, "", "push to 2 devices, email sent"},
		{"email only", nil, map[string]int{tidings.PushSent: 1}, "", "email sent"},
		{"email pending", map[string]int{tidings.PushSent: 1}, map[string]int{tidings.PushPending: 1}, "", "push to 1 device, email being sent"},
		{"email failed", nil, map[string]int{tidings.PushFailed: 1}, "", "email failed"},
		{"not a recipient by either", map[string]int{tidings.PushNotRecipient: 2}, map[string]int{tidings.PushNotRecipient: 1}, "", "not a recipient"},
		{"muted", map[string]int{tidings.PushMuted: 1}, map[string]int{tidings.PushMuted: 1}, "", "muted"},
		{"quiet", nil, map[string]int{tidings.PushQuiet: 1}, "", "quiet hours (in the summary)"},
		{"flood", map[string]int{tidings.PushCollapsed: 3}, nil, "", "over the flood limit (in a collapsed notification)"},
		{"email retrying", map[string]int{tidings.PushSent: 1}, map[string]int{tidings.PushPending: 1}, "451 4.3.0 try again later",
			"push to 1 device, email being sent, retrying after: 451 4.3.0 try again later"},
		{"email refused", nil, map[string]int{tidings.PushFailed: 1}, "550 5.1.1 no such mailbox", "email failed: 550 5.1.1 no such mailbox"},
		{"no mail server", nil, map[string]int{tidings.PushFailed: 1}, "this server has no mail server now (--smtp-url)",
			"email failed: this server has no mail server now (--smtp-url)"},
		{"acknowledged", map[string]int{tidings.PushSent: 1}, map[string]int{tidings.PushUnsent: 1}, "acknowledged before it went out",
			"push to 1 device, email not sent: acknowledged before it went out"},
		{"mixed", map[string]int{tidings.PushSent: 1, tidings.PushGone: 1}, map[string]int{tidings.PushQuiet: 1}, "", "push to 1 device, 1 device unsubscribed, email in the quiet-hours summary"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := recordsText(c.push, c.mail, c.detail); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	s := &Server{}
	for _, c := range []struct {
		routes  tidings.Routes
		devices int
		want    string
	}{
		{tidings.Routes{}, 2, "chose no notifications for this project"},
		{tidings.Routes{Push: true}, 0, "no device with notifications on"},
		{tidings.Routes{Email: true}, 0, "chose email, which this server does not send"},
		{tidings.Routes{Push: true}, 1, "not notified yet"},
	} {
		if got := s.unrecordedText(c.routes, c.devices); got != c.want {
			t.Errorf("%+v with %d devices: %q, want %q", c.routes, c.devices, got, c.want)
		}
	}
}
