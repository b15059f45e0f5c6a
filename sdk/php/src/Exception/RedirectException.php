<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/**
 * A 3xx answer. The SDK never follows a redirect: that would send the client
 * secret, the body and the Idempotency-Key wherever Location points.
 */
final class RedirectException extends PixgateException
{
    public function __construct(string $operation, public readonly int $status, public readonly ?string $location)
    {
        parent::__construct(sprintf(
            'pixgate: %s answered %d%s; redirects are not followed, so that the credentials are sent nowhere else: check the base URL',
            $operation,
            $status,
            $location !== null ? sprintf(' to "%s"', $location) : '',
        ), $status);
    }
}
