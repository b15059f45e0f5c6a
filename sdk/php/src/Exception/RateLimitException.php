<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 429: over the rate limit; wait retryAfter seconds. */
final class RateLimitException extends ApiException
{
}
