/**
 * Receiving pixgate webhooks: verifying their Standard Webhooks signature
 * (https://www.standardwebhooks.com) and parsing the body into a typed
 * event.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Amount } from "./amount.js";
import { decodeJSON } from "./json.js";
import { PixgateError } from "./errors.js";

/** Every event name of the API's EventName enum, by the family it belongs to. */
export const TRANSACTION_EVENTS = [
  "pix.cashin.paid",
  "pix.cashin.cancelled",
  "pix.cashout.paid",
  "pix.cashout.failed",
  "pix.cashout.reversed",
  "pix.cashout.cancelled",
  "pix.refund.completed",
  "pix.refund.failed",
] as const;
export const RECURRENCE_EVENTS = [
  "pix.recurrence.approved",
  "pix.recurrence.rejected",
  "pix.recurrence.expired",
  "pix.recurrence.cancelled",
  "pix.recurrence.charge_failed",
  "pix.recurrence.finished",
] as const;
export const DISPUTE_EVENTS = ["pix.dispute.opened", "pix.dispute.closed"] as const;
export const BATCH_EVENTS = ["pix.batch.completed"] as const;
export const SPLIT_EVENTS = ["pix.split.received"] as const;
/** The body of the testWebhook operation's event. */
export const TEST_EVENT = "webhook.test";

export type TransactionEventName = (typeof TRANSACTION_EVENTS)[number];
export type RecurrenceEventName = (typeof RECURRENCE_EVENTS)[number];
export type DisputeEventName = (typeof DISPUTE_EVENTS)[number];
export type BatchEventName = (typeof BATCH_EVENTS)[number];
export type SplitEventName = (typeof SPLIT_EVENTS)[number];

interface EventBase {
  /** Equals the webhook-id header: deduplicate on it (delivery is at least once). */
  id: string;
  occurred_at: string;
  /** The verified body, byte for byte as text, for fields this version does not know. */
  raw: string;
}

/** pix.cashin.*, pix.cashout.* (cancelled: a scheduled payout cancelled before its day), pix.refund.*. */
export interface TransactionEvent extends EventBase {
  kind: "transaction";
  event: TransactionEventName;
  statusTransaction: string;
  /** Without fee; refunds: the refunded amount. */
  value: Amount;
  tax: Amount;
  payment_id: string;
  external_id: string | null;
  transaction_id?: string;
  refund_id?: string;
  type: "cashin" | "cashout" | "refund";
  paid_amount?: Amount;
  amount_mismatch?: boolean;
  recurrence_id?: string;
  end_to_end_id?: string | null;
  txid?: string | null;
  payer_name?: string | null;
  payer_document?: string | null;
  /** pix.cashin.paid of a split charge only: each receiver and what it was credited. */
  splits?: Array<{ account_id: string; amount: Amount | null }>;
}

/** pix.recurrence.*. */
export interface RecurrenceEvent extends EventBase {
  kind: "recurrence";
  event: RecurrenceEventName;
  recurrence_id: string;
  external_id: string;
  status: string;
  cancelled_by?: "merchant" | "payer";
  payment_id?: string;
  attempts?: number;
}

/** pix.dispute.opened and pix.dispute.closed. */
export interface DisputeEvent extends EventBase {
  kind: "dispute";
  event: DisputeEventName;
  dispute_id: string;
  payment_id: string;
  amount: Amount;
  reason: string;
  respond_by?: string;
  outcome?: "released" | "returned";
  returned_amount?: Amount;
}

/** pix.batch.completed: sent once, when no accepted item of a batch is PENDING or SCHEDULED any more. */
export interface BatchEvent extends EventBase {
  kind: "batch";
  event: BatchEventName;
  statusTransaction: "COMPLETED";
  batch_id: string;
  external_id: string;
  total: number;
  accepted: number;
  rejected: number;
  counts: Record<"PENDING" | "SCHEDULED" | "PAID" | "CANCELLED" | "REVERSED" | "REJECTED", number>;
}

/**
 * pix.split.received: sent to a sub-account's own postbackUrl, signed with
 * its own webhook secret, when a charge of its parent that splits to it is
 * paid and its share credited.
 */
export interface SplitEvent extends EventBase {
  kind: "split";
  event: SplitEventName;
  statusTransaction: "PAID";
  type: "split";
  /** The receiver's split transaction, in its history. */
  payment_id: string;
  /** The parent's charge that was paid. */
  source_payment_id: string;
  /** The share credited. */
  value: Amount;
}

