package deliver

import (
	"context"
	"fmt"
	"time"

	"github.com/tidings-dev/tidings"
)

// The escalation order: an urgent event goes to its recipients at once and, when its
// project has an EscalateAfter and nobody acknowledged it by then, to every member.
// The DeliverEscalate job is written with the event's expansion; when it is due it
// reads the event again, and an acknowledgement or a later version of its key ends it.
// From then on the event's repeats go to every member too.

// escalateAfter is the project's escalation delay, shortened by the test hook that
// shortens repeats.
func (r *Runner) escalateAfter(p *tidings.Project) time.Duration {
	d := p.EscalateAfter
	if d > 0 && r.cfg.TestRepeatEvery > 0 {
		d = min(d, r.cfg.TestRepeatEvery)
	}
	return d
}

// escalatedBy reports whether an urgent event of the project has been widened to
// every member by its repeat number n: both count from the event's expansion, the
// escalation after escalateAfter, repeat n after n repeat intervals. A repeat due at
// the escalation's moment leaves the newly reached to the escalation (one push, not
// two).
func (r *Runner) escalatedBy(p *tidings.Project, n int) bool {
	d := r.escalateAfter(p)
	return d > 0 && time.Duration(n)*r.repeatEvery(p) > d
}

// urgentJobs are the later jobs of an urgent event: its first repeat (with push) and
// its escalation (when its recipients are not everyone).
func (r *Runner) urgentJobs(ctx context.Context, j *tidings.Delivery, ev *tidings.Event, rcpt tidings.Recipients, now time.Time) ([]*tidings.Delivery, error) {
	p, err := r.cfg.Store.FindProject(ctx, j.AccountID, ev.Project)
	if tidings.ErrorCode(err) == tidings.EProjectNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var jobs []*tidings.Delivery
	if r.cfg.VAPID != nil && p.RepeatUrgentTimes > 0 {
		first := repeatJob(j.AccountID, ev.ID, 1, now.Add(r.repeatEvery(p)))
		first.CreatedAt = j.CreatedAt
		jobs = append(jobs, first)
	}
	if d := r.escalateAfter(p); d > 0 && rcpt.Mode != tidings.NotifyEveryone {
		// From the expansion, as the repeats count: it follows the acceptance at once.
		at := now.Add(d)
		jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverEscalate, AccountID: j.AccountID, EventID: ev.ID,
			MessageID: "escalate-" + ev.ID, NextAt: at, CreatedAt: at})
	}
	return jobs, nil
}

// superseded reports whether a later version of the event's key exists: it ends the
// event's repeats and escalation (an urgent later version escalates itself).
func (r *Runner) superseded(ctx context.Context, accountID int64, ev *tidings.Event) (bool, error) {
	t, ok := ev.Thread()
	if !ok {
		return false, nil
	}
	latest, _, err := r.cfg.Store.Versions(ctx, accountID, ev.Project, t, 1)
	if err != nil && tidings.ErrorCode(err) != tidings.EProjectNotFound {
		return false, err
	}
	return len(latest) == 0 || latest[0].ID != ev.ID, nil
}

// escalate notifies every member who was not among an unacknowledged urgent event's
// recipients, by their routes: mutes and "urgent only" still hold; quiet hours and
// flood control do not (it is urgent). Their records go from "not-recipient" to
// "pending" (or "muted") in the transaction that replaces the job.
func (r *Runner) escalate(ctx context.Context, j *tidings.Delivery) error {
	st := r.cfg.Store
	ev, err := r.jobEvent(ctx, j)
	if ev == nil {
		return err
	}
	if ev.Ack != nil || ev.Priority != tidings.PriorityUrgent {
		return st.FinishDelivery(ctx, j.ID)
	}
	if later, err := r.superseded(ctx, j.AccountID, ev); err != nil || later {
		if err != nil {
			return err
		}
		return st.FinishDelivery(ctx, j.ID)
	}
	now := r.cfg.Now()
	a, err := r.audience(ctx, j.AccountID, ev, now)
	if err != nil {
		return err
	}
	var jobs []*tidings.Delivery
	var records []*tidings.PushRecord
	for _, uid := range a.members() {
		if a.rcpt.Includes(a.emails[uid]) {
			continue // notified at once
		}
		status := tidings.PushPending
		if a.prefsOf(uid).Holds(ev) {
			status = tidings.PushMuted
		}
		routes := tidings.RoutesFor(a.routes, uid, ev.Project, ev.Channel)
		if routes.Push && r.cfg.VAPID != nil {
			for _, sub := range a.subsOf(uid) {
				if status == tidings.PushPending {
					jobs = append(jobs, &tidings.Delivery{Kind: tidings.DeliverPush, AccountID: j.AccountID, EventID: ev.ID, Target: sub.ID,
						MessageID: fmt.Sprintf("escalate-%s-%s", ev.ID, sub.ID), NextAt: now, CreatedAt: now})
				}
				records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: sub.ID, UserID: uid, Status: status, At: now})
			}
		}
		if routes.Email && r.cfg.Mailer != nil {
			if status == tidings.PushPending {
				jobs = append(jobs, r.mailJob(j.AccountID, ev, uid, 0, now, now))
			}
			records = append(records, &tidings.PushRecord{EventID: ev.ID, SubscriptionID: tidings.MailTarget(uid), UserID: uid, Status: status, At: now})
		}
	}
	return st.ReplaceDelivery(ctx, j.ID, jobs, records)
}
