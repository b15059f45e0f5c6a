"""Every operation of internal/httpapi/openapi.yaml: its method, path and
retry policy. sdk/check-operations compares this table with the OpenAPI
document, so adding an operation is one line here and one method in
_client.py.

READ is retried after a network error or a 5xx; CREATE carries an
Idempotency-Key and is also retried after a 409 (a duplicate in progress);
UNSAFE is never repeated but for a 429, after which the server did nothing;
BY_EXTERNAL_ID is CREATE when the body has an external_id (the server answers
a repeat with the first result) and UNSAFE without one (a repeat would create
another).
"""

from typing import Dict, Tuple

READ = "read"
CREATE = "create"
UNSAFE = "unsafe"
BY_EXTERNAL_ID = "external_id"

OPERATIONS: Dict[str, Tuple[str, str, str]] = {
    "getHealth": ("GET", "/healthz", READ),
    "getReadiness": ("GET", "/readyz", READ),
    "getOpenAPIDocument": ("GET", "/openapi.yaml", READ),
    "createCharge": ("POST", "/api/v1/gateway/request-qrcode", CREATE),
    "createPayout": ("POST", "/api/v1/gateway/pix-payment", CREATE),
    "cancelPayout": ("POST", "/api/v1/gateway/pix-payment/{transaction_id}/cancel", UNSAFE),
    "createPayoutBatch": ("POST", "/api/v1/gateway/pix-payments/batch", BY_EXTERNAL_ID),
    "getPayoutBatch": ("GET", "/api/v1/gateway/pix-payments/batch/{batch_id}", READ),
    "createRefund": ("POST", "/api/v1/gateway/refund", CREATE),
    "getRefund": ("GET", "/api/v1/gateway/refunds/{refund_id}", READ),
    "listRefunds": ("GET", "/api/v1/gateway/refunds", READ),
    "cancelCharge": ("POST", "/api/v1/gateway/charges/{payment_id}/cancel", UNSAFE),
    "createRecurrence": ("POST", "/api/v1/gateway/recurrences", CREATE),
    "listRecurrences": ("GET", "/api/v1/gateway/recurrences", READ),
    "getRecurrence": ("GET", "/api/v1/gateway/recurrences/{recurrence_id}", READ),
    "cancelRecurrence": ("POST", "/api/v1/gateway/recurrences/{recurrence_id}/cancel", READ),
    "listDisputes": ("GET", "/api/v1/gateway/disputes", READ),
    "getDispute": ("GET", "/api/v1/gateway/disputes/{dispute_id}", READ),
    "defendDispute": ("POST", "/api/v1/gateway/disputes/{dispute_id}/defense", UNSAFE),
    "getBalance": ("GET", "/api/v1/wallet/balance", READ),
    "getTransaction": ("POST", "/api/v1/wallet/transaction", READ),
    "listTransactions": ("GET", "/api/v1/wallet/transactions", READ),
    "getStatement": ("GET", "/api/v1/wallet/statement", READ),
    "createTransfer": ("POST", "/api/v1/wallet/transfers", CREATE),
    "getAccountMe": ("GET", "/api/v1/accounts/me", READ),
    "createAccount": ("POST", "/api/v1/accounts", BY_EXTERNAL_ID),
    "listAccounts": ("GET", "/api/v1/accounts", READ),
    "getAccount": ("GET", "/api/v1/accounts/{account_id}", READ),
    "rotateAccountSecret": ("POST", "/api/v1/accounts/{account_id}/rotate-secret", UNSAFE),
    "sandboxPayCharge": ("POST", "/api/v1/sandbox/charges/{payment_id}/pay", READ),
    "sandboxExpireCharge": ("POST", "/api/v1/sandbox/charges/{payment_id}/expire", READ),
    "sandboxFailCharge": ("POST", "/api/v1/sandbox/charges/{payment_id}/fail", UNSAFE),
    "sandboxApproveRecurrence": ("POST", "/api/v1/sandbox/recurrences/{recurrence_id}/approve", UNSAFE),
    "sandboxRejectRecurrence": ("POST", "/api/v1/sandbox/recurrences/{recurrence_id}/reject", UNSAFE),
    "sandboxCancelRecurrenceByPayer": ("POST", "/api/v1/sandbox/recurrences/{recurrence_id}/cancel-by-payer", UNSAFE),
    "sandboxNextCycle": ("POST", "/api/v1/sandbox/recurrences/{recurrence_id}/next-cycle", UNSAFE),
    "sandboxDisputeCharge": ("POST", "/api/v1/sandbox/charges/{payment_id}/dispute", UNSAFE),
    "sandboxMedReturn": ("POST", "/api/v1/sandbox/charges/{payment_id}/med-return", UNSAFE),
    "sandboxResolveDispute": ("POST", "/api/v1/sandbox/disputes/{dispute_id}/resolve", UNSAFE),
    "sandboxRunSchedule": ("POST", "/api/v1/sandbox/payouts/{transaction_id}/run-schedule", UNSAFE),
    "sandboxGetClock": ("GET", "/api/v1/sandbox/clock", READ),
    "sandboxAdvanceClock": ("POST", "/api/v1/sandbox/clock", UNSAFE),
    "listDeliveries": ("GET", "/api/v1/webhooks/deliveries", READ),
    "retryDelivery": ("POST", "/api/v1/webhooks/deliveries/{event_id}/retry", UNSAFE),
    "testWebhook": ("POST", "/api/v1/webhooks/test", UNSAFE),
    "getPayPage": ("GET", "/pay/{payment_id}", READ),
    "getPayStatus": ("GET", "/pay/{payment_id}/status", READ),
}
