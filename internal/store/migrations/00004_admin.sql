-- +goose Up
-- The administration panel: its users, their sessions and the log of failed
-- logins that rate-limits password guessing. Same SQL for SQLite and
-- PostgreSQL; times are Unix milliseconds.

-- Operators see every client; merchant users see only their own client.
CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE,
    password_hash  TEXT NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('operator', 'merchant')),
    client_id      TEXT REFERENCES clients (id),
    created_at     BIGINT NOT NULL,
    CHECK ((role = 'operator' AND client_id IS NULL) OR (role = 'merchant' AND client_id IS NOT NULL))
);

-- A session's id is the hex SHA-256 of the random token in the browser's
-- cookie, so a copy of this table cannot be used to log in.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    csrf_token  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- One row per login attempt not (yet) known to have succeeded; a successful
-- login clears the rows of its e-mail and address.
CREATE TABLE login_attempts (
    email  TEXT NOT NULL,
    ip     TEXT NOT NULL,
    at     BIGINT NOT NULL
);
CREATE INDEX login_attempts_email_ip ON login_attempts (email, ip, at);
CREATE INDEX login_attempts_ip ON login_attempts (ip, at);

-- Overview queries across every client.
CREATE INDEX transactions_created ON transactions (created_at);
CREATE INDEX transactions_confirmed ON transactions (confirmed_at) WHERE confirmed_at IS NOT NULL;
CREATE INDEX events_status_created ON events (status, created_at);

-- +goose Down
DROP INDEX events_status_created;
DROP INDEX transactions_confirmed;
DROP INDEX transactions_created;
DROP TABLE login_attempts;
DROP TABLE sessions;
DROP TABLE users;
