<?php

declare(strict_types=1);

namespace Pixgate\Exception;

use Pixgate\ResponseMeta;

/**
 * An error answer of the API (status 400 or more) with the body's message,
 * error and details. Subclasses name the common statuses; getCode() is the
 * status too.
 */
class ApiException extends PixgateException
{
    /**
     * @param list<array{field: string, issue: string}> $details
     */
    public function __construct(
        public readonly int $status,
        /** The body's message: "Insufficient balance", "Transação não encontrada.", … */
        public readonly string $apiMessage,
        /** The body's error, the HTTP status text (empty on wallet endpoints). */
        public readonly string $error,
        /** Field-level issues of a validation error. */
        public readonly array $details,
        /** Seconds the server asked to wait (429), from Retry-After. */
        public readonly int $retryAfter,
        public readonly ResponseMeta $response,
    ) {
        $text = sprintf('pixgate: %d%s: %s', $status, $error !== '' ? ' ' . $error : '', $apiMessage);
        foreach ($details as $d) {
            $text .= sprintf('; %s: %s', $d['field'], $d['issue']);
        }
        if ($retryAfter > 0) {
            $text .= sprintf(' (retry after %ds)', $retryAfter);
        }
        parent::__construct($text, $status);
    }

    /** The ApiException subclass of $status. */
    public static function of(int $status, string $message, string $error, array $details, int $retryAfter, ResponseMeta $meta): self
    {
        $class = match (true) {
            $status === 400 => BadRequestException::class,
            $status === 401 => AuthenticationException::class,
            $status === 404 => NotFoundException::class,
            $status === 409 => ConflictException::class,
            $status === 422 => UnprocessableEntityException::class,
            $status === 429 => RateLimitException::class,
            $status >= 500 => ServerException::class,
            default => self::class,
        };
        return new $class($status, $message, $error, $details, $retryAfter, $meta);
    }
}
