<?php

declare(strict_types=1);

namespace Pixgate;

/**
 * An amount of money held as integer centavos. pixgate sends amounts as JSON
 * numbers in reais with at most two decimals (10, 10.5, 10.55); a float
 * cannot hold most of them exactly, so the SDK never makes one: requests take
 * reais as a string ("10.50") or an Amount, and answers carry Amounts read
 * from the JSON text itself (see Json).
 */
final class Amount implements \JsonSerializable, \Stringable
{
    private function __construct(public readonly int $centavos)
    {
    }

    /** The Amount of $n centavos: Amount::centavos(2590) is R$ 25,90. */
    public static function centavos(int $n): self
    {
        return new self($n);
    }

    /**
     * The Amount written in reais with a dot and at most two decimals
     * ("25.90", "10", "0.5"); extra decimals must be zeros. Anything else
     * throws: it never rounds.
     */
    public static function reais(string $text): self
    {
        return new self(Hundredths::parse($text, 'amount', false));
    }

    /** Reads the exact text of a JSON number (exponent allowed), as answers carry it. */
    public static function fromJsonText(string $text): self
    {
        return new self(Hundredths::parse($text, 'amount', true));
    }

    /** Turns request input into an Amount: a string of reais or an Amount, never a float or an int. */
    public static function of(mixed $v, string $field = 'amount'): self
    {
        if ($v instanceof self) {
            return $v;
        }
        if (is_string($v)) {
            return self::reais($v);
        }
        throw new \InvalidArgumentException(sprintf(
            'pixgate: %s must be reais as a string ("10.50") or an Amount (Amount::centavos(1050)), not %s: a binary float cannot hold money exactly',
            $field,
            get_debug_type($v),
        ));
    }

    /** Reais with two decimals: "25.90", "-0.05". */
    public function __toString(): string
    {
        return Hundredths::fixed($this->centavos);
    }

    /** The JSON number the API expects: "10", "10.5", "10.55". */
    public function toJsonNumber(): string
    {
        return Hundredths::json($this->centavos);
    }

    /** json_encode gives the two-decimal string; the SDK's own encoder writes a number. */
    public function jsonSerialize(): string
    {
        return (string) $this;
    }

    public function equals(self|string $other): bool
    {
        return self::of($other)->centavos === $this->centavos;
    }
}
