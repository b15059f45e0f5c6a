/**
 * Request and answer types of the pixgate API, as internal/httpapi/openapi.yaml
 * documents them. Money is an {@link Amount} in answers and an
 * {@link AmountInput} ("10.50" or an Amount) in requests; dates are the
 * API's ISO 8601 strings.
 */
import type { Amount, AmountInput, Percent, PercentInput } from "./amount.js";
import type { ResponseMeta } from "./errors.js";

/** An answer's body with the answer's metadata (non-enumerable, so it never shows in JSON). */
export type WithResponse<T> = T & { readonly lastResponse: ResponseMeta };

/** Options of one call. */
export interface CallOptions {
  /** Sent as Idempotency-Key (creations: generated when absent, kept across the SDK's own retries). */
  idempotencyKey?: string;
  /** Aborts the call, retries and waits included. */
  signal?: AbortSignal;
}

export type TransactionStatus = "PENDING" | "PAID" | "CANCELLED" | "REFUNDED" | "REVERSED";
/** Charges, payouts, received split shares, transfers within a family. */
export type TransactionType = "cashin" | "cashout" | "split" | "transfer";
export type PixKeyType = "CPF" | "CNPJ" | "EMAIL" | "PHONE" | "EVP";

export interface Address {
  street: string;
  number: string;
  neighborhood: string;
  city: string;
  /** UF, upper case. */
  state: string;
  /** CEP, 8 digits. */
  zipCode: string;
}

export interface Payer {
  name: string;
  /** CPF or CNPJ, digits only, check digits verified. */
  document: string;
  phoneNumber: string;
  email: string;
  address: Address;
}

export interface Product {
  name: string;
  /** Digits, greater than 0: "1". */
  quantity: string;
  price: AmountInput;
}

/** A due date's terms (docs/due-dates.md). */
export interface Due<A = AmountInput, P = PercentInput> {
  /** YYYY-MM-DD, São Paulo calendar. */
  date: string;
  days_after?: number;
  fine?: { percent?: P; amount?: A };
  interest?: { percent_per_month: P };
  discounts?: Array<{ until: string; percent?: P; amount?: A }>;
}

/**
 * One receiver of a split charge (docs/marketplace.md): one of your
 * sub-accounts and its share of what the charge brings less your cash-in
 * fee, as a percent or as an amount. A charge's splits are all percents or
 * all amounts, 1 to 10 of them, each account once.
 */
export type Split =
  | { account_id: string; percent: PercentInput; amount?: never }
  | { account_id: string; amount: AmountInput; percent?: never };

/** A receiver of a split charge and what it was credited: null until the charge is paid, 0 when its share was capped to nothing. */
export interface SplitCredit {
  account_id: string;
  amount: Amount | null;
}

/** POST /api/v1/gateway/request-qrcode. */
export interface ChargeRequest {
  amount: AmountInput;
  external_id: string;
  payer: Payer;
  payerQuestion: string;
  postbackUrl: string;
  products: Product[];
  due?: Due;
  /** Shares what the charge brings among your sub-accounts once it is paid. */
  splits?: Split[];
}

export interface Charge {
  payment_id: string;
  external_id: string;
  amount: Amount;
  /** PIX copy-and-paste code. */
  qrcode: string;
  /** PNG, Base64. */
  qrcode_image: string;
  status: "PENDING";
  expires_at: string;
  due?: Due<Amount, Percent>;
  amount_due_today?: Amount | null;
}

/** POST /api/v1/gateway/pix-payment. */
export interface PayoutRequest {
  amount: AmountInput;
  description: string;
  creditParty: { name?: string; keyType: PixKeyType; key: string };
  callbackUrl: string;
  external_id?: string;
  /**
   * São Paulo date YYYY-MM-DD, tomorrow to 365 days ahead: the payout waits
   * (SCHEDULED, nothing reserved) and is sent at the start of that day.
   */
  scheduled_date?: string;
}

export interface Payout {
  statusCode: number;
  transaction_id: string;
  external_id: string | null;
  amount: Amount;
  tax: Amount;
  /** The creation answer's names; the outcome is read with the transaction names. */
  status: "PENDING" | "SCHEDULED" | "COMPLETED" | "FAILED";
  /** A scheduled payout's date; absent otherwise. */
  scheduled_date?: string;
}

/** One payout of a batch: a payout request whose external_id is required; callbackUrl defaults to the batch's. */
export interface PayoutBatchItemRequest extends Omit<PayoutRequest, "external_id" | "callbackUrl"> {
  external_id: string;
  callbackUrl?: string;
}

