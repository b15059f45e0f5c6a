"""The pixgate SDK for Python (3.9+, standard library only).

    from pixgate import Pixgate
    pixgate = Pixgate("http://127.0.0.1:8080", client_id, client_secret)
    charge = pixgate.create_charge({"amount": "25.90", ...})
"""

from ._client import Pixgate, Result, new_idempotency_key
from ._errors import (
    APIConnectionError,
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    ErrorDetail,
    NotFoundError,
    PixgateError,
    RateLimit,
    RateLimitError,
    RedirectError,
    ResponseMeta,
    RetryError,
    ServerError,
    UnprocessableEntityError,
)
from ._money import MONEY_KEYS, PERCENT_KEYS, AmountInput, centavos, reais, to_centavos
from ._operations import OPERATIONS
from .webhook import (
    BatchEvent,
    DisputeEvent,
    RecurrenceEvent,
    SplitEvent,
    TestEvent,
    TransactionEvent,
    UnknownEvent,
    WebhookEvent,
    WebhookVerificationError,
    construct_event,
    parse_event,
    verify_webhook,
)

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError", "ApiError", "AmountInput", "AuthenticationError", "BadRequestError", "BatchEvent", "ConflictError",
    "DisputeEvent", "ErrorDetail", "MONEY_KEYS", "NotFoundError", "OPERATIONS", "PERCENT_KEYS", "Pixgate",
    "PixgateError", "RateLimit", "RateLimitError", "RecurrenceEvent", "RedirectError", "ResponseMeta", "Result",
    "RetryError", "ServerError", "SplitEvent", "TestEvent", "TransactionEvent", "UnknownEvent", "UnprocessableEntityError",
    "WebhookEvent", "WebhookVerificationError", "centavos", "construct_event", "new_idempotency_key",
    "parse_event", "reais", "to_centavos", "verify_webhook",
]
