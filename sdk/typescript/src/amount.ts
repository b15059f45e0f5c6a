/**
 * Exact money and percentages. pixgate sends amounts as JSON numbers in
 * reais with at most two decimals (10, 10.5, 10.55); a binary float cannot
 * hold most of them exactly, so this SDK never turns one into a `number`:
 * requests take a decimal string ("10.50") or an {@link Amount}, and answers
 * carry {@link Amount} objects read from the JSON text itself (see json.ts).
 */

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * parseHundredths reads a decimal number (JSON number grammar, exponent
 * allowed only when allowExponent) into an integer count of hundredths,
 * refusing any non-zero digit past the second decimal: it never rounds.
 */
function parseHundredths(text: string, what: string, allowExponent: boolean): number {
  const m = DECIMAL.exec(text);
  if (!m || (!allowExponent && m[4] !== undefined)) {
    throw new TypeError(`pixgate: invalid ${what} ${JSON.stringify(text)}: want reais such as "25.90"`);
  }
  const [, sign, int, frac = "", exp = "0"] = m;
  const e = Number(exp);
  if (!Number.isSafeInteger(e) || e > 40 || e < -400) {
    throw new RangeError(`pixgate: ${what} ${JSON.stringify(text)} out of range`);
  }
  // digits × 10^(scale) is the value in hundredths.
  let digits = (int + frac).replace(/^0+(?=\d)/, "");
  let scale = 2 - frac.length + e;
  if (scale >= 0) {
    digits = digits + "0".repeat(scale);
  } else {
    const cut = digits.length + scale;
    const dropped = cut > 0 ? digits.slice(cut) : digits;
    if (/[1-9]/.test(dropped)) {
      throw new RangeError(`pixgate: ${what} ${JSON.stringify(text)} has more than two decimals`);
    }
    digits = cut > 0 ? digits.slice(0, cut) : "0";
  }
  const n = BigInt(digits) * (sign ? -1n : 1n);
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`pixgate: ${what} ${JSON.stringify(text)} out of range`);
  }
  return Number(n);
}

function formatFixed(h: number): string {
  const sign = h < 0 ? "-" : "";
  const abs = Math.abs(h);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

function formatJSON(h: number): string {
  return formatFixed(h).replace(/\.00$/, "").replace(/(\.\d)0$/, "$1");
}

/**
 * An amount of money held as an integer number of centavos. Build one with
 * {@link Amount.reais} ("25.90") or {@link Amount.centavos} (2590); answers
 * carry Amounts read exactly from the JSON text.
 */
export class Amount {
  /** The amount in centavos (hundredths of a real). */
  readonly centavos: number;

  private constructor(centavos: number) {
    this.centavos = centavos;
  }

  /** The Amount of n centavos: `Amount.centavos(2590)` is R$ 25,90. */
  static centavos(n: number | bigint): Amount {
    const v = typeof n === "bigint" ? Number(n) : n;
    if (!Number.isSafeInteger(v) || (typeof n === "bigint" && BigInt(v) !== n)) {
      throw new TypeError(`pixgate: centavos must be a safe integer, got ${String(n)}`);
    }
    return new Amount(v);
  }

  /**
   * The Amount written in reais with a dot and at most two decimals
   * ("25.90", "10", "0.5"); extra decimals must be zeros ("1.500"). Anything
   * else throws: it never rounds.
   */
  static reais(text: string): Amount {
    if (typeof text !== "string") {
      throw new TypeError(`pixgate: an amount is a string such as "25.90" or an Amount, never a ${typeof text}`);
    }
    return new Amount(parseHundredths(text, "amount", false));
  }

  /** Reads the exact text of a JSON number (exponents allowed), as answers carry them. */
  static fromJSONText(text: string): Amount {
    return new Amount(parseHundredths(text, "amount", true));
  }

  /** Reais with two decimals: "25.90", "-0.05". */
  toString(): string {
    return formatFixed(this.centavos);
  }

  /** The JSON number the API expects, without trailing zero decimals: "10", "10.5", "10.55". */
  toJSONNumber(): string {
    return formatJSON(this.centavos);
  }

  /** JSON.stringify gives the two-decimal string; the SDK's own encoder writes a number. */
  toJSON(): string {
    return this.toString();
  }

  /** Whether other is the same amount (an Amount or reais text). */
  equals(other: Amount | string): boolean {
    return toAmount(other, "amount").centavos === this.centavos;
  }
}

/**
 * A percentage held exactly in hundredths of a percent (250 is 2.5%), for a
 * due charge's fine, interest and discounts.
 */
export class Percent {
  /** Hundredths of a percent. */
  readonly hundredths: number;

  private constructor(h: number) {
    this.hundredths = h;
  }

  /** The Percent written with at most two decimals: "2", "2.5", "0.33". */
  static of(text: string): Percent {
    if (typeof text !== "string") {
      throw new TypeError(`pixgate: a percent is a string such as "2.5" or a Percent, never a ${typeof text}`);
    }
    return new Percent(parseHundredths(text, "percent", false));
  }

  /** Reads the exact text of a JSON number. */
  static fromJSONText(text: string): Percent {
    return new Percent(parseHundredths(text, "percent", true));
  }

  /** Two decimals: "2.50". */
  toString(): string {
    return formatFixed(this.hundredths);
  }

  /** The JSON number: "2.5". */
  toJSONNumber(): string {
    return formatJSON(this.hundredths);
  }

  /** JSON.stringify gives the two-decimal string. */
  toJSON(): string {
    return this.toString();
  }
}

/** What a request accepts as money: reais text ("10.50") or an Amount. Never a number. */
export type AmountInput = Amount | string;

/** What a request accepts as a percentage: text ("2.5") or a Percent. */
export type PercentInput = Percent | string;

/** toAmount turns request input into an Amount, refusing numbers. */
export function toAmount(v: unknown, field: string): Amount {
  if (v instanceof Amount) return v;
  if (typeof v === "string") return Amount.reais(v);
  throw new TypeError(
    `pixgate: ${field} must be reais as a string ("10.50") or an Amount (Amount.centavos(1050)), not a ${typeof v}: ` +
      "a binary float cannot hold money exactly",
  );
}

/** toPercent turns request input into a Percent, refusing numbers. */
export function toPercent(v: unknown, field: string): Percent {
  if (v instanceof Percent) return v;
  if (typeof v === "string") return Percent.of(v);
  throw new TypeError(`pixgate: ${field} must be a percent as a string ("2.5") or a Percent, not a ${typeof v}`);
}
