-- +goose Up
-- Who is notified (issue 39): a project's recipients, a channel's own (NULL: it
-- follows its project), and what the chat services' webhooks need besides their URL.
--
-- A recipients setting is stored as tidings.Recipients.String() reads back with
-- ParseRecipients: 'everyone', 'nobody', or the chosen members' emails (lower case,
-- sorted, separated by commas), as in the embedded store, so that migrate-store copies
-- it as it is.
--
-- Every column has a constant default or is nullable: PostgreSQL 11 and later add
-- them without rewriting the tables.

ALTER TABLE projects ADD COLUMN notify TEXT NOT NULL DEFAULT 'everyone';
ALTER TABLE channels ADD COLUMN notify TEXT; -- NULL: as the project
ALTER TABLE webhooks
    ADD COLUMN chat_id  TEXT NOT NULL DEFAULT '', -- telegram: the chat to post to
    ADD COLUMN user_key TEXT NOT NULL DEFAULT ''; -- pushover: the user or group key

-- +goose Down
ALTER TABLE webhooks DROP COLUMN chat_id, DROP COLUMN user_key;
ALTER TABLE channels DROP COLUMN notify;
ALTER TABLE projects DROP COLUMN notify;
