package deliver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// sendMail sends one mail job — an event's mail, a quiet-hours summary or a digest —
// to its member and records the attempt: a refusal with a 4xx reply or no answer is
// tried again with backoff for 24 hours, a 5xx reply is the server's final word.
func (r *Runner) sendMail(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	uid, ok := tidings.MailTargetUser(j.Target)
	if !ok || r.cfg.Mailer == nil {
		return st.FinishDelivery(ctx, j.ID) // mail was switched off since
	}
	now := r.cfg.Now()
	a, err := r.targets.get(ctx, st, j.AccountID, now)
	if err != nil {
		return err
	}
	to := a.emails[uid]
	if to == "" {
		return st.FinishDelivery(ctx, j.ID) // no longer a member
	}
	var msg *tidings.MailMessage
	var ev *tidings.Event
	switch j.Kind {
	case tidings.DeliverMail:
		if ev, err = r.jobEvent(ctx, j); ev == nil {
			return err
		}
		if ev.Ack != nil && ev.Priority == tidings.PriorityUrgent {
			// Acknowledged since this mail was queued: as with push, nobody is called
			// about what somebody has taken on.
			return st.FinishDelivery(ctx, j.ID)
		}
		links, err := r.links(ctx, uid, ev.Project)
		if err != nil {
			return err
		}
		msg = eventMail(ev, to, j.Count, links)
	case tidings.DeliverMailSummary:
		n, err := st.CountPushes(ctx, uid, tidings.PushQuiet, j.CreatedAt.Add(-24*time.Hour))
		if err != nil {
			return err
		}
		if n == 0 {
			return st.FinishDelivery(ctx, j.ID)
		}
		msg = summaryMail(n, to, mailLinks{base: strings.TrimRight(r.cfg.PublicURL, "/")})
	case tidings.DeliverDigest:
		if msg, err = r.digestMail(ctx, j, uid, to, a.prefs[uid]); msg == nil {
			if err == nil {
				err = st.FinishDelivery(ctx, j.ID) // nothing happened: nothing to say
			}
			return err
		}
	}
	msg.MessageID = j.MessageID
	out := mailOutcome(r.cfg.Mailer.Send(ctx, msg))
	if ctx.Err() != nil && out.retry {
		return ctx.Err() // cut short by a stop: the lease makes it due again
	}
	verdict, err := r.settleAs(ctx, "mail", j, out)
	r.log.Info("mail", "kind", j.Kind, "event", j.EventID, "member", uid, "attempt", j.Attempts+1,
		"outcome", verdict, "reply", out.err)
	if ev != nil && j.Count == 0 {
		switch verdict {
		case "ok":
			r.recordMail(ctx, ev.ID, uid, tidings.PushSent, now)
		case "failed", "expired":
			r.recordMail(ctx, ev.ID, uid, tidings.PushFailed, now)
		}
	}
	return err
}

// mailOutcome reads what Mailer.Send said: a *MailError is the server's reply (4xx
// temporary, 5xx final); any other error (no connection, a cut) is temporary.
func mailOutcome(err error) outcome {
	if err == nil {
		return outcome{}
	}
	var me *tidings.MailError
	if errors.As(err, &me) {
		return outcome{status: me.Code, err: strconv.Itoa(me.Code) + " " + me.Reply, retry: me.Temporary()}
	}
	return outcome{err: PublicError(err), retry: true}
}

// recordMail keeps what became of an event's mail to a member; a failure to record is
// logged only.
func (r *Runner) recordMail(ctx context.Context, eventID string, uid int64, status string, at time.Time) {
	if err := r.cfg.Store.RecordPushes(ctx, []*tidings.PushRecord{{EventID: eventID, SubscriptionID: tidings.MailTarget(uid),
		UserID: uid, Status: status, At: at}}); err != nil {
		r.log.Warn("recording a mail", "err", err)
	}
}

// links are the links of a member's mail of a project: none without a public URL.
func (r *Runner) links(ctx context.Context, uid int64, project string) (mailLinks, error) {
	if r.cfg.PublicURL == "" {
		return mailLinks{}, nil
	}
	key, err := r.mailKey(ctx)
	if err != nil {
		return mailLinks{}, err
	}
	return mailLinks{base: strings.TrimRight(r.cfg.PublicURL, "/"),
		unsubscribe: tidings.UnsubscribeURL(r.cfg.PublicURL, key, uid, project)}, nil
}