/** webhook.test, sent by testWebhook. */
export interface TestEvent extends EventBase {
  kind: "test";
  event: "webhook.test";
}

/** An event name this version does not know (a newer server's). */
export interface UnknownEvent extends EventBase {
  kind: "unknown";
  event: string;
  [field: string]: unknown;
}

export type WebhookEvent = TransactionEvent | RecurrenceEvent | DisputeEvent | BatchEvent | SplitEvent | TestEvent | UnknownEvent;

/** A webhook that failed verification. */
export class WebhookVerificationError extends PixgateError {
  override name = "WebhookVerificationError";
}

/** Headers as fetch (Headers), node:http (IncomingHttpHeaders) or a plain object holds them. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderSource, name: string): string {
  if (typeof (h as Headers).get === "function") return ((h as Headers).get(name) ?? "").trim();
  const rec = h as Record<string, string | string[] | undefined>;
  for (const [k, v] of Object.entries(rec)) {
    if (k.toLowerCase() === name) return (Array.isArray(v) ? v[0] ?? "" : v ?? "").trim();
  }
  return "";
}

function decodeSecret(secret: string): Buffer {
  const b64 = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new TypeError("pixgate: the webhook secret is not whsec_ followed by Base64");
  const key = Buffer.from(b64, "base64");
  if (key.length === 0) throw new TypeError("pixgate: empty webhook secret");
  return key;
}

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** The current time, in Unix seconds (for tests). */
  nowSeconds?: number;
}

/**
 * verifyWebhook checks the webhook-id, webhook-timestamp and
 * webhook-signature headers against the raw body. secret is the client's
 * whsec_… webhook secret (several during a rotation). It throws a
 * WebhookVerificationError unless a v1 signature matches and the timestamp
 * is within the tolerance. Pass the body exactly as received, before any
 * JSON parsing.
 */
export function verifyWebhook(secret: string | string[], headers: HeaderSource, body: string | Uint8Array, opts: VerifyOptions = {}): void {
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs) throw new WebhookVerificationError("pixgate: webhook headers missing (webhook-id, webhook-timestamp, webhook-signature)");
  if (!/^\d{1,19}$/.test(ts)) throw new WebhookVerificationError("pixgate: webhook-timestamp is not Unix seconds");
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(ts)) > tolerance) throw new WebhookVerificationError("pixgate: webhook-timestamp outside the tolerance");
  const raw = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  const signed = Buffer.concat([Buffer.from(`${id}.${ts}.`, "utf8"), raw]);
  const expected = (Array.isArray(secret) ? secret : [secret]).map((s) => createHmac("sha256", decodeSecret(s)).update(signed).digest());
  for (const entry of sigs.split(/\s+/)) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const got = Buffer.from(entry.slice(comma + 1), "base64");
    if (expected.some((want) => want.length === got.length && timingSafeEqual(want, got))) return;
  }
  throw new WebhookVerificationError("pixgate: no webhook signature matches");
}

const FAMILY = new Map<string, WebhookEvent["kind"]>([
  ...TRANSACTION_EVENTS.map((e) => [e, "transaction"] as const),
  ...RECURRENCE_EVENTS.map((e) => [e, "recurrence"] as const),
  ...DISPUTE_EVENTS.map((e) => [e, "dispute"] as const),
  ...BATCH_EVENTS.map((e) => [e, "batch"] as const),
  ...SPLIT_EVENTS.map((e) => [e, "split"] as const),
  [TEST_EVENT, "test"],
]);

/** parseEvent reads a (verified) body into a typed event, money as Amount. */
export function parseEvent(body: string | Uint8Array): WebhookEvent {
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  let v: unknown;
  try {
    v = decodeJSON(text);
  } catch {
    throw new WebhookVerificationError("pixgate: the webhook body is not JSON");
  }
  const o = v as { id?: unknown; event?: unknown };
  if (typeof o !== "object" || o === null || typeof o.id !== "string" || typeof o.event !== "string") {
    throw new WebhookVerificationError("pixgate: the webhook body is not a pixgate event");
  }
  return { ...(v as object), kind: FAMILY.get(o.event) ?? "unknown", raw: text } as WebhookEvent;
}

/** constructEvent verifies a webhook and parses it: the one call a receiver needs. */
export function constructEvent(secret: string | string[], headers: HeaderSource, body: string | Uint8Array, opts?: VerifyOptions): WebhookEvent {
  verifyWebhook(secret, headers, body, opts);
  return parseEvent(body);
}
