<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/**
 * A creation whose outcome is unknown: its last attempt failed in a way worth
 * retrying and the retries ran out. Calling again with $idempotencyKey and the
 * same body is safe (the server replays or creates once); a new key could
 * create twice. getPrevious() is the last failure.
 */
final class RetryException extends PixgateException
{
    public function __construct(string $operation, public readonly string $idempotencyKey, public readonly int $attempts, \Throwable $last)
    {
        parent::__construct(sprintf(
            'pixgate: %s: outcome unknown after %d attempt(s); repeat it with Idempotency-Key %s: %s',
            $operation,
            $attempts,
            $idempotencyKey,
            $last->getMessage(),
        ), 0, $last);
    }
}
