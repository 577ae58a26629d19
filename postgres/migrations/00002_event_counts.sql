-- +goose Up
-- Events per channel and hour (UTC, by the event's timestamp), kept by every batch:
-- charts and the settings pages' counts read these rows instead of scanning events.
CREATE TABLE event_counts (
    channel_id BIGINT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    hour       BIGINT NOT NULL, -- unix ms of the hour's start
    n          BIGINT NOT NULL,
    PRIMARY KEY (channel_id, hour)
);
INSERT INTO event_counts (channel_id, hour, n)
  SELECT channel_id, ts - ts % 3600000, count(*) FROM events GROUP BY 1, 2;

-- +goose Down
DROP TABLE event_counts;
