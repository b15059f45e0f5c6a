<?php

declare(strict_types=1);

namespace Pixgate;

/**
 * JSON with exact money. json_decode turns 10.55 into a float (and
 * JSON_BIGINT_AS_STRING does nothing for fractions), so before decoding the
 * number after every money key ("amount": 10.55) is put in quotes straight
 * from the text, and after decoding that text becomes an Amount (or a
 * Percent). The scan steps over whole JSON strings, so text inside a string
 * is never touched. Encoding is the SDK's own, so that an Amount is written
 * as a JSON number and a float under a money key is refused.
 */
final class Json
{
    /** Keys whose values are money in reais, in requests and answers. */
    public const MONEY_KEYS = ['amount', 'tax', 'value', 'price', 'refunded_amount', 'paid_amount', 'amount_due_today', 'returned_amount', 'first_payment'];

    /** Keys whose values are percentages. */
    public const PERCENT_KEYS = ['percent', 'percent_per_month'];

    // A whole JSON string (possessive, so a long Base64 image costs no backtracking),
    // then optionally the colon and number that follow it when it is a key.
    private const KEY_NUMBER = '/"(?:[^"\\\\]++|\\\\.)*+"(?:(\s*:\s*)(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))?/s';

    /** Parses an answer into arrays, money fields as Amount and Percent. */
    public static function decode(string $text): mixed
    {
        $quoted = preg_replace_callback(self::KEY_NUMBER, static function (array $m): string {
            if (!isset($m[2])) {
                return $m[0];
            }
            $key = substr($m[0], 1, strlen($m[0]) - strlen($m[1]) - strlen($m[2]) - 2);
            if (!in_array($key, self::MONEY_KEYS, true) && !in_array($key, self::PERCENT_KEYS, true)) {
                return $m[0];
            }
            return '"' . $key . '"' . $m[1] . '"' . $m[2] . '"';
        }, $text);
        if ($quoted === null) {
            throw new \JsonException('pixgate: the answer could not be scanned: ' . preg_last_error_msg());
        }
        return self::revive(json_decode($quoted, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING), '');
    }

    private static function revive(mixed $v, string|int $key): mixed
    {
        if (is_array($v)) {
            foreach ($v as $k => $x) {
                $v[$k] = self::revive($x, $k);
            }
            return $v;
        }
        if (is_string($v) && is_string($key)) {
            if (in_array($key, self::MONEY_KEYS, true)) {
                return Amount::fromJsonText($v);
            }
            if (in_array($key, self::PERCENT_KEYS, true)) {
                return Percent::fromJsonText($v);
            }
        }
        return $v;
    }

    /** Writes a request body; money must be strings or Amounts. Null members are left out. */
    public static function encode(mixed $v, string|int $key = ''): string
    {
        if ($v instanceof Amount || $v instanceof Percent) {
            return $v->toJsonNumber();
        }
        if (is_string($key) && $v !== null) {
            if (in_array($key, self::MONEY_KEYS, true)) {
                return Amount::of($v, $key)->toJsonNumber();
            }
            if (in_array($key, self::PERCENT_KEYS, true)) {
                return Percent::of($v, $key)->toJsonNumber();
            }
        }
        if ($v === null || is_bool($v) || is_int($v) || is_string($v)) {
            return json_encode($v, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        }
        if (is_float($v)) {
            throw new \InvalidArgumentException(sprintf('pixgate: %s is a float; send money as a string or an Amount', $key === '' ? 'a value' : (string) $key));
        }
        if ($v instanceof \DateTimeInterface) {
            return json_encode(self::instant($v), JSON_THROW_ON_ERROR);
        }
        if ($v instanceof \stdClass) {
            $v = (array) $v;
            if ($v === []) {
                return '{}';
            }
        }
        if (is_array($v)) {
            if (array_is_list($v)) {
                return '[' . implode(',', array_map(static fn ($x) => self::encode($x), $v)) . ']';
            }
            $parts = [];
            foreach ($v as $k => $x) {
                if ($x === null) {
                    continue;
                }
                $parts[] = json_encode((string) $k, JSON_THROW_ON_ERROR | JSON_UNESCAPED_UNICODE) . ':' . self::encode($x, (string) $k);
            }
            return '{' . implode(',', $parts) . '}';
        }
        throw new \InvalidArgumentException('pixgate: cannot encode ' . get_debug_type($v) . ' as JSON');
    }

    /** RFC 3339 in UTC with milliseconds, as the API writes instants. */
    public static function instant(\DateTimeInterface $t): string
    {
        return \DateTimeImmutable::createFromInterface($t)->setTimezone(new \DateTimeZone('UTC'))->format('Y-m-d\TH:i:s.v\Z');
    }
}
