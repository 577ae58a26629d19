-- +goose Up
-- Notifications with intent (issue 38): an event's priority, where a tap goes, its
-- action buttons, the key that makes it a version of one thing, and its
-- acknowledgement. Each new column but priority is NULL when the event has none: a
-- NULL at the end of a row costs no byte (SQLite leaves trailing NULLs out of the
-- record's body), and the two partial indexes below hold no row for an event of the
-- default priority without a key, so publishing such an event writes what it wrote
-- before. Adding the columns rewrites nothing; making the indexes reads the events once.
ALTER TABLE events ADD COLUMN priority   INTEGER NOT NULL DEFAULT 3; -- 1 (min) to 5 (urgent)
ALTER TABLE events ADD COLUMN url        TEXT;    -- where a tap goes
ALTER TABLE events ADD COLUMN actions    TEXT;    -- JSON list of {"label","url"|"id"}
ALTER TABLE events ADD COLUMN thread_key TEXT;    -- the "key" field
ALTER TABLE events ADD COLUMN ack_by     TEXT;    -- the first acknowledgement: who
ALTER TABLE events ADD COLUMN ack_at     INTEGER; -- and when (unix ms)

-- The versions of a key in a channel, newest first by acceptance (Versions).
CREATE INDEX events_thread ON events (channel_id, thread_key, seq) WHERE thread_key IS NOT NULL;
-- priority:urgent and priority:>=high pages of a project or a channel: one walk per
-- priority in the range, newest first, merged (feed_plan.go). Events of the default
-- priority, nearly all of them, have no row here.
CREATE INDEX events_priority ON events (project_id, priority, ts, seq) WHERE priority <> 3;
CREATE INDEX events_channel_priority ON events (channel_id, priority, ts, seq) WHERE priority <> 3;

-- Presses of events' id actions: who pressed what, from where. An event keeps its
-- newest tidings.MaxPresses; they go with it.
CREATE TABLE event_presses (
    id         TEXT    PRIMARY KEY, -- press_…
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id   BLOB    NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    action_id  TEXT    NOT NULL,
    label      TEXT    NOT NULL,
    by         TEXT    NOT NULL,
    via        TEXT    NOT NULL,
    at         INTEGER NOT NULL -- unix ms
);
CREATE INDEX event_presses_event ON event_presses (event_id, at);

-- The outbox again, with two changes. A press's delivery jobs name it (ref:
-- DeliverPress, DeliverWebhookPress). And a job's id is never given again
-- (AUTOINCREMENT): an acknowledgement deletes the repeat a runner holds and adds its
-- own job, which took the deleted job's id (SQLite's max(rowid) + 1), so the runner's
-- ReplaceDelivery of its repeat deleted the acknowledgement's job and added the next
-- repeat. The outbox is small: copying it is quick.
CREATE TABLE deliveries_v23 (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT    NOT NULL,
    account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id     TEXT    NOT NULL DEFAULT '',
    target       TEXT    NOT NULL DEFAULT '',  -- webhook or device id
    message_id   TEXT    NOT NULL DEFAULT '',  -- stable across retries
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL,
    leased_until INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    count        INTEGER NOT NULL DEFAULT 0,
    ref          TEXT    NOT NULL DEFAULT ''   -- a press's id
);
INSERT INTO deliveries_v23 (id, kind, account_id, event_id, target, message_id, attempts, next_at, leased_until, created_at, count)
  SELECT id, kind, account_id, event_id, target, message_id, attempts, next_at, leased_until, created_at, count FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_v23 RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries (next_at);
CREATE INDEX deliveries_target ON deliveries (target);
CREATE UNIQUE INDEX deliveries_message ON deliveries (message_id) WHERE message_id != '';
CREATE INDEX deliveries_event ON deliveries (event_id) WHERE event_id != '';

-- A project's escalation of urgent events: every so many seconds, at most so many times.
ALTER TABLE projects ADD COLUMN repeat_urgent_every INTEGER NOT NULL DEFAULT 300;
ALTER TABLE projects ADD COLUMN repeat_urgent_times INTEGER NOT NULL DEFAULT 12;

-- A user's "urgent only" choices: JSON list of "project" or "project/channel".
ALTER TABLE notify_prefs ADD COLUMN urgent_only TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE notify_prefs DROP COLUMN urgent_only;
ALTER TABLE projects DROP COLUMN repeat_urgent_times;
ALTER TABLE projects DROP COLUMN repeat_urgent_every;
ALTER TABLE deliveries DROP COLUMN ref; -- its ids stay AUTOINCREMENT
DROP TABLE event_presses;
DROP INDEX events_channel_priority;
DROP INDEX events_priority;
DROP INDEX events_thread;
ALTER TABLE events DROP COLUMN ack_at;
ALTER TABLE events DROP COLUMN ack_by;
ALTER TABLE events DROP COLUMN thread_key;
ALTER TABLE events DROP COLUMN actions;
ALTER TABLE events DROP COLUMN url;
ALTER TABLE events DROP COLUMN priority;
