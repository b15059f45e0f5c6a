<?php

declare(strict_types=1);

namespace Pixgate;

/** What every answer carries besides its body. */
final class ResponseMeta
{
    /**
     * @param array<string, string> $headers lower-case names
     */
    public function __construct(
        public readonly int $status,
        /** X-Request-Id, to quote to support. */
        public readonly string $requestId,
        public readonly int $rateLimitLimit,
        public readonly int $rateLimitRemaining,
        /** Seconds until the oldest counted request leaves the window. */
        public readonly int $rateLimitReset,
        /** The answer replays an earlier request's (Idempotent-Replayed: true). */
        public readonly bool $idempotentReplayed,
        /** The Idempotency-Key sent, for creations. */
        public readonly ?string $idempotencyKey,
        /** HTTP attempts made, retries included. */
        public readonly int $attempts,
        public readonly array $headers,
    ) {
    }
}
