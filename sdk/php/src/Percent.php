<?php

declare(strict_types=1);

namespace Pixgate;

/** A percentage held exactly in hundredths of a percent (250 is 2.5%), for a due charge's fine, interest and discounts. */
final class Percent implements \JsonSerializable, \Stringable
{
    private function __construct(public readonly int $hundredths)
    {
    }

    /** The Percent written with at most two decimals: "2", "2.5". */
    public static function of(mixed $v, string $field = 'percent'): self
    {
        if ($v instanceof self) {
            return $v;
        }
        if (is_string($v)) {
            return new self(Hundredths::parse($v, 'percent', false));
        }
        throw new \InvalidArgumentException(sprintf('pixgate: %s must be a percent as a string ("2.5") or a Percent, not %s', $field, get_debug_type($v)));
    }

    /** Reads the exact text of a JSON number. */
    public static function fromJsonText(string $text): self
    {
        return new self(Hundredths::parse($text, 'percent', true));
    }

    public function __toString(): string
    {
        return Hundredths::fixed($this->hundredths);
    }

    public function toJsonNumber(): string
    {
        return Hundredths::json($this->hundredths);
    }

    public function jsonSerialize(): string
    {
        return (string) $this;
    }
}
