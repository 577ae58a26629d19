package deliver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tidings-dev/tidings"
)

// expand turns an event's job into one job per target — each webhook that wants it,
// and for a notify event each device and mailbox of the account's members, by their
// routes, that did not mute it — atomically, with a record of what becomes of it for
// each device and mailbox.
func (r *Runner) expand(ctx context.Context, j *tidings.Delivery) error {
	ev, err := r.jobEvent(ctx, j)
	if ev == nil {
		return err
	}
	hooks, err := r.cfg.Store.WebhooksFor(ctx, j.AccountID, ev.Project, ev.Channel)
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	var jobs []*tidings.Delivery
	for _, w := range hooks {
		if w.Wants(ev) {
			jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverWebhook, AccountID: j.AccountID, EventID: ev.ID,
				Target: w.ID, MessageID: tidings.NewID("msg_"), NextAt: now, CreatedAt: j.CreatedAt})
		}
	}
	var records []*tidings.PushRecord
	if ev.Notify && (r.cfg.VAPID != nil || r.cfg.Mailer != nil) {
		a, err := r.audience(ctx, j.AccountID, ev, now)
		if err != nil {
			return err
		}
		memberJobs, recs := r.memberTargets(j, ev, a, now)
		jobs, records = append(jobs, memberJobs...), recs
		if ev.Priority == tidings.PriorityUrgent && ev.ShouldPush(now) {
			later, err := r.urgentJobs(ctx, j, ev, a.rcpt, now)
			if err != nil {
				return err
			}
			jobs = append(jobs, later...)
		}
	}
	return r.cfg.Store.ReplaceDelivery(ctx, j.ID, jobs, records)
}

// audience is what decides who is notified of an event, and how: the account's
// members, devices and choices, the recipients of the event's channel, and the
// members' routes. Each part is cached for a second.
type audience struct {
	*accountTargets
	rcpt   tidings.Recipients
	routes []*tidings.MemberRoute
}

func (r *Runner) audience(ctx context.Context, accountID int64, ev *tidings.Event, now time.Time) (*audience, error) {
	targets, err := r.targets.get(ctx, r.cfg.Store, accountID, now)
	if err != nil {
		return nil, err
	}
	rcpt, err := r.recipients.get(ctx, r.cfg.Store, accountID, ev.Project, ev.Channel, now)
	if err != nil {
		return nil, err
	}
	routes, err := r.routes.get(ctx, r.cfg.Store, accountID, now)
	if err != nil {
		return nil, err
	}
	return &audience{accountTargets: targets, rcpt: rcpt, routes: routes}, nil
}

// members are the account's users, in ID order (the same order every time).
func (a *audience) members() []int64 {
	ids := make([]int64, 0, len(a.emails))
	for id := range a.emails {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// subsOf are a member's devices.
func (a *audience) subsOf(userID int64) []*tidings.PushSubscription {
	var out []*tidings.PushSubscription
	for _, s := range a.subs {
		if s.UserID == userID {
			out = append(out, s)
		}
	}
	return out
}

// prefs are a member's choices (the defaults when none were saved).
func (a *audience) prefsOf(userID int64) *tidings.NotifyPrefs {
	if p := a.prefs[userID]; p != nil {
		return p
	}
	return &tidings.NotifyPrefs{}
}

// verdict is what a member's choices make of an event, before flood control: the
// record's status (PushPending: send it) and, for quiet hours, when they end.
type verdict struct {
	status string
	until  time.Time
}

// decide applies, in this order: the recipients of the event's channel, the member's
// mutes and "urgent only", their quiet hours (not for an urgent event).
func decide(recipient bool, p *tidings.NotifyPrefs, ev *tidings.Event, now time.Time) verdict {
	switch {
	case !recipient:
		return verdict{status: tidings.PushNotRecipient}
	case p.Holds(ev):
		return verdict{status: tidings.PushMuted}
	}
	if until, quiet := p.QuietUntil(now); quiet && ev.Priority != tidings.PriorityUrgent {
		return verdict{status: tidings.PushQuiet, until: until}
	}
	return verdict{status: tidings.PushPending}
}

// memberTargets decides, member by member and by their routes for the event's
// channel, what a notify event becomes for each of their devices (when push is set up)
// and for their mailbox (when mail is): nothing for a member who is not among the
// recipients, else a push or a mail, a collapsed one (over the flood limit), nothing
// (muted or "urgent only", or counted for the next collapsed one), or a line in the
// summary at the end of the member's quiet hours. An urgent event passes quiet hours
// and flood control. Deciding here, not when sending, keeps a burst from becoming a
// job per event and target. A member whose routes leave a way out gets no record of it.
func (r *Runner) memberTargets(j *tidings.Delivery, ev *tidings.Event, a *audience, now time.Time) ([]*tidings.Delivery, []*tidings.PushRecord) {
	var jobs []*tidings.Delivery
	var records []*tidings.PushRecord
	urgent := ev.Priority == tidings.PriorityUrgent
	for _, uid := range a.members() {
		routes := tidings.RoutesFor(a.routes, uid, ev.Project, ev.Channel)
		v := decide(a.rcpt.Includes(a.emails[uid]), a.prefsOf(uid), ev, now)
		if routes.Push && r.cfg.VAPID != nil {
			for _, sub := range a.subsOf(uid) {
				status := v.status
				switch v.status {
				case tidings.PushQuiet:
					// One summary per user and quiet period: the message id makes it unique. It
					// counts the user's quiet records since a day before the period's end: the
					// previous period ended then.
					jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverQuietSummary, AccountID: j.AccountID,
						Target: strconv.FormatInt(uid, 10), MessageID: fmt.Sprintf("quiet-%d-%d", uid, v.until.Unix()),
						NextAt: v.until, CreatedAt: v.until.Add(-24 * time.Hour)})
				case tidings.PushPending:
					normal, n := true, 0
					if !urgent {
						normal, n = r.flood.admit(sub.ID, ev.Project+"/"+ev.Channel, now)
					}
					if !normal && n == 0 {
						// Counted for the device's next collapsed notification. No record: a
						// burst must not cost a write per event and device.
						continue
					}
					if n > 0 {
						status = tidings.PushCollapsed
					}
					jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverPush, AccountID: j.AccountID, EventID: ev.ID,
						Target: sub.ID, MessageID: tidings.NewID("push_"), Count: n, NextAt: now, CreatedAt: j.CreatedAt})
				}
				records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: uid, Status: status, At: now})
			}
		}
		if routes.Email && r.cfg.Mailer != nil {
			job, status := r.mailTarget(j, ev, uid, v, now)
			if status == "" {
				continue // counted for the member's next collapsed mail
			}
			if job != nil {
				jobs = append(jobs, job)
			}
			records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: tidings.MailTarget(uid), UserID: uid, Status: status, At: now})
		}
	}
	return jobs, records
}

// jobEvent reads a job's event fresh from the store. When the event is gone (deleted
// meanwhile) it finishes the job and returns a nil event with FinishDelivery's error;
// callers return err whenever ev is nil.
func (r *Runner) jobEvent(ctx context.Context, j *tidings.Delivery) (*tidings.Event, error) {
	ev, err := r.cfg.Store.FindEventByID(ctx, j.AccountID, j.EventID)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return nil, r.cfg.Store.FinishDelivery(ctx, j.ID)
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}
