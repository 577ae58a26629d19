-- +goose Up
-- What became of a member's mail says more (issue 39): the mail server's last reply
-- to a mail being retried or refused, or why a mail was not sent ('' for most
-- records; at most tidings.MaxRecordDetail characters). A constant default: added
-- without rewriting the table. Column for column as in the embedded store.
ALTER TABLE push_records ADD COLUMN detail TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE push_records DROP COLUMN detail;
