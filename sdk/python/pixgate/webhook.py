"""Receiving pixgate webhooks: verifying their Standard Webhooks signature
(https://www.standardwebhooks.com) and parsing the body into a typed event."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _json
from ._errors import PixgateError

#: Every event name of the API's EventName enum, by family.
TRANSACTION_EVENTS = (
    "pix.cashin.paid",
    "pix.cashin.cancelled",
    "pix.cashout.paid",
    "pix.cashout.failed",
    "pix.cashout.reversed",
    "pix.cashout.cancelled",
    "pix.refund.completed",
    "pix.refund.failed",
)
RECURRENCE_EVENTS = (
    "pix.recurrence.approved",
    "pix.recurrence.rejected",
    "pix.recurrence.expired",
    "pix.recurrence.cancelled",
    "pix.recurrence.charge_failed",
    "pix.recurrence.finished",
)
DISPUTE_EVENTS = ("pix.dispute.opened", "pix.dispute.closed")
BATCH_EVENTS = ("pix.batch.completed",)
SPLIT_EVENTS = ("pix.split.received",)
#: The body of the test_webhook operation's event.
TEST_EVENT = "webhook.test"


class WebhookVerificationError(PixgateError):
    """A webhook that failed verification, or a body that is not a pixgate event."""


@dataclass(frozen=True)
class Event:
    """Fields every event has. id equals webhook-id: deduplicate on it."""

    id: str
    event: str
    occurred_at: Optional[str]
    #: The whole body, parsed (money as Decimal), for fields this version does not know.
    data: Dict[str, Any] = field(repr=False)
    #: The verified body as text.
    raw: str = field(repr=False)


@dataclass(frozen=True)
class TransactionEvent(Event):
    """pix.cashin.*, pix.cashout.* (cancelled: a scheduled payout cancelled before its day), pix.refund.*."""

    status_transaction: str = ""
    value: Decimal = Decimal("0.00")  # without fee; refunds: the refunded amount
    tax: Decimal = Decimal("0.00")
    payment_id: str = ""
    external_id: Optional[str] = None
    transaction_id: Optional[str] = None
    refund_id: Optional[str] = None
    type: str = ""
    paid_amount: Optional[Decimal] = None
    amount_mismatch: bool = False
    recurrence_id: Optional[str] = None
    #: pix.cashin.paid of a split charge only: each receiver ({account_id, amount}) and what it was credited.
    splits: Optional[List[Dict[str, Any]]] = None


@dataclass(frozen=True)
class RecurrenceEvent(Event):
    """pix.recurrence.*."""

    recurrence_id: str = ""
    external_id: str = ""
    status: str = ""
    cancelled_by: Optional[str] = None
    payment_id: Optional[str] = None
    attempts: Optional[int] = None


@dataclass(frozen=True)
class DisputeEvent(Event):
    """pix.dispute.opened and pix.dispute.closed."""

    dispute_id: str = ""
    payment_id: str = ""
    amount: Decimal = Decimal("0.00")
    reason: str = ""
    respond_by: Optional[str] = None
    outcome: Optional[str] = None
    returned_amount: Optional[Decimal] = None


@dataclass(frozen=True)
class BatchEvent(Event):
    """pix.batch.completed: sent once, when no accepted item of a batch is PENDING or SCHEDULED any more."""

    status_transaction: str = ""
    batch_id: str = ""
    external_id: str = ""
    total: int = 0
    accepted: int = 0
    rejected: int = 0
    #: How many items read each status: PENDING, SCHEDULED, PAID, CANCELLED, REVERSED, REJECTED.
    counts: Dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SplitEvent(Event):
    """pix.split.received: sent to a sub-account's own postbackUrl, signed with its own webhook secret,
    when a charge of its parent that splits to it is paid and its share credited."""

    status_transaction: str = ""
    type: str = ""
    payment_id: str = ""  # the receiver's split transaction, in its history
    source_payment_id: str = ""  # the parent's charge that was paid
    value: Decimal = Decimal("0.00")  # the share credited


@dataclass(frozen=True)
class TestEvent(Event):
    """webhook.test, sent by test_webhook."""


@dataclass(frozen=True)
class UnknownEvent(Event):
    """An event name this version does not know (a newer server's): read data."""


WebhookEvent = Union[TransactionEvent, RecurrenceEvent, DisputeEvent, BatchEvent, SplitEvent, TestEvent, UnknownEvent]

_B64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


def _key(secret: str) -> bytes:
    b64 = secret[6:] if secret.startswith("whsec_") else secret
    if not _B64.match(b64):
        raise ValueError("pixgate: the webhook secret is not whsec_ followed by Base64")
    return base64.b64decode(b64)


def _header(headers: Mapping[str, str], name: str) -> str:
    get = getattr(headers, "get", None)
    v = get(name) if get else None  # email.message.Message (http.server) is case-insensitive
    if v is None:
        for k, val in headers.items():
            if k.lower() == name:
                v = val
                break
    return (v or "").strip()


def verify_webhook(
    secret: Union[str, Sequence[str]],
    headers: Mapping[str, str],
    body: Union[bytes, str],
    *,
    tolerance: int = 300,
    now: Optional[float] = None,
) -> None:
    """Checks the webhook-id, webhook-timestamp and webhook-signature headers against
    the raw body. secret is the whsec_… webhook secret (a list during a rotation).
    Raises WebhookVerificationError unless a v1 signature matches and the timestamp is
    within tolerance seconds of now. Pass the body exactly as received."""
    msg_id = _header(headers, "webhook-id")
    ts = _header(headers, "webhook-timestamp")
    sigs = _header(headers, "webhook-signature")
    if not msg_id or not ts or not sigs:
        raise WebhookVerificationError("pixgate: webhook headers missing (webhook-id, webhook-timestamp, webhook-signature)")
    if not ts.isdigit() or len(ts) > 19:
        raise WebhookVerificationError("pixgate: webhook-timestamp is not Unix seconds")
    current = time.time() if now is None else now
    if abs(current - int(ts)) > tolerance:
        raise WebhookVerificationError("pixgate: webhook-timestamp outside the tolerance")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    signed = f"{msg_id}.{ts}.".encode("utf-8") + raw
    secrets = [secret] if isinstance(secret, str) else list(secret)
    expected = [hmac.new(_key(s), signed, hashlib.sha256).digest() for s in secrets]
    for entry in sigs.split():
        version, _, sig = entry.partition(",")
        if version != "v1" or not sig:
            continue
        try:
            got = base64.b64decode(sig, validate=True)
        except (binascii.Error, ValueError):
            continue
        if any(hmac.compare_digest(got, want) for want in expected):
            return
    raise WebhookVerificationError("pixgate: no webhook signature matches")


def parse_event(body: Union[bytes, str]) -> WebhookEvent:
    """Reads a (verified) body into a typed event, money as Decimal."""
    text = body.decode("utf-8") if isinstance(body, (bytes, bytearray)) else body
    try:
        d = _json.decode(text)
    except ValueError as e:
        raise WebhookVerificationError("pixgate: the webhook body is not JSON") from e
    if not isinstance(d, dict) or not isinstance(d.get("id"), str) or not isinstance(d.get("event"), str):
        raise WebhookVerificationError("pixgate: the webhook body is not a pixgate event")
    base = dict(id=d["id"], event=d["event"], occurred_at=d.get("occurred_at"), data=d, raw=text)
    name = d["event"]
    if name in TRANSACTION_EVENTS:
        return TransactionEvent(
            **base, status_transaction=d.get("statusTransaction", ""), value=d.get("value", Decimal("0.00")),
            tax=d.get("tax", Decimal("0.00")), payment_id=d.get("payment_id", ""), external_id=d.get("external_id"),
            transaction_id=d.get("transaction_id"), refund_id=d.get("refund_id"), type=d.get("type", ""),
            paid_amount=d.get("paid_amount"), amount_mismatch=bool(d.get("amount_mismatch")),
            recurrence_id=d.get("recurrence_id"), splits=d.get("splits"),
        )
    if name in RECURRENCE_EVENTS:
        return RecurrenceEvent(
            **base, recurrence_id=d.get("recurrence_id", ""), external_id=d.get("external_id", ""),
            status=d.get("status", ""), cancelled_by=d.get("cancelled_by"), payment_id=d.get("payment_id"),
            attempts=d.get("attempts"),
        )
    if name in DISPUTE_EVENTS:
        return DisputeEvent(
            **base, dispute_id=d.get("dispute_id", ""), payment_id=d.get("payment_id", ""),
            amount=d.get("amount", Decimal("0.00")), reason=d.get("reason", ""), respond_by=d.get("respond_by"),
            outcome=d.get("outcome"), returned_amount=d.get("returned_amount"),
        )
    if name in BATCH_EVENTS:
        return BatchEvent(
            **base, status_transaction=d.get("statusTransaction", ""), batch_id=d.get("batch_id", ""),
            external_id=d.get("external_id", ""), total=d.get("total", 0), accepted=d.get("accepted", 0),
            rejected=d.get("rejected", 0), counts=dict(d.get("counts") or {}),
        )
    if name in SPLIT_EVENTS:
        return SplitEvent(
            **base, status_transaction=d.get("statusTransaction", ""), type=d.get("type", ""),
            payment_id=d.get("payment_id", ""), source_payment_id=d.get("source_payment_id", ""),
            value=d.get("value", Decimal("0.00")),
        )
    if name == TEST_EVENT:
        return TestEvent(**base)
    return UnknownEvent(**base)


def construct_event(
    secret: Union[str, Sequence[str]],
    headers: Mapping[str, str],
    body: Union[bytes, str],
    *,
    tolerance: int = 300,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Verifies a webhook and parses it: the one call a receiver needs."""
    verify_webhook(secret, headers, body, tolerance=tolerance, now=now)
    return parse_event(body)
