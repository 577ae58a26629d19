package deliver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Escalation: an urgent event is pushed again every project.RepeatUrgentEvery, at most
// RepeatUrgentTimes, until it is acknowledged or a later version of its key exists.
// Each repeat is a job of the outbox that writes the next one in the transaction that
// replaces it, so a restart goes on where the last process stopped, and an
// acknowledgement (which deletes the pending repeat in its own transaction) leaves
// ReplaceDelivery nothing to replace: no repeat is written after it.

// repeatPushPrefix starts the MessageID of the push jobs of a repeat: the device is
// told to buzz again (renotify) for a notification it already shows.
const repeatPushPrefix = "repeat-"

func isRepeatPush(j *tidings.Delivery) bool {
	return j.Kind == tidings.DeliverPush && strings.HasPrefix(j.MessageID, repeatPushPrefix)
}

// repeatEvery is the project's escalation interval, or the test hook's.
func (r *Runner) repeatEvery(p *tidings.Project) time.Duration {
	if r.cfg.TestRepeatEvery > 0 {
		return r.cfg.TestRepeatEvery
	}
	if p.RepeatUrgentEvery <= 0 {
		return tidings.RepeatUrgentEvery
	}
	return p.RepeatUrgentEvery
}

func repeatJob(accountID int64, eventID string, n int, at time.Time) *tidings.Delivery {
	return &tidings.Delivery{Kind: tidings.DeliverRepeat, AccountID: accountID, EventID: eventID, Count: n,
		MessageID: fmt.Sprintf("repeat-%s-%d", eventID, n), NextAt: at, CreatedAt: at}
}

// repeat pushes an urgent event again to every device of the event's recipients (every
// member's, once it escalated) whose user's routes include push and whose choices do
// not hold it (quiet hours and flood control do not hold urgent events), and schedules
// the next repeat, in one ReplaceDelivery. It reads the event fresh: an acknowledgement
// or a later version of its key ends the escalation.
func (r *Runner) repeat(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	ev, err := r.jobEvent(ctx, j)
	if ev == nil {
		return err
	}
	if ev.Ack != nil || ev.Priority != tidings.PriorityUrgent || r.cfg.VAPID == nil {
		return st.FinishDelivery(ctx, j.ID)
	}
	if later, err := r.superseded(ctx, j.AccountID, ev); err != nil || later {
		if err != nil {
			return err
		}
		// A later version (urgent or not) ends this one's escalation; an urgent one
		// escalates itself.
		return st.FinishDelivery(ctx, j.ID)
	}
	p, err := st.FindProject(ctx, j.AccountID, ev.Project)
	if tidings.ErrorCode(err) == tidings.EProjectNotFound {
		return st.FinishDelivery(ctx, j.ID)
	}
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	a, err := r.audience(ctx, j.AccountID, ev, now)
	if err != nil {
		return err
	}
	everyone := r.escalatedBy(p, j.Count)
	var jobs []*tidings.Delivery
	for _, sub := range a.subs {
		email, member := a.emails[sub.UserID]
		if !member || !everyone && !a.rcpt.Includes(email) {
			continue // recipients only, as the first push, until the event escalated
		}
		if !tidings.RoutesFor(a.routes, sub.UserID, ev.Project, ev.Channel).Push || a.prefsOf(sub.UserID).Holds(ev) {
			continue
		}
		jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverPush, AccountID: j.AccountID, EventID: ev.ID, Target: sub.ID,
			MessageID: fmt.Sprintf("%s%s-%d-%s", repeatPushPrefix, ev.ID, j.Count, sub.ID), Count: 0, NextAt: now, CreatedAt: now})
	}
	if j.Count < p.RepeatUrgentTimes {
		jobs = append(jobs, repeatJob(j.AccountID, ev.ID, j.Count+1, now.Add(r.repeatEvery(p))))
	}
	return st.ReplaceDelivery(ctx, j.ID, jobs, nil)
}

// expandAck turns an acknowledgement into event.acknowledged for each standard webhook
// of the event's project and channel, and "Acknowledged by …" for each device that was
// sent the event.
func (r *Runner) expandAck(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	ev, err := r.jobEvent(ctx, j)
	if ev == nil {
		return err
	}
	if ev.Ack == nil {
		return st.FinishDelivery(ctx, j.ID) // nothing to tell
	}
	now := r.cfg.Now()
	jobs, err := r.intentHooks(ctx, j, ev, tidings.DeliverWebhookAck, now)
	if err != nil {
		return err
	}
	if r.cfg.VAPID != nil {
		recs, err := st.EventPushes(ctx, j.AccountID, ev.ID)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if _, mail := tidings.MailTargetUser(rec.SubscriptionID); rec.Status == tidings.PushSent && !mail {
				jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverPushAck, AccountID: j.AccountID, EventID: ev.ID,
					Target: rec.SubscriptionID, MessageID: "ack-" + ev.ID + "-" + rec.SubscriptionID, NextAt: now, CreatedAt: j.CreatedAt})
			}
		}
	}
	return st.ReplaceDelivery(ctx, j.ID, jobs, nil)
}

// expandPress turns a press of an id action into event.action for each standard
// webhook of the event's project and channel.
func (r *Runner) expandPress(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	ev, err := r.jobEvent(ctx, j)
	if ev == nil {
		return err
	}
	jobs, err := r.intentHooks(ctx, j, ev, tidings.DeliverWebhookPress, r.cfg.Now())
	if err != nil {
		return err
	}
	return st.ReplaceDelivery(ctx, j.ID, jobs, nil)
}

// intentHooks is one job of kind for each webhook that wants the event's
// acknowledgements and presses.
func (r *Runner) intentHooks(ctx context.Context, j *tidings.Delivery, ev *tidings.Event, kind string, now time.Time) ([]*tidings.Delivery, error) {
	hooks, err := r.cfg.Store.WebhooksFor(ctx, j.AccountID, ev.Project, ev.Channel)
	if err != nil {
		return nil, err
	}
	var jobs []*tidings.Delivery
	for _, w := range hooks {
		if w.WantsIntent(ev) {
			jobs = append(jobs, &tidings.Delivery{Kind: kind, AccountID: j.AccountID, EventID: ev.ID, Target: w.ID, Ref: j.Ref,
				MessageID: tidings.NewID("msg_"), NextAt: now, CreatedAt: j.CreatedAt})
		}
	}
	return jobs, nil
}
