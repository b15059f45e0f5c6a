-- +goose Up
-- Statistics target 10 (not 100) on every column of the tables every payout
-- writes: autovacuum's frequent ANALYZE of them then samples 3,000 rows, not
-- 30,000, and no longer holds up payouts while it computes; their queries go
-- by key or walk an index, which so small a sample still plans right.
-- +goose StatementBegin
DO $$
DECLARE
    t text;
    c name;
BEGIN
    FOREACH t IN ARRAY ARRAY['transactions', 'events', 'postings', 'entries', 'delivery_attempts'] LOOP
        FOR c IN SELECT attname FROM pg_attribute WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped LOOP
            EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS 10', t, c);
        END LOOP;
    END LOOP;
END$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t text;
    c name;
BEGIN
    FOREACH t IN ARRAY ARRAY['transactions', 'events', 'postings', 'entries', 'delivery_attempts'] LOOP
        FOR c IN SELECT attname FROM pg_attribute WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped LOOP
            EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS -1', t, c);
        END LOOP;
    END LOOP;
END$$;
-- +goose StatementEnd