/** POST /api/v1/gateway/pix-payments/batch. */
export interface PayoutBatchRequest {
  /** Makes the batch idempotent, in a namespace of batches only. */
  external_id: string;
  /** Receives pix.batch.completed, and the events of items that name none. */
  callbackUrl: string;
  /** 1 to 1,000. */
  items: PayoutBatchItemRequest[];
}

export type PayoutBatchItemStatus = "PENDING" | "SCHEDULED" | "PAID" | "CANCELLED" | "REVERSED" | "REJECTED";

export interface PayoutBatchItem {
  index: number;
  external_id: string | null;
  /** null when the item was rejected. */
  transaction_id: string | null;
  status: PayoutBatchItemStatus;
  /** The error the item's single request would have got; null unless REJECTED. */
  error: { statusCode: number; message: string } | null;
}

/** How many items read each status now. */
export type PayoutBatchCounts = Record<PayoutBatchItemStatus, number>;

export interface PayoutBatch {
  batch_id: string;
  external_id: string;
  total: number;
  accepted: number;
  rejected: number;
  /** Read by getPayoutBatch (and pix.batch.completed), not in the creation answer. */
  counts?: PayoutBatchCounts;
  items: PayoutBatchItem[];
}

/** The 202 answer of createPayoutBatch (a replay answers the same). */
export interface PayoutBatchAccepted {
  statusCode: 202;
  data: PayoutBatch;
}

/** POST /api/v1/gateway/refund: PaymentID, ExternalID or both. */
export interface RefundRequest {
  payment_id?: string;
  external_id?: string;
  /** Absent: everything not yet refunded. */
  amount?: AmountInput;
  reason?: string;
}

export interface Refund {
  statusCode: number;
  refund_id: string;
  payment_id: string;
  amount: Amount;
  status: "PENDING";
}

export interface RefundView {
  refund_id: string;
  payment_id: string;
  amount: Amount;
  reason: string | null;
  status: "PENDING" | "COMPLETED" | "FAILED";
  created_at: string;
  settled_at: string | null;
}

export interface DisputeSummary {
  dispute_id: string;
  status: DisputeStatus;
  amount: Amount;
}

/** A charge or a payout as the wallet reports it. */
export interface Transaction {
  payment_id: string;
  external_id: string | null;
  type: TransactionType;
  status: TransactionStatus;
  amount: Amount;
  tax: Amount;
  refunded_amount: Amount;
  created_at: string;
  confirmed_date: string | null;
  paid_amount: Amount | null;
  amount_mismatch?: boolean;
  due?: Due<Amount, Percent>;
  amount_due_today?: Amount | null;
  recurrence_id?: string;
  disputes?: DisputeSummary[];
  end_to_end_id: string | null;
  txid: string | null;
  payer_name: string | null;
  payer_document: string | null;
  /** Transfers only: the transfer (the sender's payment_id). */
  transfer_id?: string;
  /** Transfers only: out on the sender's side, in on the receiver's. */
  direction?: "in" | "out";
  /** Transfers only: the other side's account_id. */
  counterparty_account_id?: string;
  /** A scheduled payout's São Paulo date (it reads PENDING until then). */
  scheduled_date?: string;
  /** A split charge's lookup only: each receiver and what it was credited. */
  splits?: SplitCredit[];
  /** Splits only (type "split"): the charge the share came from. */
  source_payment_id?: string;
}

/** `{statusCode, message, data}`. */
export interface Envelope<T> {
  statusCode: number;
  message?: string;
  data: T;
}

