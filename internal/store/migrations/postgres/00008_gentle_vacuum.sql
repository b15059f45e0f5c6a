-- +goose Up
-- The tables every payout writes: their autovacuum sleeps 10 ms instead of
-- 2 ms per cost limit of work, so a vacuum does not stall payouts meanwhile.
ALTER TABLE transactions SET (autovacuum_vacuum_cost_delay = 10);
ALTER TABLE events SET (autovacuum_vacuum_cost_delay = 10);
ALTER TABLE postings SET (autovacuum_vacuum_cost_delay = 10);
ALTER TABLE entries SET (autovacuum_vacuum_cost_delay = 10);
ALTER TABLE delivery_attempts SET (autovacuum_vacuum_cost_delay = 10);

-- +goose Down
ALTER TABLE transactions RESET (autovacuum_vacuum_cost_delay);
ALTER TABLE events RESET (autovacuum_vacuum_cost_delay);
ALTER TABLE postings RESET (autovacuum_vacuum_cost_delay);
ALTER TABLE entries RESET (autovacuum_vacuum_cost_delay);
ALTER TABLE delivery_attempts RESET (autovacuum_vacuum_cost_delay);
