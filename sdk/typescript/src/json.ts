/**
 * JSON with exact money. JSON.parse turns 10.55 into a binary float and
 * JSON.stringify cannot write a number from text (JSON.rawJSON is not in
 * Node 18 or 20), so the SDK reads and writes the money fields itself:
 *
 * - decoding: before JSON.parse, the number after every money key
 *   ("amount": 10.55) is put in quotes straight from the text, and the
 *   reviver turns that text into an Amount (or a Percent). No float is
 *   ever made of it. The scan skips over whole JSON strings, so text inside
 *   a string is never touched.
 * - encoding: a small encoder writes Amount and Percent values, and strings
 *   under a money key, as the JSON numbers the API expects; a JavaScript
 *   number under a money key is refused.
 */
import { Amount, Percent, toAmount, toPercent } from "./amount.js";

/** Keys whose values are money in reais, in requests and answers. */
export const MONEY_KEYS: ReadonlySet<string> = new Set([
  "amount",
  "tax",
  "value",
  "price",
  "refunded_amount",
  "paid_amount",
  "amount_due_today",
  "returned_amount",
  "first_payment",
]);

/** Keys whose values are percentages (a due charge's fine, interest, discounts). */
export const PERCENT_KEYS: ReadonlySet<string> = new Set(["percent", "percent_per_month"]);

// A whole JSON string, then optionally the colon and number that follow it
// when the string is an object key.
const KEY_NUMBER = /"(?:[^"\\]|\\.)*"(?:(\s*:\s*)(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))?/g;

/** decodeJSON parses an answer's text, money fields as Amount/Percent. */
export function decodeJSON(text: string): unknown {
  const quoted = text.replace(KEY_NUMBER, (whole: string, colon?: string, num?: string) => {
    if (num === undefined) return whole;
    const key = whole.slice(1, whole.length - colon!.length - num.length - 1);
    if (!MONEY_KEYS.has(key) && !PERCENT_KEYS.has(key)) return whole;
    return `"${key}"${colon}"${num}"`;
  });
  return JSON.parse(quoted, function (key: string, value: unknown) {
    if (typeof value !== "string" || Array.isArray(this)) return value;
    if (MONEY_KEYS.has(key)) return Amount.fromJSONText(value);
    if (PERCENT_KEYS.has(key)) return Percent.fromJSONText(value);
    return value;
  });
}

/** encodeJSON writes a request body; money must be strings or Amounts. */
export function encodeJSON(value: unknown, key = ""): string {
  if (value instanceof Amount || value instanceof Percent) return value.toJSONNumber();
  if (MONEY_KEYS.has(key) && value !== null && value !== undefined) return toAmount(value, key).toJSONNumber();
  if (PERCENT_KEYS.has(key) && value !== null && value !== undefined) return toPercent(value, key).toJSONNumber();
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`pixgate: ${key || "value"} is not a finite number`);
      return JSON.stringify(value);
    case "bigint":
      return value.toString();
    case "object": {
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      if (Array.isArray(value)) return `[${value.map((v) => encodeJSON(v === undefined ? null : v)).join(",")}]`;
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === undefined) continue;
        parts.push(`${JSON.stringify(k)}:${encodeJSON(v, k)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      throw new TypeError(`pixgate: cannot encode a ${typeof value} as JSON`);
  }
}
