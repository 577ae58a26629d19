package deliver

import (
	"fmt"
	"time"

	"github.com/tidings-dev/tidings"
)

// mailCollapseEvery is how often a member over the flood limit gets a collapsed mail
// of a channel: a mail cannot replace a pending one, as a push's Topic does, so it
// comes less often than a collapsed push.
const mailCollapseEvery = time.Minute

// mailTarget is what an event becomes for a member's mailbox, by the member's verdict:
// a mail (collapsed over the flood limit), a summary at the end of their quiet hours,
// or nothing (status "": counted for the next collapsed mail, no record). The job is
// nil when nothing is to be sent.
func (r *Runner) mailTarget(j *tidings.Delivery, ev *tidings.Event, uid int64, v verdict, now time.Time) (*tidings.Delivery, string) {
	target := tidings.MailTarget(uid)
	switch v.status {
	case tidings.PushQuiet:
		// One summary mail per member and quiet period: its Message-ID is the job's
		// MessageID, unique in the outbox. It counts the member's quiet records of the
		// day before the period's end (CreatedAt).
		return &tidings.Delivery{Kind: tidings.DeliverMailSummary, AccountID: j.AccountID, Target: target,
			MessageID: fmt.Sprintf("<quiet.%d.%d@%s>", uid, v.until.Unix(), mailHost(r.cfg.PublicURL)),
			NextAt:    v.until, CreatedAt: v.until}, v.status
	case tidings.PushPending:
	default:
		return nil, v.status
	}
	status, n := tidings.PushPending, 0
	if ev.Priority != tidings.PriorityUrgent {
		normal, more := r.mailFlood.admit(target, ev.Project+"/"+ev.Channel, now)
		if !normal && more == 0 {
			return nil, ""
		}
		if more > 0 {
			status, n = tidings.PushCollapsed, more
		}
	}
	return r.mailJob(j.AccountID, ev, uid, n, now, j.CreatedAt), status
}

// mailJob mails ev to a member: its MessageID is the mail's Message-ID, made once here
// so that every retry carries the same one.
func (r *Runner) mailJob(accountID int64, ev *tidings.Event, uid int64, more int, now, created time.Time) *tidings.Delivery {
	return &tidings.Delivery{Kind: tidings.DeliverMail, AccountID: accountID, EventID: ev.ID, Target: tidings.MailTarget(uid),
		MessageID: newMailID(mailHost(r.cfg.PublicURL)), Count: more, NextAt: now, CreatedAt: created}
}