/** One page of a list: pass next_cursor back as cursor; null on the last page. */
export interface Page<T> extends Envelope<T[]> {
  next_cursor: string | null;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export interface TransactionQuery extends PageQuery {
  status?: TransactionStatus;
  type?: TransactionType;
  /** RFC 3339 or a Date; inclusive. */
  from?: string | Date;
  /** RFC 3339 or a Date; exclusive. */
  to?: string | Date;
}

export interface RefundQuery extends PageQuery {
  payment_id?: string;
  status?: "PENDING" | "COMPLETED" | "FAILED";
}

export type RecurrenceStatus = "CREATED" | "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELLED" | "FINISHED";

export interface RecurrenceQuery extends PageQuery {
  status?: RecurrenceStatus;
}

export type DisputeStatus = "OPEN" | "CLOSED";
export type DisputeReason = "FRAUD" | "OPERATIONAL_FAILURE" | "PIX_AUTOMATICO";

export interface DisputeQuery extends PageQuery {
  status?: DisputeStatus;
  payment_id?: string;
}

export interface LookupRequest {
  payment_id?: string;
  external_id?: string;
}

export interface Balance {
  statusCode: number;
  message: string;
  /** Integer centavos. */
  data: { available_cents: number; pending_cents: number; blocked_cents: number; debt_cents: number; currency: "BRL" };
  timestamp: string;
}

export interface Movement {
  at: string;
  transaction_id: string;
  type: string;
  description: string;
  amount_cents: number;
  balance_cents: number;
}

export interface Statement {
  statusCode: number;
  message: string;
  data: { from: string; to: string; opening_balance_cents: number; closing_balance_cents: number; movements: Movement[] };
}

/** POST /api/v1/gateway/recurrences (Pix Automático). */
export interface RecurrenceRequest {
  external_id: string;
  payer: { name: string; document: string };
  contract: string;
  description: string;
  frequency: "WEEKLY" | "MONTHLY" | "QUARTERLY" | "SEMIANNUAL" | "ANNUAL";
  start_date: string;
  end_date?: string | null;
  amount: AmountInput;
  retry: "NONE" | "THREE_IN_SEVEN_DAYS";
  first_payment?: AmountInput | null;
  postbackUrl: string;
  /** Every cycle charge (and the first payment) is split so when paid. */
  splits?: Split[];
}

export interface Recurrence {
  recurrence_id: string;
  external_id: string;
  status: RecurrenceStatus;
  cancelled_by?: "merchant" | "payer" | null;
  amount: Amount;
  frequency: string;
  start_date: string;
  end_date: string | null;
  retry: string;
  next_due_date: string | null;
  first_payment?: Amount | null;
  [field: string]: unknown;
}

export interface RecurrenceCreated extends Recurrence {
  statusCode: number;
  qrcode: string;
  qrcode_image: string;
}

export interface SandboxCycle {
  statusCode: number;
  payment_id: string;
  due_date: string;
  amount: Amount;
}

export interface Dispute {
  dispute_id: string;
  payment_id: string;
  amount: Amount;
  reason: DisputeReason;
  status: DisputeStatus;
  respond_by: string;
  defense: { accept: boolean; justification: string; at: string } | null;
  outcome: "released" | "returned" | null;
  returned_amount: Amount;
  opened_at: string;
  closed_at: string | null;
}

export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface Delivery {
  event_id: string;
  event: string;
  payment_id: string;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: DeliveryAttempt[];
}

export interface WebhookTestResult {
  statusCode: number;
  message: string;
  data: { status_code: number | null; latency_ms: number; error: string | null };
}

export interface Accepted {
  statusCode: number;
  message: string;
}

export interface SandboxClock {
  statusCode: number;
  data: { now: string; offset_seconds: number };
}

// ---- sub-accounts and transfers (docs/marketplace.md) ----

/** GET /api/v1/accounts/me: the calling client's own account. */
export interface AccountMe {
  /** What transfers and splits name. */
  account_id: string;
  /** The parent's account_id; null unless the caller is a sub-account. */
  parent_id: string | null;
  name: string;
  /** null for a client an operator created. */
  document: string | null;
}

/** POST /api/v1/accounts. */
export interface AccountRequest {
  /** 1–100 characters. */
  name: string;
  /** CPF (11 digits) or CNPJ (14 digits), check digits verified. */
  document: string;
  /** Unique among your sub-accounts; with it a repeat answers the first account (and the SDK retries). */
  external_id?: string;
  /** Where the sub-account's own events go. */
  postbackUrl?: string;
}

/** A new sub-account with its credentials: both secrets are shown once, and are null in a replay. */
export interface AccountCreated {
  account_id: string;
  client_id: string;
  client_secret: string | null;
  webhook_secret: string | null;
  name: string;
  document: string;
  external_id: string | null;
  parent_id: string;
}

/** A sub-account as its parent reads it; never a secret. */
export interface Account {
  account_id: string;
  client_id: string;
  name: string;
  document: string;
  external_id: string | null;
  parent_id: string;
  postbackUrl: string | null;
  status: "active" | "disabled";
  created_at: string;
  /** Integer centavos; read by getAccount only. */
  available_cents?: number;
}

/** A sub-account's new client secret, shown once. */
export interface AccountSecret {
  account_id: string;
  client_id: string;
  client_secret: string;
}

/** POST /api/v1/wallet/transfers. */
export interface TransferRequest {
  /** One of your sub-accounts, or your parent. */
  to_account_id: string;
  amount: AmountInput;
  description?: string;
  /** Unique per client across charges, payouts and transfers; makes a repeat replay the first. */
  external_id?: string;
}

/** A transfer: instant, so always COMPLETED. */
export interface Transfer {
  transfer_id: string;
  from_account_id: string;
  to_account_id: string;
  amount: Amount;
  status: "COMPLETED";
  created_at: string;
}
