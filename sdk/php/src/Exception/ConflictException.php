<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 409: a request with the same external_id or Idempotency-Key is still in progress. */
final class ConflictException extends ApiException
{
}
