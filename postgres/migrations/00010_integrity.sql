-- +goose Up
-- A deleted event's pending deliveries go with it.
CREATE INDEX deliveries_event ON deliveries (event_id) WHERE event_id <> '';
-- Users named by events stored before users existed (migration 6), and counts left by
-- deleted channels (fixed in the same release), are counted again from the events.
INSERT INTO people (project_id, user_id, first_seen, last_seen, events)
    SELECT project_id, user_id, min(created_at), max(created_at), count(*) FROM events WHERE user_id <> '' GROUP BY 1, 2
    ON CONFLICT (project_id, user_id) DO UPDATE SET events = excluded.events,
        first_seen = least(people.first_seen, excluded.first_seen), last_seen = greatest(people.last_seen, excluded.last_seen);
UPDATE people SET events = 0 WHERE events <> 0
    AND NOT EXISTS (SELECT 1 FROM events e WHERE e.project_id = people.project_id AND e.user_id = people.user_id);

-- +goose Down
DROP INDEX deliveries_event;
