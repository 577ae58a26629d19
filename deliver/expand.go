package deliver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/tidings-dev/tidings"
)

// expand turns an event's job into one job per target — each webhook that wants it,
// and for a notify event each device of the account's members that did not mute it —
// atomically, with a record of what becomes of it for each device.
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
	if ev.Notify && r.cfg.VAPID != nil {
		pushJobs, recs, err := r.pushTargets(ctx, j, ev, now)
		if err != nil {
			return err
		}
		jobs, records = append(jobs, pushJobs...), recs
		if ev.Priority == tidings.PriorityUrgent && ev.ShouldPush(now) {
			first, err := r.firstRepeat(ctx, j.AccountID, ev, now)
			if err != nil {
				return err
			}
			if first != nil {
				first.CreatedAt = j.CreatedAt
				jobs = append(jobs, first)
			}
		}
	}
	return r.cfg.Store.ReplaceDelivery(ctx, j.ID, jobs, records)
}

// pushTargets decides, device by device, what a notify event becomes: nothing for a
// device whose user is not among the recipients of the event's channel, else a push, a
// collapsed push (the device had its PushesPerMinute), nothing (muted or "urgent only",
// or counted for the next collapsed one), or a line in the summary at the end of the
// user's quiet hours. An urgent event passes quiet hours and flood control. Deciding here, not when sending, keeps a burst from becoming a job per event
// and device.
func (r *Runner) pushTargets(ctx context.Context, j *tidings.Delivery, ev *tidings.Event, now time.Time) ([]*tidings.Delivery, []*tidings.PushRecord, error) {
	targets, err := r.targets.get(ctx, r.cfg.Store, j.AccountID, now)
	if err != nil {
		return nil, nil, err
	}
	rcpt, err := r.recipients.get(ctx, r.cfg.Store, j.AccountID, ev.Project, ev.Channel, now)
	if err != nil {
		return nil, nil, err
	}
	var jobs []*tidings.Delivery
	var records []*tidings.PushRecord
	for _, sub := range targets.subs {
		if !rcpt.Includes(targets.emails[sub.UserID]) {
			// Not among the channel's recipients: decided before the user's own choices.
			records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: sub.UserID,
				Status: tidings.PushNotRecipient, At: now})
			continue
		}
		p := targets.prefs[sub.UserID]
		if p == nil {
			p = &tidings.NotifyPrefs{}
		}
		status := tidings.PushPending
		urgent := ev.Priority == tidings.PriorityUrgent
		if p.Holds(ev) {
			status = tidings.PushMuted
		} else if until, quiet := p.QuietUntil(now); quiet && !urgent {
			status = tidings.PushQuiet
			// One summary per user and quiet period: the message id makes it unique. It
			// counts the user's quiet records since a day before the period's end: the
			// previous period ended then.
			jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverQuietSummary, AccountID: j.AccountID,
				Target: strconv.FormatInt(sub.UserID, 10), MessageID: fmt.Sprintf("quiet-%d-%d", sub.UserID, until.Unix()),
				NextAt: until, CreatedAt: until.Add(-24 * time.Hour)})
		} else {
			normal, n := true, 0
			if !urgent {
				normal, n = r.flood.admit(sub.ID, ev.Project+"/"+ev.Channel, now)
			}
			switch {
			case normal:
			case n > 0:
				status = tidings.PushCollapsed
			default:
				// Counted for the device's next collapsed notification. No record: a
				// burst must not cost a write per event and device.
				continue
			}
			jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverPush, AccountID: j.AccountID, EventID: ev.ID,
				Target: sub.ID, MessageID: tidings.NewID("push_"), Count: n, NextAt: now, CreatedAt: j.CreatedAt})
		}
		records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: sub.UserID, Status: status, At: now})
	}
	return jobs, records, nil
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
