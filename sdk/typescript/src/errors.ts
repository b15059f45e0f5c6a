/** Errors of the pixgate SDK: one class per kind of answer, so nobody parses strings. */

/** One field-level issue of a validation error (`details`). */
export interface ErrorDetail {
  field: string;
  issue: string;
}

/** The rate-limit state the server reported with an answer. */
export interface RateLimit {
  /** Accepted requests allowed per rolling 60 s. */
  limit: number;
  /** Requests still allowed now. */
  remaining: number;
  /** Seconds until the oldest counted request leaves the window. */
  resetSeconds: number;
}

/** What every answer carries besides its body. */
export interface ResponseMeta {
  status: number;
  /** X-Request-Id, to quote to support. */
  requestId: string;
  rateLimit: RateLimit;
  /** The answer replays an earlier request's (Idempotent-Replayed: true). */
  idempotentReplayed: boolean;
  /** The Idempotency-Key sent, for creations. */
  idempotencyKey: string | undefined;
  /** HTTP attempts made, retries included. */
  attempts: number;
  headers: Headers;
}

/** Base class of every SDK error. */
export class PixgateError extends Error {
  override name = "PixgateError";
}

/**
 * An error answer of the API (status 400 or more), with the body's
 * `message`, `error` and `details`. Subclasses name the common statuses.
 */
export class ApiError extends PixgateError {
  override name = "ApiError";
  /** The HTTP status. */
  readonly status: number;
  /** The body's message: "Insufficient balance", "Transação não encontrada.", … */
  readonly apiMessage: string;
  /** The body's error, the HTTP status text; wallet endpoints leave it empty. */
  readonly error: string;
  /** Field-level issues of a validation error. */
  readonly details: ErrorDetail[];
  /** Seconds the server asked to wait (429), from Retry-After. */
  readonly retryAfterSeconds: number;
  /** Headers of the answer: request id, rate limit, attempts. */
  readonly response: ResponseMeta;

  constructor(status: number, apiMessage: string, error: string, details: ErrorDetail[], retryAfterSeconds: number, response: ResponseMeta) {
    let text = `pixgate: ${status}${error ? " " + error : ""}: ${apiMessage}`;
    for (const d of details) text += `; ${d.field}: ${d.issue}`;
    if (retryAfterSeconds > 0) text += ` (retry after ${retryAfterSeconds}s)`;
    super(text);
    this.status = status;
    this.apiMessage = apiMessage;
    this.error = error;
    this.details = details;
    this.retryAfterSeconds = retryAfterSeconds;
    this.response = response;
  }
}

/** 400: invalid parameters; `details` name the fields. */
export class BadRequestError extends ApiError {
  override name = "BadRequestError";
}
/** 401: missing or invalid credentials. */
export class AuthenticationError extends ApiError {
  override name = "AuthenticationError";
}
/** 404: no such resource (or another client's). */
export class NotFoundError extends ApiError {
  override name = "NotFoundError";
}
/** 409: a request with the same external_id or Idempotency-Key is still in progress. */
export class ConflictError extends ApiError {
  override name = "ConflictError";
}
/** 422: refused by a business rule (insufficient balance, a key reused with another body, …). */
export class UnprocessableEntityError extends ApiError {
  override name = "UnprocessableEntityError";
  /** The payout or refund's "Insufficient balance". */
  get isInsufficientBalance(): boolean {
    return this.apiMessage === "Insufficient balance";
  }
  /** An external_id or Idempotency-Key already used with a different body. */
  get isIdempotencyMismatch(): boolean {
    return this.apiMessage.endsWith("already used with different parameters");
  }
}
/** 429: over the rate limit; wait `retryAfterSeconds`. */
export class RateLimitError extends ApiError {
  override name = "RateLimitError";
}
/** 5xx: the server or its PSP failed. */
export class ServerError extends ApiError {
  override name = "ServerError";
}

/** errorFor builds the ApiError subclass of status. */
export function errorFor(status: number, message: string, error: string, details: ErrorDetail[], retryAfter: number, meta: ResponseMeta): ApiError {
  const C =
    status === 400 ? BadRequestError
    : status === 401 ? AuthenticationError
    : status === 404 ? NotFoundError
    : status === 409 ? ConflictError
    : status === 422 ? UnprocessableEntityError
    : status === 429 ? RateLimitError
    : status >= 500 ? ServerError
    : ApiError;
  return new C(status, message, error, details, retryAfter, meta);
}

/** No answer arrived (connection refused, reset, timeout) or the answer was cut. */
export class ConnectionError extends PixgateError {
  override name = "ConnectionError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A 3xx answer. The SDK never follows a redirect: that would send the
 * client secret, the body and the Idempotency-Key wherever Location points.
 */
export class RedirectError extends PixgateError {
  override name = "RedirectError";
  readonly status: number;
  readonly location: string | null;
  constructor(operation: string, status: number, location: string | null) {
    super(
      `pixgate: ${operation} answered ${status}${location ? ` to ${JSON.stringify(location)}` : ""}; ` +
        "redirects are not followed, so that the credentials are sent nowhere else: check the base URL",
    );
    this.status = status;
    this.location = location;
  }
}

/**
 * A creation (charge, payout, refund, recurrence) whose outcome is unknown:
 * its last attempt failed in a way worth retrying and the retries ran out.
 * Calling again with `idempotencyKey` and the same body is safe (the server
 * replays or creates once); a new key could create twice.
 */
export class RetryError extends PixgateError {
  override name = "RetryError";
  readonly idempotencyKey: string;
  readonly attempts: number;
  /** The last failure: an ApiError, a ConnectionError or an abort. */
  readonly lastError: unknown;
  constructor(operation: string, idempotencyKey: string, attempts: number, lastError: unknown) {
    super(
      `pixgate: ${operation}: outcome unknown after ${attempts} attempt(s); repeat it with Idempotency-Key ${idempotencyKey}: ${
        lastError instanceof Error ? lastError.message : String(lastError)
      }`,
      { cause: lastError },
    );
    this.idempotencyKey = idempotencyKey;
    this.attempts = attempts;
    this.lastError = lastError;
  }
}
