-- +goose Up
-- What tidings check now names and the store no longer leaves: pending deliveries of
-- events deleted with their project or channel (deliveries name their event by its
-- text id, which no foreign key follows), and tag counts of 0 left by deletions.
DELETE FROM deliveries d WHERE d.kind IN ('event', 'webhook', 'push')
    AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id);
DELETE FROM tag_counts WHERE n <= 0;

-- +goose Down
