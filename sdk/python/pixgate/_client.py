"""The pixgate client: one method per operation of the API (the OpenAPI
operationId in snake_case), with exact money, safe retries and typed errors."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import secrets
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Union

from . import _json
from ._errors import (
    APIConnectionError,
    ApiError,
    ErrorDetail,
    PixgateError,
    RateLimit,
    RedirectError,
    ResponseMeta,
    RetryError,
    error_for,
)
from ._operations import BY_EXTERNAL_ID, CREATE, OPERATIONS, UNSAFE
from .types import (
    AccountRequest,
    ChargeRequest,
    PayoutBatchRequest,
    PayoutRequest,
    RecurrenceRequest,
    RefundRequest,
    TransferRequest,
)

__all__ = ["Pixgate", "Result", "new_idempotency_key"]

Instant = Union[str, datetime]


def new_idempotency_key() -> str:
    """A fresh random Idempotency-Key (32 hex digits), the kind the SDK generates."""
    return secrets.token_hex(16)


class Result(dict):  # type: ignore[type-arg]
    """An answer's JSON body (a dict, money as Decimal) with the answer's metadata in .response."""

    response: ResponseMeta

    def __init__(self, body: Mapping[str, Any], response: ResponseMeta) -> None:
        super().__init__(body)
        self.response = response


_SECRET_KEYS = ("client_secret", "webhook_secret")


class _Secrets(dict):  # type: ignore[type-arg]
    """The data of an answer that carries credentials: a plain dict whose repr (what
    print, logging and tracebacks show) says "[redacted]" for each secret."""

    def __repr__(self) -> str:
        return repr({k: "[redacted]" if k in _SECRET_KEYS and isinstance(v, str) else v for k, v in self.items()})


def _hide_secrets(r: Result) -> Result:
    if isinstance(r.get("data"), dict):
        r["data"] = _Secrets(r["data"])
    return r


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follows a redirect: with the secret in a custom header, following one
    would hand it to whatever host Location names."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


def _iso(v: Optional[Instant]) -> Optional[str]:
    if isinstance(v, datetime):
        if v.tzinfo is None:
            raise ValueError("pixgate: a datetime needs a time zone")
        return v.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return v


class Pixgate:
    """A client of one pixgate server with one client's credentials. Safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        max_retries: int = 3,
        backoff_base: float = 0.25,
        backoff_max: float = 5.0,
        timeout: float = 30.0,
        user_agent: str = "pixgate-python-sdk/0.1",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """base_url is e.g. "https://pixgate.example.com"; client_id and client_secret
        are sent as headers stpi and stps. The secret is never logged, never shown by
        repr, and never sent anywhere but base_url's origin."""
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"pixgate: base URL {base_url!r} is not an absolute http(s) URL")
        if not client_id or not client_secret:
            raise ValueError("pixgate: client_id and client_secret are required")
        self.base_url = f"{u.scheme}://{u.netloc}{u.path.rstrip('/')}"
        self.client_id = client_id
        self.__secret = client_secret
        self._max_retries = max(max_retries, 0)
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._timeout = timeout
        self._user_agent = user_agent
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __repr__(self) -> str:
        return f"Pixgate(base_url={self.base_url!r}, client_id={self.client_id!r})"

    # ---- operations (one method per operationId) ----

    def get_health(self) -> Result:
        """GET /healthz."""
        return self.call("getHealth")

    def get_readiness(self) -> Result:
        """GET /readyz: a ServerError (503) while the database is unreachable."""
        return self.call("getReadiness")

    def get_openapi_document(self) -> str:
        """GET /openapi.yaml, as text."""
        return self.call("getOpenAPIDocument", text=True, accept="application/yaml")["text"]

    def create_charge(self, request: ChargeRequest, *, idempotency_key: Optional[str] = None) -> Result:
        """Creates a PIX charge. An unknown outcome raises RetryError carrying the key to repeat it with."""
        return self.call("createCharge", body=request, idempotency_key=idempotency_key or new_idempotency_key())

    def create_payout(self, request: PayoutRequest, *, idempotency_key: Optional[str] = None) -> Result:
        """Sends a PIX payment. Give it an idempotency_key stored before the call, so that
        it can be repeated after a RetryError without paying twice."""
        return self.call("createPayout", body=request, idempotency_key=idempotency_key or new_idempotency_key())

    def cancel_payout(self, transaction_id: str) -> Result:
        """Cancels a payout sent with scheduled_date while its day has not begun (pix.cashout.cancelled
        follows). Never repeated after a network error: a repeat of a cancel that worked answers 422,
        hiding that it worked; read the payout with get_transaction instead."""
        return self.call("cancelPayout", params={"transaction_id": transaction_id})

    def create_payout_batch(self, request: PayoutBatchRequest) -> Result:
        """Sends 1 to 1,000 payouts in one request; each item is accepted or rejected on its own. The
        server deduplicates the batch on its external_id (required), so an unknown outcome is retried
        with the same body and answers the first result (response.idempotent_replayed)."""
        return self.call("createPayoutBatch", body=request)

    def get_payout_batch(self, batch_id: str) -> Result:
        """Reads a batch, each item as its payout now reads, with counts by status."""
        return self.call("getPayoutBatch", params={"batch_id": batch_id})

    def create_refund(self, request: RefundRequest, *, idempotency_key: Optional[str] = None) -> Result:
        """Refunds all (no amount) or part of a paid charge."""
        return self.call("createRefund", body=request, idempotency_key=idempotency_key or new_idempotency_key())

    def get_refund(self, refund_id: str) -> Result:
        """Reads one refund."""
        return self.call("getRefund", params={"refund_id": refund_id})

    def list_refunds(self, *, payment_id: Optional[str] = None, status: Optional[str] = None,
                     limit: Optional[int] = None, cursor: Optional[str] = None) -> Result:
        """One page of refunds, newest first (see paginate)."""
        return self.call("listRefunds", query={"payment_id": payment_id, "status": status, "limit": limit, "cursor": cursor})

    def cancel_charge(self, payment_id: str) -> Result:
        """Cancels a PENDING charge; not repeated after a network error (a repeat answers 422 for a cancel that worked)."""
        return self.call("cancelCharge", params={"payment_id": payment_id})

    def create_recurrence(self, request: RecurrenceRequest, *, idempotency_key: Optional[str] = None) -> Result:
        """Creates a recurrence (Pix Automático)."""
        return self.call("createRecurrence", body=request, idempotency_key=idempotency_key or new_idempotency_key())

    def list_recurrences(self, *, status: Optional[str] = None, limit: Optional[int] = None,
                         cursor: Optional[str] = None) -> Result:
        """One page of recurrences."""
        return self.call("listRecurrences", query={"status": status, "limit": limit, "cursor": cursor})

    def get_recurrence(self, recurrence_id: str) -> Result:
        """Reads a recurrence with its charges."""
        return self.call("getRecurrence", params={"recurrence_id": recurrence_id})

    def cancel_recurrence(self, recurrence_id: str) -> Result:
        """Cancels a recurrence (idempotent)."""
        return self.call("cancelRecurrence", params={"recurrence_id": recurrence_id})

    def list_disputes(self, *, status: Optional[str] = None, payment_id: Optional[str] = None,
                      limit: Optional[int] = None, cursor: Optional[str] = None) -> Result:
        """One page of MED disputes."""
        return self.call("listDisputes", query={"status": status, "payment_id": payment_id, "limit": limit, "cursor": cursor})

    def get_dispute(self, dispute_id: str) -> Result:
        """Reads one dispute."""
        return self.call("getDispute", params={"dispute_id": dispute_id})

    def defend_dispute(self, dispute_id: str, *, accept: bool, justification: str) -> Result:
        """Answers an OPEN dispute; never repeated after a network error (a repeat is a second defense)."""
        return self.call("defendDispute", params={"dispute_id": dispute_id},
                         body={"accept": accept, "justification": justification})

    def get_balance(self) -> Result:
        """The wallet balance, in integer centavos."""
        return self.call("getBalance")

    def get_transaction(self, *, payment_id: Optional[str] = None, external_id: Optional[str] = None) -> Result:
        """Looks one transaction up by payment_id, external_id or both."""
        if not payment_id and not external_id:
            raise ValueError("pixgate: get_transaction needs a payment_id, an external_id or both")
        return self.call("getTransaction", body={"payment_id": payment_id, "external_id": external_id})

    def list_transactions(self, *, limit: Optional[int] = None, cursor: Optional[str] = None,
                          status: Optional[str] = None, type: Optional[str] = None,
                          from_: Optional[Instant] = None, to: Optional[Instant] = None) -> Result:
        """One page of the history, newest first (see paginate)."""
        return self.call("listTransactions", query={"limit": limit, "cursor": cursor, "status": status, "type": type,
                                                    "from": _iso(from_), "to": _iso(to)})

    def get_statement(self, *, from_: Instant, to: Instant) -> Result:
        """The statement of [from_, to) as JSON."""
        return self.call("getStatement", query={"from": _iso(from_), "to": _iso(to)})

    def get_statement_csv(self, *, from_: Instant, to: Instant) -> str:
        """The statement of [from_, to) as CSV text (the same operation, format=csv)."""
        return self.call("getStatement", query={"from": _iso(from_), "to": _iso(to), "format": "csv"},
                         text=True, accept="text/csv")["text"]

    def create_transfer(self, request: TransferRequest, *, idempotency_key: Optional[str] = None) -> Result:
        """Moves money to one of your sub-accounts or to your parent, at once and in the ledger
        only. Keyed like a payout: give it an idempotency_key (or an external_id) stored before
        the call, so that a RetryError can be repeated without moving the money twice."""
        return self.call("createTransfer", body=request, idempotency_key=idempotency_key or new_idempotency_key())

    def get_account_me(self) -> Result:
        """Your own account: its account_id (what transfers name) and, for a sub-account, its parent's."""
        return self.call("getAccountMe")

    def create_account(self, request: AccountRequest) -> Result:
        """Creates a sub-account; its secrets are in this answer only (None in a replay) and
        its repr hides them. Retried after an unknown outcome only with an external_id, on
        which the server deduplicates; without one a repeat would create a second account."""
        return _hide_secrets(self.call("createAccount", body=request))

    def list_accounts(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Result:
        """One page of your sub-accounts, newest first (see paginate); never a secret."""
        return self.call("listAccounts", query={"limit": limit, "cursor": cursor})

    def get_account(self, account_id: str) -> Result:
        """One of your sub-accounts, with available_cents; another family's, a sibling's or an
        unknown one is a NotFoundError."""
        return self.call("getAccount", params={"account_id": account_id})

    def rotate_account_secret(self, account_id: str) -> Result:
        """Gives a sub-account a new client secret (the old one stops at once); never repeated
        after a network error, since a repeat rotates again."""
        return _hide_secrets(self.call("rotateAccountSecret", params={"account_id": account_id}))

    def sandbox_pay_charge(self, payment_id: str, *, date: Optional[str] = None) -> Result:
        """Sandbox: pays a pending charge (optionally on a São Paulo date, YYYY-MM-DD). Idempotent."""
        return self.call("sandboxPayCharge", params={"payment_id": payment_id}, body={"date": date} if date else None)

    def sandbox_expire_charge(self, payment_id: str) -> Result:
        """Sandbox: expires a pending charge. Idempotent."""
        return self.call("sandboxExpireCharge", params={"payment_id": payment_id})

    def sandbox_fail_charge(self, payment_id: str) -> Result:
        """Sandbox: fails one debit of a pending cycle charge."""
        return self.call("sandboxFailCharge", params={"payment_id": payment_id})

    def sandbox_approve_recurrence(self, recurrence_id: str) -> Result:
        """Sandbox: the payer authorizes a recurrence."""
        return self.call("sandboxApproveRecurrence", params={"recurrence_id": recurrence_id})

    def sandbox_reject_recurrence(self, recurrence_id: str) -> Result:
        """Sandbox: the payer refuses a recurrence."""
        return self.call("sandboxRejectRecurrence", params={"recurrence_id": recurrence_id})

    def sandbox_cancel_recurrence_by_payer(self, recurrence_id: str) -> Result:
        """Sandbox: the payer cancels a recurrence."""
        return self.call("sandboxCancelRecurrenceByPayer", params={"recurrence_id": recurrence_id})

    def sandbox_next_cycle(self, recurrence_id: str) -> Result:
        """Sandbox: creates the next cycle's charge of an approved recurrence now."""
        return self.call("sandboxNextCycle", params={"recurrence_id": recurrence_id})

    def sandbox_dispute_charge(self, payment_id: str, *, amount: Optional[Any] = None, reason: Optional[str] = None) -> Result:
        """Sandbox: the payer's bank contests a paid charge (amount None: what is left; reason None: FRAUD)."""
        return self.call("sandboxDisputeCharge", params={"payment_id": payment_id}, body={"amount": amount, "reason": reason})

    def sandbox_med_return(self, payment_id: str, *, amount: Optional[Any] = None, natureza: Optional[str] = None) -> Result:
        """Sandbox: the PSP returns a paid charge under MED with no dispute before it."""
        return self.call("sandboxMedReturn", params={"payment_id": payment_id}, body={"amount": amount, "natureza": natureza})

    def sandbox_resolve_dispute(self, dispute_id: str, *, outcome: str, amount: Optional[Any] = None) -> Result:
        """Sandbox: decides an OPEN dispute as the PSP would ("released" or "returned")."""
        return self.call("sandboxResolveDispute", params={"dispute_id": dispute_id}, body={"outcome": outcome, "amount": amount})

    def sandbox_run_schedule(self, transaction_id: str) -> Result:
        """Sandbox: starts a scheduled payout now, as if its day had begun (reserved and sent, or failed
        for lack of balance). Not repeated after a network error."""
        return self.call("sandboxRunSchedule", params={"transaction_id": transaction_id})

    def sandbox_get_clock(self) -> Result:
        """Sandbox: this client's clock."""
        return self.call("sandboxGetClock")

    def sandbox_advance_clock(self, advance: str) -> Result:
        """Sandbox: moves this client's clock forward by a Go duration ("36h"). Not repeated after a network error."""
        return self.call("sandboxAdvanceClock", body={"advance": advance})

    def list_deliveries(self, payment_id: str) -> Result:
        """The webhook events about an id (payment_id, transaction_id, refund_id or recurrence_id)."""
        return self.call("listDeliveries", query={"payment_id": payment_id})

    def retry_delivery(self, event_id: str) -> Result:
        """Queues one more delivery of an event (same webhook-id); not repeated after a network error."""
        return self.call("retryDelivery", params={"event_id": event_id})

    def test_webhook(self, url: str) -> Result:
        """Sends a signed webhook.test event to url and answers the attempt."""
        return self.call("testWebhook", body={"url": url})

    def get_pay_page(self, payment_id: str) -> str:
        """The payer's HTML page of a charge."""
        return self.call("getPayPage", params={"payment_id": payment_id}, text=True, accept="text/html")["text"]

    def get_pay_status(self, payment_id: str) -> Result:
        """The status of a charge, as the payer's page polls it."""
        return self.call("getPayStatus", params={"payment_id": payment_id})

    def paginate(self, list_method: Callable[..., Result], **query: Any) -> Iterator[Dict[str, Any]]:
        """Yields every row of a list operation, following next_cursor from page to page:

            for tx in pixgate.paginate(pixgate.list_transactions, type="cashout"):
                ...
        """
        cursor = query.pop("cursor", None)
        while True:
            page = list_method(cursor=cursor, **query)
            yield from page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    # ---- the machinery ----

    def call(
        self,
        operation_id: str,
        *,
        params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        text: bool = False,
        accept: str = "application/json",
    ) -> Result:
        """Runs one operation with its retries. Any operation of OPERATIONS can be
        called this way, including one this version has no method for yet."""
        method, template, policy = OPERATIONS[operation_id]
        if policy == BY_EXTERNAL_ID:
            policy = CREATE if isinstance(body, Mapping) and body.get("external_id") else UNSAFE
        path = template
        for name in [p[1:-1] for p in template.split("/") if p.startswith("{")]:
            v = (params or {}).get(name)
            if not v:
                raise ValueError(f"pixgate: {operation_id} needs {name}")
            path = path.replace("{" + name + "}", urllib.parse.quote(v, safe=""))
        url = self.base_url + path
        q = {k: str(v) for k, v in (query or {}).items() if v is not None and v != ""}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        payload = None if body is None else _json.encode(body).encode("utf-8")
        op = f"{method} {template}"
        failures = 0
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._attempt(op, method, url, payload, idempotency_key, attempt, text, accept)
            except (ApiError, APIConnectionError) as e:
                retry = self._retryable(e, policy)
                if not retry or attempt > self._max_retries:
                    if retry and idempotency_key:
                        raise RetryError(op, idempotency_key, attempt, e) from e
                    raise
                if isinstance(e, ApiError) and e.status == 429:
                    wait = float(e.retry_after)
                else:
                    d = min(self._backoff_base * 2 ** failures, self._backoff_max)
                    wait = d / 2 + random.random() * d / 2
                    failures += 1
            self._sleep(wait)

    @staticmethod
    def _retryable(e: PixgateError, policy: str) -> bool:
        if isinstance(e, ApiError):
            return e.status == 429 or (e.status >= 500 and policy != UNSAFE) or (e.status == 409 and policy == CREATE)
        return policy != UNSAFE

    def _attempt(self, op: str, method: str, url: str, payload: Optional[bytes], key: Optional[str],
                 attempt: int, text: bool, accept: str) -> Result:
        headers = {"stpi": self.client_id, "stps": self.__secret, "Accept": accept, "User-Agent": self._user_agent}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if key:
            headers["Idempotency-Key"] = key
        req = urllib.request.Request(url, data=payload, method=method, headers=headers)
        try:
            try:
                res = self._opener.open(req, timeout=self._timeout)
            except urllib.error.HTTPError as he:
                res = he  # an answer all the same: 3xx (not followed), 4xx, 5xx
            with res:
                status = res.status if hasattr(res, "status") and res.status else res.code
                raw = res.read()
                hdrs = {k.lower(): v for k, v in res.headers.items()}
        except (urllib.error.URLError, OSError, socket.timeout, http.client.HTTPException) as e:
            reason = getattr(e, "reason", e)
            raise APIConnectionError(f"pixgate: {op}: {reason}") from e
        meta = ResponseMeta(
            status=status,
            request_id=hdrs.get("x-request-id", ""),
            rate_limit=RateLimit(_int(hdrs.get("x-ratelimit-limit")), _int(hdrs.get("x-ratelimit-remaining")),
                                 _int(hdrs.get("x-ratelimit-reset"))),
            idempotent_replayed=hdrs.get("idempotent-replayed") == "true",
            idempotency_key=key,
            attempts=attempt,
            headers=hdrs,
        )
        if 300 <= status < 400:
            raise RedirectError(op, status, hdrs.get("location"))
        body_text = raw.decode("utf-8", errors="replace")
        if status >= 400:
            raise _error_of(status, body_text, meta)
        if text:
            return Result({"text": body_text}, meta)
        try:
            body = _json.decode(body_text) if body_text else {}
        except ValueError as e:
            raise PixgateError(f"pixgate: {op}: the answer is not the JSON expected: {e}") from e
        return Result(body, meta)


def _int(s: Optional[str]) -> int:
    try:
        return int(s or "0")
    except ValueError:
        return 0


def _error_of(status: int, text: str, meta: ResponseMeta) -> ApiError:
    message = error = ""
    details = []
    retry_after = 0
    try:
        b = json.loads(text)
        if isinstance(b, dict):
            message = b.get("message") if isinstance(b.get("message"), str) else ""
            error = b.get("error") if isinstance(b.get("error"), str) else ""
            for d in b.get("details") or []:
                if isinstance(d, dict) and isinstance(d.get("field"), str) and isinstance(d.get("issue"), str):
                    details.append(ErrorDetail(d["field"], d["issue"]))
            if isinstance(b.get("retryAfter"), int) and b["retryAfter"] > 0:
                retry_after = b["retryAfter"]
    except ValueError:
        pass  # not JSON (a proxy's page): the status says enough
    ra = meta.headers.get("retry-after", "")
    if ra.isdigit():
        retry_after = int(ra)
    elif ra:
        try:
            when = email.utils.parsedate_to_datetime(ra)
            retry_after = max(int(when.timestamp() - time.time() + 0.999), 0)
        except (TypeError, ValueError):
            pass
    return error_for(status, message or f"HTTP {status}", error, details, retry_after, meta)
