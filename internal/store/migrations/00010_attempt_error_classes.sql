-- +goose Up
-- A failed delivery attempt records a class of error ("DNS resolution
-- failed", "timeout", …) that clients and the panel may see; the transport
-- error itself, which can name internal servers ("lookup x on 10.0.0.2:53"),
-- goes to the server log only. Attempts recorded before that held the
-- transport error's text: they become the class it belongs to.
UPDATE delivery_attempts SET error = CASE
    WHEN error LIKE 'destination refused%' OR error = 'invalid webhook URL' THEN 'destination not allowed'
    WHEN error LIKE 'timeout:%' THEN 'timeout'
    WHEN error LIKE '%no such host%' OR error LIKE '%lookup %' THEN 'DNS resolution failed'
    WHEN error LIKE '%connection refused%' THEN 'connection refused'
    WHEN error LIKE '%tls:%' OR error LIKE '%x509:%' OR error LIKE '%certificate%' THEN 'TLS error'
    WHEN error LIKE '%timeout%' OR error LIKE '%deadline exceeded%' THEN 'timeout'
    WHEN error LIKE '%connection reset%' OR error LIKE '%broken pipe%' OR error LIKE '%EOF%' THEN 'connection reset'
    ELSE 'connection failed'
END
WHERE error LIKE 'request failed:%' OR error LIKE 'destination refused%' OR error LIKE 'timeout:%'
   OR error = 'invalid webhook URL';
-- A receiver's non-2xx answer now carries its class beside the status code.
UPDATE delivery_attempts SET error = CASE
    WHEN status_code >= 500 THEN 'HTTP 5xx'
    WHEN status_code >= 400 THEN 'HTTP 4xx'
    ELSE 'HTTP 3xx'
END
WHERE error IS NULL AND status_code >= 300;

-- +goose Down
-- The original texts are gone on purpose; the classes stay valid for the
-- previous version, which shows an attempt's error as it is stored.
SELECT 1;
