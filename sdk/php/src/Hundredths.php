<?php

declare(strict_types=1);

namespace Pixgate;

/** @internal Exact decimal text to and from integer hundredths, without floats. */
final class Hundredths
{
    /** Parses a decimal number (JSON grammar) into hundredths, refusing a non-zero digit past the second decimal. */
    public static function parse(string $text, string $what, bool $allowExponent): int
    {
        if (!preg_match('/^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/D', $text, $m) || (!$allowExponent && isset($m[4]))) {
            throw new \InvalidArgumentException(sprintf('pixgate: invalid %s "%s": want reais such as "25.90"', $what, $text));
        }
        $frac = $m[3] ?? '';
        $exp = isset($m[4]) && $m[4] !== '' ? (int) $m[4] : 0;
        if ($exp > 40 || $exp < -400) {
            throw new \InvalidArgumentException(sprintf('pixgate: %s "%s" out of range', $what, $text));
        }
        $digits = ltrim($m[2] . $frac, '0');
        $scale = 2 - strlen($frac) + $exp;
        if ($scale >= 0) {
            $digits .= str_repeat('0', $scale);
        } else {
            $cut = strlen($digits) + $scale;
            $dropped = $cut > 0 ? substr($digits, $cut) : $digits;
            if (preg_match('/[1-9]/', $dropped)) {
                throw new \InvalidArgumentException(sprintf('pixgate: %s "%s" has more than two decimals', $what, $text));
            }
            $digits = $cut > 0 ? substr($digits, 0, $cut) : '';
        }
        $digits = ltrim($digits, '0');
        if ($digits === '') {
            return 0;
        }
        if (strlen($digits) > 18) {
            throw new \InvalidArgumentException(sprintf('pixgate: %s "%s" out of range', $what, $text));
        }
        $n = (int) $digits;
        return ($m[1] ?? '') === '-' ? -$n : $n;
    }

    public static function fixed(int $h): string
    {
        $abs = abs($h);
        return sprintf('%s%d.%02d', $h < 0 ? '-' : '', intdiv($abs, 100), $abs % 100);
    }

    public static function json(int $h): string
    {
        $s = self::fixed($h);
        if (str_ends_with($s, '.00')) {
            return substr($s, 0, -3);
        }
        return str_ends_with($s, '0') ? substr($s, 0, -1) : $s;
    }
}
