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
// tried again with backoff for 24 hours, a 5xx reply is the server's final word. An
// event's mail that is not sent at all (no mail server now, a member who left, an
// urgent event acknowledged meanwhile) says so in its record, not "being sent".
func (r *Runner) sendMail(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	uid, ok := tidings.MailTargetUser(j.Target)
	if !ok {
		return st.FinishDelivery(ctx, j.ID)
	}
	now := r.cfg.Now()
	if r.cfg.Mailer == nil {
		// Queued by a server with mail; this one was started without --smtp-url.
		return r.mailNotSent(ctx, j, uid, tidings.PushFailed, noMailer, now)
	}
	a, err := r.targets.get(ctx, st, j.AccountID, now)
	if err != nil {
		return err
	}
	to := a.emails[uid]
	if to == "" {
		return r.mailNotSent(ctx, j, uid, tidings.PushUnsent, notAMember, now)
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
			return r.mailNotSent(ctx, j, uid, tidings.PushUnsent, acknowledged, now)
		}
		links, err := r.links(ctx, uid, ev.Project)
		if err != nil {
			return err
		}
		msg = eventMail(ev, to, j.Count, links)
	case tidings.DeliverMailSummary:
		if msg, err = r.summaryMail(ctx, j, uid, to, a.prefs[uid]); msg == nil {
			if err == nil {
				err = st.FinishDelivery(ctx, j.ID) // nothing was held
			}
			return err
		}
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
		// The record keeps the server's last reply: the event page shows it.
		switch verdict {
		case "ok":
			r.recordMail(ctx, ev.ID, uid, tidings.PushSent, "", now)
		case "retry":
			r.recordMail(ctx, ev.ID, uid, tidings.PushPending, out.err, now)
		case "failed":
			r.recordMail(ctx, ev.ID, uid, tidings.PushFailed, out.err, now)
		case "expired":
			r.recordMail(ctx, ev.ID, uid, tidings.PushFailed, out.err+" (given up after 24 hours)", now)
		}
	}
	return err
}

// Why an event's mail was not sent, as its record's Detail and the log say it.
const (
	noMailer     = "this server has no mail server now (--smtp-url)" // PushFailed
	notAMember   = "no longer a member"                              // PushUnsent
	acknowledged = "acknowledged before it went out"                 // PushUnsent
)

// mailNotSent finishes a mail job that is not sent, and says why in the log and, for
// an event's mail, in its record (which said "being sent" since it was queued).
func (r *Runner) mailNotSent(ctx context.Context, j *tidings.Delivery, uid int64, status, why string, now time.Time) error {
	r.log.Info("mail not sent", "kind", j.Kind, "event", j.EventID, "member", uid, "why", why)
	if j.Kind == tidings.DeliverMail && j.EventID != "" && j.Count == 0 {
		r.recordMail(ctx, j.EventID, uid, status, why, now)
	}
	return r.cfg.Store.FinishDelivery(ctx, j.ID)
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
func (r *Runner) recordMail(ctx context.Context, eventID string, uid int64, status, detail string, at time.Time) {
	if err := r.cfg.Store.RecordPushes(ctx, []*tidings.PushRecord{{EventID: eventID, SubscriptionID: tidings.MailTarget(uid),
		UserID: uid, Status: status, At: at, Detail: detail}}); err != nil {
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
