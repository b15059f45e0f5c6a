-- +goose Up
-- Every client's disputes, newest first (the panel's operators' list),
-- paged by (opened_at, id) as one client's are on disputes_client_opened.
CREATE INDEX disputes_opened ON disputes (opened_at, id);

-- +goose Down
DROP INDEX disputes_opened;
