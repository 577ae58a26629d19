package deliver

import (
	"context"
	"fmt"
	"time"

	"github.com/tidings-dev/tidings"
)

// Digests: a scheduler in Run looks every minute (and at start) for members whose
// daily or weekly period has ended since their last digest, and claims the period in
// the store with its job in one transaction, so that servers running together, or a
// restart, queue each period once. The job reads what happened in the period and mails
// it; a period where nothing happened sends nothing.

// digestEvery is how often the scheduler looks.
const digestEvery = time.Minute

// scheduleDigests queues the digest of every period that ended by now and was not
// queued yet.
func (r *Runner) scheduleDigests(ctx context.Context, now time.Time) {
	prefs, err := r.cfg.Store.ListDigests(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("listing digests (tried again in a minute)", "err", err)
		}
		return
	}
	host := mailHost(r.cfg.PublicURL)
	for _, p := range prefs {
		_, end := tidings.DigestPeriod(p.Every, now, zone(p.TimeZone))
		if !end.After(p.LastPeriod) {
			continue
		}
		hours := 24
		if p.Every == tidings.DigestWeekly {
			hours = 7 * 24
		}
		// CreatedAt is the period's end: the job reads its period from it (NextAt moves
		// on retries), and it is given up a day after the period ended.
		job := &tidings.Delivery{Kind: tidings.DeliverDigest, AccountID: p.AccountID, Target: tidings.MailTarget(p.UserID),
			Ref: p.Project, Count: hours, NextAt: end, CreatedAt: end,
			MessageID: fmt.Sprintf("<digest.%d.%s.%d@%s>", p.UserID, p.Project, end.Unix(), host)}
		if _, err := r.cfg.Store.ClaimDigest(ctx, p, end, job); err != nil && ctx.Err() == nil {
			r.log.Warn("queueing a digest (tried again in a minute)", "member", p.UserID, "project", p.Project, "err", err)
		}
	}
}

// zone is a member's time zone; "" or one this server does not know is UTC.
func zone(name string) *time.Location {
	if loc, err := time.LoadLocation(name); err == nil {
		return loc
	}
	return time.UTC
}

// digestMail is the digest of a job's period, or nil when nothing happened in it (or
// the project is gone).
func (r *Runner) digestMail(ctx context.Context, j *tidings.Delivery, uid int64, to string, prefs *tidings.NotifyPrefs) (*tidings.MailMessage, error) {
	loc := time.UTC
	if prefs != nil {
		loc = zone(prefs.TimeZone)
	}
	end := j.CreatedAt.In(loc)
	// Days, not hours, back from the end: a period across a change of daylight saving
	// time is 23 or 25 hours long.
	from := end.AddDate(0, 0, -max(j.Count/24, 1))
	c, err := r.cfg.Store.DigestOf(ctx, j.AccountID, j.Ref, from, end)
	if tidings.ErrorCode(err) == tidings.EProjectNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Events == 0 && len(c.Insights) == 0 && c.NewUsers == 0 {
		return nil, nil
	}
	links, err := r.links(ctx, uid, j.Ref)
	if err != nil {
		return nil, err
	}
	every := tidings.DigestDaily
	if j.Count > 24 {
		every = tidings.DigestWeekly
	}
	return digestMessage(c, every, to, loc, links), nil
}
