<?php

declare(strict_types=1);

namespace Pixgate;

/**
 * An answer's JSON body, read like an array ($charge['payment_id']), money
 * as Amount, with the answer's metadata in $response.
 *
 * @implements \ArrayAccess<string, mixed>
 * @implements \IteratorAggregate<string, mixed>
 */
final class Result implements \ArrayAccess, \IteratorAggregate, \Countable, \JsonSerializable
{
    /** @param array<string, mixed> $body */
    public function __construct(private readonly array $body, public readonly ResponseMeta $response)
    {
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return $this->body;
    }

    public function offsetExists(mixed $offset): bool
    {
        return isset($this->body[$offset]);
    }

    public function offsetGet(mixed $offset): mixed
    {
        return $this->body[$offset] ?? null;
    }

    public function offsetSet(mixed $offset, mixed $value): void
    {
        throw new \LogicException('pixgate: a Result is read-only');
    }

    public function offsetUnset(mixed $offset): void
    {
        throw new \LogicException('pixgate: a Result is read-only');
    }

    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->body);
    }

    public function count(): int
    {
        return count($this->body);
    }

    /**
     * What var_dump and print_r show: the body with every client_secret and
     * webhook_secret (a new sub-account's credentials) as "[redacted]", so that
     * dumping an answer into a log never writes them; reading the key, or
     * json_encode, still gives them.
     */
    public function __debugInfo(): array
    {
        return ['body' => self::redact($this->body), 'response' => $this->response];
    }

    private static function redact(array $a): array
    {
        foreach ($a as $k => $v) {
            if (is_array($v)) {
                $a[$k] = self::redact($v);
            } elseif (is_string($v) && ($k === 'client_secret' || $k === 'webhook_secret')) {
                $a[$k] = '[redacted]';
            }
        }
        return $a;
    }

    public function jsonSerialize(): mixed
    {
        return $this->body;
    }
}
