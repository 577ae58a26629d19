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
		return nil, tidings.ErrorCode(err) == tidings.EChannelNotFound, err
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
	s, err := b.stmt(ctx, sqlInsertEvent)
	if err != nil {
		return nil, err
	}
	ts := ms(ev.Timestamp)
	seq, err := b.nextSeq(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ExecContext(ctx, seq, id, p.ID, channelID, ev.Event, ev.Description, ev.Icon, ev.Notify,
		string(tags), ev.Parser, ev.UserID, ts, ms(b.now)); err != nil {
		return nil, err
	}
	tagIDs := make([]int64, 0, len(ev.Tags))
	for _, t := range ev.Tags {
		tagID, err := b.tag(ctx, p.ID, t.Key, t.Value)
		if err != nil {
			return nil, err
		}
		b.tagRows = append(b.tagRows, tagID, ts, seq, channelID)
		b.jobTag[tagID]++
		tagIDs = append(tagIDs, tagID)
	}
	b.searchRows = append(b.searchRows, seq, ev.SearchText(), searchScope(p.ID, channelID, tagIDs, ev.UserID))
	b.jobHours[hourKey{channelID, hourOf(ts)}]++
	if ev.UserID != "" {
		b.users[userKey{p.ID, ev.UserID}]++ // an event is never rolled back alone: no job copy needed
	}
	if err := b.outboxFor(ctx, accountID, p, ev); err != nil {
		return nil, err
	}
	return ev, nil
}
