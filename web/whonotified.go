package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings"
)

// Who was notified of a notify event, by which route, and why not: one line per
// member of the account, from what became of each of their devices and of their mail
// (tidings.PushRecord; a mail's SubscriptionID is tidings.MailTarget), and, where
// nothing was recorded, from their routes and devices.

type memberLine struct {
	Email string
	Text  string // "push to 2 devices, email sent", "not a recipient", …
}

// reasons are the statuses that say why a member was not notified at all: when every
// record of a member has one of them, it is the whole line.
var reasons = map[string]string{
	tidings.PushNotRecipient: "not a recipient",
	tidings.PushMuted:        "muted",
	tidings.PushQuiet:        "quiet hours (in the summary)",
	tidings.PushCollapsed:    "over the flood limit (in a collapsed notification)",
}

func (s *Server) whoNotified(r *http.Request, ev *tidings.Event, records []*tidings.PushRecord) ([]memberLine, error) {
	ctx, account := r.Context(), sessionFrom(r).account.ID
	us, err := s.store.ListUsers(ctx, account)
	if err != nil {
		return nil, err
	}
	saved, err := s.store.AccountRoutes(ctx, account)
	if err != nil {
		return nil, err
	}
	subs, err := s.store.AccountPushSubscriptions(ctx, account)
	if err != nil {
		return nil, err
	}
	devices := map[int64]int{}
	for _, d := range subs {
		devices[d.UserID]++
	}
	type tally struct {
		push, mail map[string]int
		detail     string // the mail record's: the server's reply, or why it was not sent
	}
	byUser := map[int64]*tally{}
	for _, rec := range records {
		uid, isMail := tidings.MailTargetUser(rec.SubscriptionID)
		if !isMail {
			uid = rec.UserID
		}
		t := byUser[uid]
		if t == nil {
			t = &tally{push: map[string]int{}, mail: map[string]int{}}
			byUser[uid] = t
		}
		if isMail {
			t.mail[rec.Status]++
			t.detail = rec.Detail
		} else {
			t.push[rec.Status]++
		}
	}
	var out []memberLine
	for _, u := range us {
		line := memberLine{Email: u.Email}
		if t := byUser[u.ID]; t != nil {
			line.Text = recordsText(t.push, t.mail, t.detail)
		} else {
			line.Text = s.unrecordedText(tidings.RoutesFor(saved, u.ID, ev.Project, ev.Channel), devices[u.ID])
		}
		out = append(out, line)
	}
	return out, nil
}

// recordsText says what became of a member's devices and mail; detail is the mail
// record's (tidings.PushRecord.Detail).
func recordsText(push, mail map[string]int, detail string) string {
	statuses := map[string]bool{}
	for st := range push {
		statuses[st] = true
	}
	for st := range mail {
		statuses[st] = true
	}
	if len(statuses) == 1 {
		for st := range statuses {
			if why, ok := reasons[st]; ok {
				return why
			}
		}
	}
	devices := func(n int) string { return plural(n, "device") }
	var parts []string
	for _, st := range []struct{ status, words string }{
		{tidings.PushSent, "push to %d"}, {tidings.PushPending, "push to %d being delivered"}, {tidings.PushFailed, "push to %d failed"},
		{tidings.PushGone, "%d unsubscribed"}, {tidings.PushMuted, "push muted"}, {tidings.PushQuiet, "push in the quiet-hours summary"},
		{tidings.PushCollapsed, "push collapsed (flood limit)"}, {tidings.PushNotRecipient, "push: not a recipient"},
	} {
		if n := push[st.status]; n > 0 {
			parts = append(parts, strings.Replace(st.words, "%d", devices(n), 1))
		}
	}
	for _, st := range []struct{ status, words, detail string }{
		{tidings.PushSent, "email sent", ""}, {tidings.PushPending, "email being sent", ", retrying after: "},
		{tidings.PushFailed, "email failed", ": "}, {tidings.PushUnsent, "email not sent", ": "},
		{tidings.PushMuted, "email muted", ""}, {tidings.PushQuiet, "email in the quiet-hours summary", ""},
		{tidings.PushCollapsed, "email collapsed (flood limit)", ""}, {tidings.PushNotRecipient, "email: not a recipient", ""},
	} {
		if mail[st.status] > 0 {
			if st.detail != "" && detail != "" {
				st.words += st.detail + detail
			}
			parts = append(parts, st.words)
		}
	}
	for st, n := range push { // a status this page does not know yet
		if !known(st) {
			parts = append(parts, "push "+st+" ("+strconv.Itoa(n)+")")
		}
	}
	return strings.Join(parts, ", ")
}

func known(status string) bool {
	switch status {
	case tidings.PushSent, tidings.PushPending, tidings.PushFailed, tidings.PushGone, tidings.PushMuted, tidings.PushQuiet,
		tidings.PushCollapsed, tidings.PushNotRecipient:
		return true
	}
	return false
}

// unrecordedText says why nothing was recorded for a member: their routes, their
// devices, or the server's mail.
func (s *Server) unrecordedText(routes tidings.Routes, devices int) string {
	switch {
	case !routes.Push && !routes.Email:
		return "chose no notifications for this project"
	case routes.Email && s.mailer == nil && (!routes.Push || devices == 0):
		return "chose email, which this server does not send"
	case routes.Push && !routes.Email && devices == 0:
		return "no device with notifications on"
	}
	return "not notified yet"
}
