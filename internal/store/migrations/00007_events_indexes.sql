-- +goose Up
-- Every event is inserted pending and updated once delivered, and neither
-- write can be HOT (events_due's predicate reads status), so each index on
-- events costs two insertions per webhook. Two of them indexed status for
-- queries that only ever look at a few rows:
--   - events_client_status (client_id, status, created_at) served the count
--     of a client's pending events, and events_status_created (status,
--     created_at) the outbox lag: both read pending events, which events_due
--     already holds and only them;
--   - FailingEvents (the administration panel) reads failed events and
--     pending ones already attempted: events_failing holds exactly those,
--     newest last, and no event a first attempt delivered ever enters it.
-- Four index insertions fewer per payout's webhook (docs/decisions.md).
DROP INDEX events_client_status;
DROP INDEX events_status_created;
CREATE INDEX events_failing ON events (created_at, id) WHERE status = 'failed' OR (status = 'pending' AND attempts > 0);

-- +goose Down
DROP INDEX events_failing;
CREATE INDEX events_status_created ON events (status, created_at);
CREATE INDEX events_client_status ON events (client_id, status, created_at);
