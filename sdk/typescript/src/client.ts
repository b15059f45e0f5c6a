/**
 * The pixgate client: one method per operation of the API, named after its
 * OpenAPI operationId, with exact money, safe retries and typed errors.
 */
import { randomBytes } from "node:crypto";
import type { AmountInput } from "./amount.js";
import { decodeJSON, encodeJSON } from "./json.js";
import {
  ApiError,
  ConnectionError,
  errorFor,
  PixgateError,
  RedirectError,
  RetryError,
  type ErrorDetail,
  type ResponseMeta,
} from "./errors.js";
import { OPERATIONS, type OperationId, type Policy } from "./operations.js";
import type * as T from "./types.js";

/** Options of a {@link Pixgate} client. */
export interface PixgateOptions {
  /** The server, e.g. "https://pixgate.example.com". */
  baseUrl: string;
  /** The client id (header stpi). */
  clientId: string;
  /** The client secret (header stps). It is never logged, and never sent anywhere but baseUrl's origin. */
  clientSecret: string;
  /** Repeats after the first attempt (default 3; 0 disables retries, 429 included). */
  maxRetries?: number;
  /** Backoff after a network error, a 5xx or a 409: the n-th wait is drawn between half and all of min(base·2ⁿ, max). Default 250 ms. */
  backoffBaseMs?: number;
  /** Default 5000 ms. */
  backoffMaxMs?: number;
  /** Bounds each attempt (default 30000 ms). */
  timeoutMs?: number;
  /** The fetch to use (default: the global fetch of Node 18+). */
  fetch?: typeof fetch;
  /** User-Agent header (default "pixgate-typescript-sdk/0.1"). */
  userAgent?: string;
  /** How to wait between attempts; meant for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

interface Call {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
  accept?: string;
  /** Answer the body as text (pages, CSV, the OpenAPI document). */
  text?: boolean;
}

/** The row type of a list operation's pages. */
export type PageRow<F> = F extends (...args: never[]) => Promise<T.Page<infer R>> ? R : never;

// The secret lives here rather than on the instance so that no
// console.log, util.inspect or JSON.stringify of a client can show it.
const secrets = new WeakMap<Pixgate, string>();

/** A fresh random Idempotency-Key (32 hex digits), the kind the SDK generates. */
export function newIdempotencyKey(): string {
  return randomBytes(16).toString("hex");
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(ms, 0));
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function isoOf(v: unknown): unknown {
  return v instanceof Date ? v.toISOString() : v;
}

