-- +goose Up
-- Room in each page of events for a new version of its rows: a claim changes
-- only the lease columns, which no index holds, so the update stays HOT.
ALTER TABLE events SET (fillfactor = 70);

-- +goose Down
ALTER TABLE events RESET (fillfactor);
