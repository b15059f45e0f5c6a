"""Request types of the pixgate API (TypedDicts: plain dicts with checked keys).

Money is an AmountInput: reais text ("10.50") or a Decimal, never a float.
Answers are dicts as internal/httpapi/openapi.yaml documents them, every
money field a Decimal with two places.
"""

from __future__ import annotations

from decimal import Decimal
from typing import List, Literal, Optional, TypedDict

from ._money import AmountInput

PixKeyType = Literal["CPF", "CNPJ", "EMAIL", "PHONE", "EVP"]


class Address(TypedDict):
    street: str
    number: str
    neighborhood: str
    city: str
    state: str  # UF, upper case
    zipCode: str  # CEP, 8 digits


class Payer(TypedDict):
    name: str
    document: str  # CPF or CNPJ, digits only
    phoneNumber: str
    email: str
    address: Address


class Product(TypedDict):
    name: str
    quantity: str  # digits, greater than 0: "1"
    price: AmountInput


class DueFine(TypedDict, total=False):
    percent: AmountInput
    amount: AmountInput


class DueInterest(TypedDict):
    percent_per_month: AmountInput


class _DueDiscountBase(TypedDict):
    until: str


class DueDiscount(_DueDiscountBase, total=False):
    percent: AmountInput
    amount: AmountInput


class _DueBase(TypedDict):
    date: str  # YYYY-MM-DD, São Paulo


class Due(_DueBase, total=False):
    days_after: int
    fine: DueFine
    interest: DueInterest
    discounts: List[DueDiscount]


class _SplitBase(TypedDict):
    account_id: str  # one of your sub-accounts, once per charge


class Split(_SplitBase, total=False):
    """One receiver of a split charge (docs/marketplace.md): its share of what the charge brings less
    your cash-in fee, either percent or amount (a charge's splits all one or all the other, 1 to 10)."""

    percent: AmountInput  # of net, at most two places, above 0 and at most 100
    amount: AmountInput  # reais; all together at most the charge's amount


class SplitCredit(TypedDict):
    """A receiver of a split charge in a lookup or pix.cashin.paid: amount is a Decimal, None until
    the charge is paid (0 when its share was capped to nothing)."""

    account_id: str
    amount: Optional[Decimal]


class _ChargeRequestBase(TypedDict):
    amount: AmountInput
    external_id: str
    payer: Payer
    payerQuestion: str
    postbackUrl: str
    products: List[Product]


class ChargeRequest(_ChargeRequestBase, total=False):
    """POST /api/v1/gateway/request-qrcode."""

    due: Due
    #: Shares what the charge brings among your sub-accounts once it is paid.
    splits: List[Split]


class _CreditPartyBase(TypedDict):
    keyType: PixKeyType
    key: str


class CreditParty(_CreditPartyBase, total=False):
    name: str


class _PayoutRequestBase(TypedDict):
    amount: AmountInput
    description: str
    creditParty: CreditParty
    callbackUrl: str


class PayoutRequest(_PayoutRequestBase, total=False):
    """POST /api/v1/gateway/pix-payment."""

    external_id: str
    #: São Paulo date YYYY-MM-DD, tomorrow to 365 days ahead: the payout waits (SCHEDULED,
    #: nothing reserved) and is sent at the start of that day.
    scheduled_date: str


class _PayoutBatchItemBase(TypedDict):
    amount: AmountInput
    description: str
    creditParty: CreditParty
    external_id: str  # required in a batch


class PayoutBatchItem(_PayoutBatchItemBase, total=False):
    """One payout of a batch: a PayoutRequest whose external_id is required."""

    callbackUrl: str  # absent: the batch's
    scheduled_date: str


class PayoutBatchRequest(TypedDict):
    """POST /api/v1/gateway/pix-payments/batch: 1 to 1,000 items; external_id makes the batch
    idempotent (in a namespace of batches) and callbackUrl receives pix.batch.completed."""

    external_id: str
    callbackUrl: str
    items: List[PayoutBatchItem]


class RefundRequest(TypedDict, total=False):
    """POST /api/v1/gateway/refund: payment_id, external_id or both; no amount refunds what is left."""

    payment_id: str
    external_id: str
    amount: AmountInput
    reason: str


class RecurrencePayer(TypedDict):
    name: str
    document: str


class _RecurrenceRequestBase(TypedDict):
    external_id: str
    payer: RecurrencePayer
    contract: str
    description: str
    frequency: Literal["WEEKLY", "MONTHLY", "QUARTERLY", "SEMIANNUAL", "ANNUAL"]
    start_date: str
    amount: AmountInput
    retry: Literal["NONE", "THREE_IN_SEVEN_DAYS"]
    postbackUrl: str


class RecurrenceRequest(_RecurrenceRequestBase, total=False):
    """POST /api/v1/gateway/recurrences (Pix Automático)."""

    end_date: Optional[str]
    first_payment: Optional[AmountInput]
    #: Every cycle charge (and the first payment) is split so when paid.
    splits: List[Split]


class _AccountRequestBase(TypedDict):
    name: str  # 1–100 characters
    document: str  # CPF (11 digits) or CNPJ (14 digits)


class AccountRequest(_AccountRequestBase, total=False):
    """POST /api/v1/accounts: with external_id a repeat answers the first sub-account (and the SDK retries)."""

    external_id: str
    postbackUrl: str


class _TransferRequestBase(TypedDict):
    to_account_id: str  # one of your sub-accounts, or your parent
    amount: AmountInput


class TransferRequest(_TransferRequestBase, total=False):
    """POST /api/v1/wallet/transfers."""

    description: str
    external_id: str  # unique per client across charges, payouts and transfers
