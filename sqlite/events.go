package sqlite

import (
	"context"
	"fmt"

	"github.com/tidings-dev/tidings"
)

// PublishEvent records e once its batch is committed.
func (db *DB) PublishEvent(ctx context.Context, accountID int64, e *tidings.NewEvent) (*tidings.Event, error) {
	res, err := db.submit(ctx, &writeJob{accountID: accountID, event: e})
	if err != nil {
		return nil, err
	}
	return res.event, nil
}

// PublishEvents records a batch's events in one job of the group committer: one
// transaction and one fsync for all of them.
func (db *DB) PublishEvents(ctx context.Context, accountID int64, b *tidings.NewBatch) ([]tidings.Published, error) {
	res, err := db.submit(ctx, &writeJob{accountID: accountID, events: b})
	if err != nil {
		return nil, err
	}
	return res.published, nil
}

// apply runs an event, batch or insight job, with its idempotency key: claimed before
// the job writes, dropped when the job is refused, kept with its answer otherwise.
// refusal is the job's own error (nothing was written for it); err fails the batch.
func (b *batch) apply(ctx context.Context, w *writeJob) (out *writeResult, refusal, err error) {
	var claim *keyClaim
	switch {
	case w.event != nil:
		claim, err = claimFor(ctx, b, w.accountID, w.event.Key, b.now)
	case w.events != nil:
		claim, err = claimFor(ctx, b, w.accountID, w.events.Key, b.now)
	default:
		claim, err = claimFor(ctx, b, w.accountID, w.insight.Key, b.now)
	}
	if err != nil {
		return refusedOr(err)
	}
	out = &writeResult{}
	switch {
	case w.event != nil:
		var refused bool
		out.event, refused, err = b.insertEvent(ctx, w.accountID, w.event)
		if err == nil {
			b.keepJobCounts()
		} else if refused {
			refusal, err = err, nil
		}
		if err == nil {
			err = settle(ctx, b, claim, w.event.Key, out.event, refusal)
		}
	case w.events != nil:
		out.published, err = b.insertEvents(ctx, w.accountID, w.events.Events)
		if err == nil {
			err = settle(ctx, b, claim, w.events.Key, out.published, tidings.NoneStored(out.published))
		}
	default:
		out.insight, err = b.applyInsight(ctx, w.accountID, w.insight)
		if err != nil && !isStorageError(err) {
			refusal, err = err, nil // checked before any write: nothing to undo
		}
		if err == nil {
			err = settle(ctx, b, claim, w.insight.Key, out.insight, refusal)
		}
	}
	if err != nil || refusal != nil {
		return nil, refusal, err
	}
	return out, nil, nil
}

// refusedOr splits an error found before a job wrote anything: a domain error refuses
// the job alone, any other fails the batch.
func refusedOr(err error) (*writeResult, error, error) {
	if isStorageError(err) || tidings.ErrorCode(err) == tidings.EInternal {
		return nil, nil, err
	}
	return nil, err, nil
}

// insertEvents writes a batch's events; a refused one fails alone, with nothing written.
func (b *batch) insertEvents(ctx context.Context, accountID int64, events []*tidings.NewEvent) ([]tidings.Published, error) {
	out := make([]tidings.Published, len(events))
	for i, e := range events {
		ev, refused, err := b.insertEvent(ctx, accountID, e)
		if err != nil && !refused {
			return nil, err
		}
		out[i] = tidings.Published{Event: ev, Err: err}
	}
	b.keepJobCounts()
	return out, nil
}

// insertEvent writes one event with its tags and outbox job. It needs no savepoint:
// what can refuse an event (an unknown project or channel) is looked up before its
// first write, and refused reports that nothing was written. Any later error fails the
// whole batch, whose jobs are then all answered with it and none is acknowledged.
func (b *batch) insertEvent(ctx context.Context, accountID int64, e *tidings.NewEvent) (ev *tidings.Event, refused bool, err error) {
	p, err := b.project(ctx, accountID, e.Project)
	if err != nil {
		return nil, !isStorageError(err), err
	}
	// b.channel refuses an unknown channel before it writes; creating one is a write.
	channelID, err := b.channel(ctx, p, e.Channel)
	if err != nil {
		code := tidings.ErrorCode(err)
		return nil, code == tidings.EChannelNotFound || code == tidings.ELimitReached, err
	}
	ev, err = b.writeEvent(ctx, accountID, p, channelID, e)
	return ev, false, err
}

// writeEvent writes an accepted event, its rows of the tag index and its outbox job.
func (b *batch) writeEvent(ctx context.Context, accountID int64, p *tidings.Project, channelID int64, e *tidings.NewEvent) (*tidings.Event, error) {
	ev, err := e.Accept(b.now)
	if err != nil {
		return nil, err
	}
	id, ok := idBytes(ev.ID)
	if !ok {
		return nil, fmt.Errorf("event id %q is not a UUID", ev.ID)
	}
	tags := ev.Tags.JSON()
	ts := ms(ev.Timestamp)
	seq, err := b.nextSeq(ctx)
	if err != nil {
		return nil, err
	}
	// The row is written with the batch's others (writeDerived).
	url, actions, key := intentValues(ev)
	b.eventRows = append(b.eventRows, seq, id, p.ID, channelID, ev.Event, ev.Description, ev.Icon, ev.Notify,
		string(tags), ev.Parser, ev.UserID, ts, ms(b.now), int64(ev.Priority), url, actions, key)
	tagIDs := make([]int64, 0, len(ev.Tags))
	for _, t := range ev.Tags {
		tag, err := b.tag(ctx, p.ID, t.Key, t.Value)
		if err != nil {
			return nil, err
		}
		b.tagRows = append(b.tagRows, tag.id, ts, seq, channelID)
		b.jobTag[tag]++
		if tag.rolled {
			b.tagHours[tagHourKey{tag.id, hourOf(ts)}]++
		}
		tagIDs = append(tagIDs, tag.id)
	}
	b.searchRows = append(b.searchRows, searchRow{seq: seq, text: searchText(ev), scope: searchScope(p.ID, channelID, tagIDs, ev.UserID), at: ms(b.now)})
	b.jobHours[hourKey{channelID, hourOf(ts)}]++
	if ev.UserID != "" {
		b.users[userKey{p.ID, ev.UserID}]++ // an event is never rolled back alone: no job copy needed
		b.userMinutes[userMinuteKey{p.ID, ev.UserID, ts / msPerMinute}]++
	}
	if err := b.outboxFor(ctx, accountID, p, ev); err != nil {
		return nil, err
	}
	return ev, nil
}
