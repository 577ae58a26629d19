-- +goose Up
-- Who is notified (issue 39): a project's recipients, "everyone" (the default),
-- "nobody", or its chosen members' emails joined by commas (lower case, sorted); a
-- channel's own setting in the same form, NULL while it follows its project. Adding
-- the columns rewrites nothing.
ALTER TABLE projects ADD COLUMN notify TEXT NOT NULL DEFAULT 'everyone';
ALTER TABLE channels ADD COLUMN notify TEXT; -- NULL: as the project

-- The chat services' webhooks: telegram's chat id, pushover's user or group key
-- (pushover's app token, when not in the URL, is the secret).
ALTER TABLE webhooks ADD COLUMN chat_id  TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN user_key TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE webhooks DROP COLUMN user_key;
ALTER TABLE webhooks DROP COLUMN chat_id;
ALTER TABLE channels DROP COLUMN notify;
ALTER TABLE projects DROP COLUMN notify;
