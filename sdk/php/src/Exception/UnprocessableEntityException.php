<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 422: refused by a business rule (insufficient balance, a key reused with another body, …). */
final class UnprocessableEntityException extends ApiException
{
    /** The payout or refund's "Insufficient balance". */
    public function isInsufficientBalance(): bool
    {
        return $this->apiMessage === 'Insufficient balance';
    }

    /** An external_id or Idempotency-Key already used with a different body. */
    public function isIdempotencyMismatch(): bool
    {
        return str_ends_with($this->apiMessage, 'already used with different parameters');
    }
}
