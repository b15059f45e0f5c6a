"""Errors of the pixgate SDK: one class per kind of answer, so nobody parses strings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Mapping, Optional


@dataclass(frozen=True)
class RateLimit:
    """The rate-limit state the server reported with an answer."""

    limit: int = 0
    remaining: int = 0
    reset_seconds: int = 0


@dataclass(frozen=True)
class ResponseMeta:
    """What every answer carries besides its body."""

    status: int
    request_id: str
    rate_limit: RateLimit
    idempotent_replayed: bool
    idempotency_key: Optional[str]
    attempts: int
    headers: Mapping[str, str] = field(repr=False, default_factory=dict)


@dataclass(frozen=True)
class ErrorDetail:
    """One field-level issue of a validation error."""

    field: str
    issue: str


class PixgateError(Exception):
    """Base class of every SDK error."""


class ApiError(PixgateError):
    """An error answer of the API (status 400 or more) with the body's message, error and details."""

    def __init__(
        self,
        status: int,
        message: str,
        error: str,
        details: List[ErrorDetail],
        retry_after: int,
        response: ResponseMeta,
    ) -> None:
        text = f"pixgate: {status}{' ' + error if error else ''}: {message}"
        for d in details:
            text += f"; {d.field}: {d.issue}"
        if retry_after > 0:
            text += f" (retry after {retry_after}s)"
        super().__init__(text)
        self.status = status
        #: The body's message: "Insufficient balance", "Transação não encontrada.", …
        self.message = message
        #: The body's error, the HTTP status text (empty on wallet endpoints).
        self.error = error
        self.details = details
        #: Seconds the server asked to wait (429), from Retry-After.
        self.retry_after = retry_after
        self.response = response


class BadRequestError(ApiError):
    """400: invalid parameters; details name the fields."""


class AuthenticationError(ApiError):
    """401: missing or invalid credentials."""


class NotFoundError(ApiError):
    """404: no such resource (or another client's)."""


class ConflictError(ApiError):
    """409: a request with the same external_id or Idempotency-Key is still in progress."""


class UnprocessableEntityError(ApiError):
    """422: refused by a business rule."""

    @property
    def is_insufficient_balance(self) -> bool:
        """The payout or refund's "Insufficient balance"."""
        return self.message == "Insufficient balance"

    @property
    def is_idempotency_mismatch(self) -> bool:
        """An external_id or Idempotency-Key already used with a different body."""
        return self.message.endswith("already used with different parameters")


class RateLimitError(ApiError):
    """429: over the rate limit; wait retry_after seconds."""


class ServerError(ApiError):
    """5xx: the server or its PSP failed."""


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def error_for(status: int, message: str, error: str, details: List[ErrorDetail], retry_after: int, meta: ResponseMeta) -> ApiError:
    """The ApiError subclass of status."""
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, message, error, details, retry_after, meta)


class APIConnectionError(PixgateError):
    """No answer arrived (connection refused, reset, timeout) or the answer was cut."""


class RedirectError(PixgateError):
    """A 3xx answer. The SDK never follows a redirect: that would send the client
    secret, the body and the Idempotency-Key wherever Location points."""

    def __init__(self, operation: str, status: int, location: Optional[str]) -> None:
        where = f" to {location!r}" if location else ""
        super().__init__(
            f"pixgate: {operation} answered {status}{where}; redirects are not followed, "
            "so that the credentials are sent nowhere else: check the base URL"
        )
        self.status = status
        self.location = location


class RetryError(PixgateError):
    """A creation whose outcome is unknown: its last attempt failed in a way worth
    retrying and the retries ran out. Calling again with idempotency_key and the
    same body is safe (the server replays or creates once); a new key could
    create twice."""

    def __init__(self, operation: str, idempotency_key: str, attempts: int, last_error: BaseException) -> None:
        super().__init__(
            f"pixgate: {operation}: outcome unknown after {attempts} attempt(s); "
            f"repeat it with Idempotency-Key {idempotency_key}: {last_error}"
        )
        self.idempotency_key = idempotency_key
        self.attempts = attempts
        self.last_error = last_error
