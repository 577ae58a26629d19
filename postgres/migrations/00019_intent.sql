-- +goose Up
-- Notifications with intent (issue 38): an event's priority, link, action buttons,
-- key and acknowledgement; the presses of its buttons; a project's escalation; a
-- member's "urgent only" choices; the outbox's reference to a press.
--
-- Every column added to a large table is either nullable or has a constant default:
-- PostgreSQL 11 and later add such a column without rewriting the table. The two new
-- indexes of events are partial and empty at first (every existing event is of
-- default priority and has no key): building them reads the table once each and
-- writes nothing.

ALTER TABLE events
    ADD COLUMN priority  SMALLINT NOT NULL DEFAULT 3, -- 1 min … 5 urgent
    ADD COLUMN url       TEXT,                         -- NULL: the event page
    ADD COLUMN actions   TEXT,                         -- JSON array; NULL: none
    ADD COLUMN thread_key TEXT,                        -- the "key"; NULL: none
    ADD COLUMN ack_by    TEXT,                         -- NULL until acknowledged
    ADD COLUMN ack_at    BIGINT;                       -- unix ms

-- The versions of a key in a channel, newest (by acceptance) first.
CREATE INDEX events_thread ON events (channel_id, thread_key, id DESC) WHERE thread_key IS NOT NULL;

-- priority:urgent and priority:>=high pages: the project's events of another priority
-- than default, newest first. Default is by far the most common priority, so the
-- index is a small part of the feed's, and a page of urgent events walks it alone.
CREATE INDEX events_priority ON events (project_id, ts DESC, id DESC) WHERE priority <> 3;
-- The same in one channel: without it, urgent events of a rare channel were found by
-- walking the channel's feed (31 ms a page at 1 million events; 0.6 ms with it).
CREATE INDEX events_channel_priority ON events (channel_id, ts DESC, id DESC) WHERE priority <> 3;

-- One press of an event's id action. The newest tidings.MaxPresses of an event are kept.
CREATE TABLE event_presses (
    seq        BIGSERIAL UNIQUE, -- insertion order (SQLite's rowid): ties of at
    id         TEXT   PRIMARY KEY, -- "press_…"
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id   TEXT   NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    action_id  TEXT   NOT NULL,
    label      TEXT   NOT NULL,
    "by"       TEXT   NOT NULL,
    via        TEXT   NOT NULL DEFAULT '',
    at         BIGINT NOT NULL -- unix ms
);
CREATE INDEX event_presses_event ON event_presses (event_id, at, seq);

-- A press's jobs name it (DeliverPress, DeliverWebhookPress).
ALTER TABLE deliveries ADD COLUMN ref TEXT NOT NULL DEFAULT '';

-- An urgent event is pushed again every repeat_urgent_every seconds, at most
-- repeat_urgent_times times, until acknowledged (seconds, as the embedded store keeps it).
ALTER TABLE projects
    ADD COLUMN repeat_urgent_every INTEGER NOT NULL DEFAULT 300,
    ADD COLUMN repeat_urgent_times INTEGER NOT NULL DEFAULT 12;

-- "project" or "project/channel" of which only urgent events are pushed (JSON array).
ALTER TABLE notify_prefs ADD COLUMN urgent_only TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE notify_prefs DROP COLUMN urgent_only;
ALTER TABLE projects DROP COLUMN repeat_urgent_every, DROP COLUMN repeat_urgent_times;
ALTER TABLE deliveries DROP COLUMN ref;
DROP TABLE event_presses;
DROP INDEX events_channel_priority;
DROP INDEX events_priority;
DROP INDEX events_thread;
ALTER TABLE events DROP COLUMN priority, DROP COLUMN url, DROP COLUMN actions, DROP COLUMN thread_key,
    DROP COLUMN ack_by, DROP COLUMN ack_at;