/** A client of one pixgate server with one client's credentials. */
export class Pixgate {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly #origin: string;
  readonly #maxRetries: number;
  readonly #backoffBase: number;
  readonly #backoffMax: number;
  readonly #timeout: number;
  readonly #fetch: typeof fetch;
  readonly #userAgent: string;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(opts: PixgateOptions) {
    let u: URL;
    try {
      u = new URL(opts.baseUrl);
    } catch {
      throw new TypeError(`pixgate: base URL ${JSON.stringify(opts.baseUrl)} is not an absolute http(s) URL`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`pixgate: base URL ${JSON.stringify(opts.baseUrl)} is not an absolute http(s) URL`);
    }
    if (!opts.clientId || !opts.clientSecret) throw new TypeError("pixgate: clientId and clientSecret are required");
    this.baseUrl = u.origin + u.pathname.replace(/\/+$/, "");
    this.#origin = u.origin;
    this.clientId = opts.clientId;
    secrets.set(this, opts.clientSecret);
    this.#maxRetries = Math.max(opts.maxRetries ?? 3, 0);
    this.#backoffBase = opts.backoffBaseMs ?? 250;
    this.#backoffMax = opts.backoffMaxMs ?? 5000;
    this.#timeout = opts.timeoutMs ?? 30000;
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("pixgate: no global fetch: use Node 18 or later, or pass options.fetch");
    this.#fetch = f;
    this.#userAgent = opts.userAgent ?? "pixgate-typescript-sdk/0.1";
    this.#sleep = opts.sleep ?? defaultSleep;
  }

  /** Shown by console.log and util.inspect: never the secret. */
  toJSON(): { baseUrl: string; clientId: string } {
    return { baseUrl: this.baseUrl, clientId: this.clientId };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Pixgate { baseUrl: ${JSON.stringify(this.baseUrl)}, clientId: ${JSON.stringify(this.clientId)} }`;
  }

  // ---- operations (one method per operationId) ----

  /** GET /healthz. */
  getHealth(o?: T.CallOptions) { return this.call<{ status: string }>("getHealth", { signal: o?.signal }); }
  /** GET /readyz: 503 (a ServerError) while the database is unreachable. */
  getReadiness(o?: T.CallOptions) { return this.call<{ status: string }>("getReadiness", { signal: o?.signal }); }
  /** GET /openapi.yaml, as text. */
  async getOpenAPIDocument(o?: T.CallOptions): Promise<string> {
    return (await this.call<{ text: string }>("getOpenAPIDocument", { text: true, accept: "application/yaml", signal: o?.signal })).text;
  }

  /** Creates a PIX charge. An unknown outcome is a RetryError carrying the key to repeat it with. */
  createCharge(r: T.ChargeRequest, o?: T.CallOptions) {
    return this.call<T.Charge>("createCharge", { body: r, idempotencyKey: o?.idempotencyKey ?? newIdempotencyKey(), signal: o?.signal });
  }
  /** Sends a PIX payment. Give it an idempotencyKey stored before the call, so that it can be repeated without paying twice. */
  createPayout(r: T.PayoutRequest, o?: T.CallOptions) {
    return this.call<T.Payout>("createPayout", { body: r, idempotencyKey: o?.idempotencyKey ?? newIdempotencyKey(), signal: o?.signal });
  }
  /**
   * Cancels a payout sent with scheduled_date while its day has not begun
   * (pix.cashout.cancelled follows). Never repeated after a network error:
   * a repeat of a cancel that worked answers 422, hiding that it worked;
   * read the payout with getTransaction instead.
   */
  cancelPayout(transactionId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transaction>>("cancelPayout", { params: { transaction_id: transactionId }, signal: o?.signal });
  }
  /**
   * Sends 1 to 1,000 payouts in one request; each item is accepted or
   * rejected on its own. The batch is deduplicated by the server on its
   * external_id (required), so an unknown outcome is retried with the same
   * body and answers the first result (lastResponse.idempotentReplayed).
   */
  createPayoutBatch(r: T.PayoutBatchRequest, o?: T.CallOptions) {
    return this.call<T.PayoutBatchAccepted>("createPayoutBatch", { body: r, signal: o?.signal });
  }
  /** Reads a batch, each item as its payout now reads, with counts by status. */
  getPayoutBatch(batchId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.PayoutBatch & { counts: T.PayoutBatchCounts }>>("getPayoutBatch", { params: { batch_id: batchId }, signal: o?.signal });
  }
  /** Refunds all (no amount) or part of a paid charge. */
  createRefund(r: T.RefundRequest, o?: T.CallOptions) {
    return this.call<T.Refund>("createRefund", { body: r, idempotencyKey: o?.idempotencyKey ?? newIdempotencyKey(), signal: o?.signal });
  }
  /** Reads one refund. */
  getRefund(refundId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.RefundView>>("getRefund", { params: { refund_id: refundId }, signal: o?.signal });
  }
  /** One page of refunds, newest first (see {@link Pixgate.paginate}). */
  listRefunds(q: T.RefundQuery = {}, o?: T.CallOptions) {
    return this.call<T.Page<T.RefundView>>("listRefunds", { query: { ...q }, signal: o?.signal });
  }
  /** Cancels a PENDING charge; not repeated after a network error (a repeat answers 422 for a cancel that worked). */
  cancelCharge(paymentId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transaction>>("cancelCharge", { params: { payment_id: paymentId }, signal: o?.signal });
  }

  /** Creates a recurrence (Pix Automático). */
  createRecurrence(r: T.RecurrenceRequest, o?: T.CallOptions) {
    return this.call<T.RecurrenceCreated>("createRecurrence", { body: r, idempotencyKey: o?.idempotencyKey ?? newIdempotencyKey(), signal: o?.signal });
  }
  /** One page of recurrences. */
  listRecurrences(q: T.RecurrenceQuery = {}, o?: T.CallOptions) {
    return this.call<T.Page<T.Recurrence>>("listRecurrences", { query: { ...q }, signal: o?.signal });
  }
  /** Reads a recurrence with its charges. */
  getRecurrence(recurrenceId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Recurrence>>("getRecurrence", { params: { recurrence_id: recurrenceId }, signal: o?.signal });
  }
  /** Cancels a recurrence (idempotent). */
  cancelRecurrence(recurrenceId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Recurrence>>("cancelRecurrence", { params: { recurrence_id: recurrenceId }, signal: o?.signal });
  }

  /** One page of MED disputes. */
  listDisputes(q: T.DisputeQuery = {}, o?: T.CallOptions) {
    return this.call<T.Page<T.Dispute>>("listDisputes", { query: { ...q }, signal: o?.signal });
  }
  /** Reads one dispute. */
  getDispute(disputeId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Dispute>>("getDispute", { params: { dispute_id: disputeId }, signal: o?.signal });
  }
  /** Answers an OPEN dispute; never repeated after a network error (a repeat is a second defense). */
  defendDispute(disputeId: string, r: { accept: boolean; justification: string }, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Dispute>>("defendDispute", { params: { dispute_id: disputeId }, body: r, signal: o?.signal });
  }

  /** The wallet balance, in integer centavos. */
  getBalance(o?: T.CallOptions) { return this.call<T.Balance>("getBalance", { signal: o?.signal }); }
  /** Looks one transaction up by payment_id, external_id or both. */
  getTransaction(q: T.LookupRequest, o?: T.CallOptions) {
    if (!q.payment_id && !q.external_id) throw new TypeError("pixgate: getTransaction needs a payment_id, an external_id or both");
    return this.call<T.Envelope<T.Transaction>>("getTransaction", { body: q, signal: o?.signal });
  }
  /** One page of the history, newest first (see {@link Pixgate.paginate}). */
  listTransactions(q: T.TransactionQuery = {}, o?: T.CallOptions) {
    return this.call<T.Page<T.Transaction>>("listTransactions", { query: { ...q, from: isoOf(q.from), to: isoOf(q.to) }, signal: o?.signal });
  }
  /** The statement of [from, to) as JSON. */
  getStatement(q: { from: string | Date; to: string | Date }, o?: T.CallOptions) {
    return this.call<T.Statement>("getStatement", { query: { from: isoOf(q.from), to: isoOf(q.to) }, signal: o?.signal });
  }
  /** The statement of [from, to) as CSV text (the same operation, format=csv). */
  async getStatementCsv(q: { from: string | Date; to: string | Date }, o?: T.CallOptions): Promise<string> {
    const r = await this.call<{ text: string }>("getStatement", {
      query: { from: isoOf(q.from), to: isoOf(q.to), format: "csv" }, text: true, accept: "text/csv", signal: o?.signal,
    });
    return r.text;
  }

  /**
   * Moves money to one of your sub-accounts or to your parent, at once and in
   * the ledger only. Keyed like a payout: give it an idempotencyKey (or an
   * external_id) stored before the call, so that a RetryError can be repeated
   * without moving the money twice.
   */
  createTransfer(r: T.TransferRequest, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transfer>>("createTransfer", { body: r, idempotencyKey: o?.idempotencyKey ?? newIdempotencyKey(), signal: o?.signal });
  }

  /** Your own account: its account_id (what transfers name) and, for a sub-account, its parent's. */
  getAccountMe(o?: T.CallOptions) { return this.call<T.Envelope<T.AccountMe>>("getAccountMe", { signal: o?.signal }); }
  /**
   * Creates a sub-account; its secrets are in this answer only (null in a
   * replay) and are hidden from console.log. Retried after an unknown outcome
   * only with an external_id, on which the server deduplicates; without one a
   * repeat would create a second account.
   */
  async createAccount(r: T.AccountRequest, o?: T.CallOptions) {
    const res = await this.call<T.Envelope<T.AccountCreated>>("createAccount", { body: r, signal: o?.signal });
    hideSecrets(res.data);
    return res;
  }
  /** One page of your sub-accounts, newest first (see {@link Pixgate.paginate}); never a secret. */
  listAccounts(q: T.PageQuery = {}, o?: T.CallOptions) {
    return this.call<T.Page<T.Account>>("listAccounts", { query: { ...q }, signal: o?.signal });
  }
  /** One of your sub-accounts, with available_cents. Another family's, a sibling's or an unknown one is a NotFoundError. */
  getAccount(accountId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Account & { available_cents: number }>>("getAccount", { params: { account_id: accountId }, signal: o?.signal });
  }
  /** Gives a sub-account a new client secret (the old one stops at once); never repeated after a network error, since a repeat rotates again. */
  async rotateAccountSecret(accountId: string, o?: T.CallOptions) {
    const res = await this.call<T.Envelope<T.AccountSecret>>("rotateAccountSecret", { params: { account_id: accountId }, signal: o?.signal });
    hideSecrets(res.data);
    return res;
  }

  /** Sandbox: pays a pending charge (optionally on a São Paulo date, YYYY-MM-DD). Idempotent. */
  sandboxPayCharge(paymentId: string, r: { date?: string } = {}, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transaction>>("sandboxPayCharge", { params: { payment_id: paymentId }, body: r.date ? r : undefined, signal: o?.signal });
  }
  /** Sandbox: expires a pending charge. Idempotent. */
  sandboxExpireCharge(paymentId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transaction>>("sandboxExpireCharge", { params: { payment_id: paymentId }, signal: o?.signal });
  }
  /** Sandbox: fails one debit of a pending cycle charge. */
  sandboxFailCharge(paymentId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transaction>>("sandboxFailCharge", { params: { payment_id: paymentId }, signal: o?.signal });
  }
  /** Sandbox: the payer authorizes a recurrence. */
  sandboxApproveRecurrence(recurrenceId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Recurrence>>("sandboxApproveRecurrence", { params: { recurrence_id: recurrenceId }, signal: o?.signal });
  }
  /** Sandbox: the payer refuses a recurrence. */
  sandboxRejectRecurrence(recurrenceId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Recurrence>>("sandboxRejectRecurrence", { params: { recurrence_id: recurrenceId }, signal: o?.signal });
  }
  /** Sandbox: the payer cancels a recurrence. */
  sandboxCancelRecurrenceByPayer(recurrenceId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Recurrence>>("sandboxCancelRecurrenceByPayer", { params: { recurrence_id: recurrenceId }, signal: o?.signal });
  }
  /** Sandbox: creates the next cycle's charge of an approved recurrence now. */
  sandboxNextCycle(recurrenceId: string, o?: T.CallOptions) {
    return this.call<T.SandboxCycle>("sandboxNextCycle", { params: { recurrence_id: recurrenceId }, signal: o?.signal });
  }
  /** Sandbox: the payer's bank contests a paid charge (amount absent: what is left; reason absent: FRAUD). */
  sandboxDisputeCharge(paymentId: string, r: { amount?: AmountInput; reason?: T.DisputeReason } = {}, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Dispute>>("sandboxDisputeCharge", { params: { payment_id: paymentId }, body: r, signal: o?.signal });
  }
  /** Sandbox: the PSP returns a paid charge under MED with no dispute before it. */
  sandboxMedReturn(paymentId: string, r: { amount?: AmountInput; natureza?: string } = {}, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Dispute>>("sandboxMedReturn", { params: { payment_id: paymentId }, body: r, signal: o?.signal });
  }
  /** Sandbox: decides an OPEN dispute as the PSP would. */
  sandboxResolveDispute(disputeId: string, r: { outcome: "released" | "returned"; amount?: AmountInput }, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Dispute>>("sandboxResolveDispute", { params: { dispute_id: disputeId }, body: r, signal: o?.signal });
  }
  /** Sandbox: starts a scheduled payout now, as if its day had begun (reserved and sent, or failed for lack of balance). Not repeated after a network error. */
  sandboxRunSchedule(transactionId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Transaction>>("sandboxRunSchedule", { params: { transaction_id: transactionId }, signal: o?.signal });
  }
  /** Sandbox: this client's clock. */
  sandboxGetClock(o?: T.CallOptions) { return this.call<T.SandboxClock>("sandboxGetClock", { signal: o?.signal }); }
  /** Sandbox: moves this client's clock forward by a Go duration ("36h"). Not repeated after a network error. */
  sandboxAdvanceClock(advance: string, o?: T.CallOptions) {
    return this.call<T.SandboxClock>("sandboxAdvanceClock", { body: { advance }, signal: o?.signal });
  }

  /** The webhook events about an id (payment_id, transaction_id, refund_id or recurrence_id), with every attempt. */
  listDeliveries(paymentId: string, o?: T.CallOptions) {
    return this.call<T.Envelope<T.Delivery[]>>("listDeliveries", { query: { payment_id: paymentId }, signal: o?.signal });
  }
  /** Queues one more delivery of an event (same webhook-id); not repeated after a network error. */
  retryDelivery(eventId: string, o?: T.CallOptions) {
    return this.call<T.Accepted>("retryDelivery", { params: { event_id: eventId }, signal: o?.signal });
  }
  /** Sends a signed webhook.test event to url and answers the attempt. */
  testWebhook(url: string, o?: T.CallOptions) {
    return this.call<T.WebhookTestResult>("testWebhook", { body: { url }, signal: o?.signal });
  }
  /** The payer's HTML page of a charge (no credentials needed). */
  async getPayPage(paymentId: string, o?: T.CallOptions): Promise<string> {
    return (await this.call<{ text: string }>("getPayPage", { params: { payment_id: paymentId }, text: true, accept: "text/html", signal: o?.signal })).text;
  }
  /** The status of a charge, as the payer's page polls it. */
  getPayStatus(paymentId: string, o?: T.CallOptions) {
    return this.call<{ status: T.TransactionStatus; [k: string]: unknown }>("getPayStatus", { params: { payment_id: paymentId }, signal: o?.signal });
  }

  /**
   * Iterates over every row of a list operation, following next_cursor
   * from page to page:
   *
   *     for await (const tx of pixgate.paginate(pixgate.listTransactions, { type: "cashout" })) { … }
   */
  async *paginate<F extends (q: never, o?: T.CallOptions) => Promise<T.Page<unknown>>>(
    list: F,
    query?: Parameters<F>[0],
    o?: T.CallOptions,
  ): AsyncGenerator<PageRow<F>, void, undefined> {
    const q = (query ?? {}) as T.PageQuery;
    let cursor = q.cursor;
    for (;;) {
      const page = (await (list as unknown as (q: T.PageQuery, o?: T.CallOptions) => Promise<T.Page<PageRow<F>>>).call(this, { ...q, cursor }, o));
      yield* page.data;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  // ---- the machinery ----

  /**
   * call runs one operation with its retries. Any operation can be called
   * this way, including one this version has no method for yet.
   */
  async call<R>(operationId: OperationId, c: Call = {}): Promise<T.WithResponse<R>> {
    const [method, template, declared] = OPERATIONS[operationId] as readonly [string, string, Policy];
    const policy = declared === "external_id" ? (hasExternalId(c.body) ? "create" : "unsafe") : declared;
    const path = template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      const v = c.params?.[name];
      if (!v) throw new TypeError(`pixgate: ${operationId} needs ${name}`);
      return encodeURIComponent(v);
    });
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(c.query ?? {})) {
      if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, String(v));
    }
    const payload = c.body === undefined ? undefined : encodeJSON(c.body);
    const op = `${method} ${template}`;
    let failures = 0;
    for (let attempt = 1; ; attempt++) {
      let retry: boolean;
      let err: unknown;
      let wait: number;
      try {
        return await this.#attempt<R>(op, method, url, payload, c, attempt);
      } catch (e) {
        err = e;
        retry = this.#retryable(e, policy);
        if (!retry || attempt > this.#maxRetries || c.signal?.aborted) {
          if (retry && c.idempotencyKey && !(e instanceof RetryError)) {
            throw new RetryError(op, c.idempotencyKey, attempt, e);
          }
          throw e;
        }
        if (e instanceof ApiError && e.status === 429) {
          wait = e.retryAfterSeconds * 1000;
        } else {
          wait = this.#backoff(failures++);
        }
      }
      try {
        await this.#sleep(wait, c.signal);
      } catch (abort) {
        if (c.idempotencyKey) throw new RetryError(op, c.idempotencyKey, attempt, err);
        throw abort;
      }
    }
  }

  #retryable(e: unknown, p: Policy): boolean {
    if (e instanceof ApiError) {
      return e.status === 429 || (e.status >= 500 && p !== "unsafe") || (e.status === 409 && p === "create");
    }
    return e instanceof ConnectionError && p !== "unsafe";
  }

  #backoff(n: number): number {
    const d = Math.min(this.#backoffBase * 2 ** n, this.#backoffMax);
    return d / 2 + Math.random() * (d / 2);
  }

  async #attempt<R>(op: string, method: string, url: URL, payload: string | undefined, c: Call, attempt: number): Promise<T.WithResponse<R>> {
    if (url.origin !== this.#origin) throw new PixgateError("pixgate: refusing to send credentials to another origin");
    const headers: Record<string, string> = {
      stpi: this.clientId,
      stps: secrets.get(this)!,
      Accept: c.accept ?? "application/json",
      "User-Agent": this.#userAgent,
    };
    if (payload !== undefined) headers["Content-Type"] = "application/json";
    if (c.idempotencyKey) headers["Idempotency-Key"] = c.idempotencyKey;

    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new ConnectionError(`pixgate: ${op}: no answer within ${this.#timeout} ms`)), this.#timeout);
    const onAbort = () => ctl.abort(c.signal!.reason);
    c.signal?.addEventListener("abort", onAbort, { once: true });
    let res: Response;
    let text: string;
    try {
      // redirect "manual": a 3xx comes back as it is and is never followed,
      // so the secret cannot travel to wherever Location points.
      res = await this.#fetch(url, { method, headers, body: payload, redirect: "manual", signal: ctl.signal });
      text = await res.text();
    } catch (e) {
      if (c.signal?.aborted) throw c.signal.reason;
      if (e instanceof ConnectionError) throw e;
      const reason = ctl.signal.aborted ? ctl.signal.reason : e;
      if (reason instanceof ConnectionError) throw reason;
      throw new ConnectionError(`pixgate: ${op}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    } finally {
      clearTimeout(timer);
      c.signal?.removeEventListener("abort", onAbort);
    }
    const meta = metaOf(res, attempt, c.idempotencyKey);
    if (res.status >= 300 && res.status < 400) throw new RedirectError(op, res.status, res.headers.get("location"));
    if (res.status >= 400 || res.type === "opaqueredirect") throw errorOf(res.status, text, meta);
    let body: object;
    if (c.text) {
      body = { text };
    } else {
      try {
        body = (text === "" ? {} : decodeJSON(text)) as object;
      } catch (e) {
        throw new PixgateError(`pixgate: ${op}: the answer is not the JSON expected: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    Object.defineProperty(body, "lastResponse", { value: meta, enumerable: false });
    return body as T.WithResponse<R>;
  }
}

function hasExternalId(body: unknown): boolean {
  const v = (body as { external_id?: unknown } | undefined)?.external_id;
  return typeof v === "string" && v !== "";
}

const SECRET_KEYS = ["client_secret", "webhook_secret"];

/**
 * hideSecrets makes console.log and util.inspect of an answer's data show
 * "[redacted]" for its secrets, so that logging a new account never logs its
 * credentials; reading the field, or JSON.stringify, still gives them.
 */
function hideSecrets(data: object): void {
  Object.defineProperty(data, Symbol.for("nodejs.util.inspect.custom"), {
    enumerable: false,
    value(_depth: number, opts: object, inspect: (v: unknown, o: object) => string) {
      const shown: Record<string, unknown> = { ...data };
      for (const k of SECRET_KEYS) if (typeof shown[k] === "string") shown[k] = "[redacted]";
      return inspect(shown, opts);
    },
  });
}

function metaOf(res: Response, attempts: number, idempotencyKey: string | undefined): ResponseMeta {
  const h = res.headers;
  const int = (name: string) => Number.parseInt(h.get(name) ?? "", 10) || 0;
  return {
    status: res.status,
    requestId: h.get("x-request-id") ?? "",
    rateLimit: { limit: int("x-ratelimit-limit"), remaining: int("x-ratelimit-remaining"), resetSeconds: int("x-ratelimit-reset") },
    idempotentReplayed: h.get("idempotent-replayed") === "true",
    idempotencyKey,
    attempts,
    headers: h,
  };
}

function errorOf(status: number, text: string, meta: ResponseMeta): ApiError {
  let message = "";
  let error = "";
  let details: ErrorDetail[] = [];
  let retryAfter = 0;
  try {
    const b = JSON.parse(text) as { message?: unknown; error?: unknown; details?: unknown; retryAfter?: unknown };
    if (typeof b.message === "string") message = b.message;
    if (typeof b.error === "string") error = b.error;
    if (Array.isArray(b.details)) {
      details = b.details.filter((d): d is ErrorDetail => typeof d?.field === "string" && typeof d?.issue === "string");
    }
    if (typeof b.retryAfter === "number" && b.retryAfter > 0) retryAfter = b.retryAfter;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  const ra = meta.headers.get("retry-after");
  if (ra) {
    if (/^\d+$/.test(ra)) retryAfter = Number(ra);
    else if (!Number.isNaN(Date.parse(ra))) retryAfter = Math.max(Math.ceil((Date.parse(ra) - Date.now()) / 1000), 0);
  }
  return errorFor(status, message || `HTTP ${status}`, error, details, retryAfter, meta);
}
