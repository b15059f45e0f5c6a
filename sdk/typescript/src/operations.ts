/**
 * Every operation of internal/httpapi/openapi.yaml: its method, path and
 * retry policy. sdk/check-operations compares this table with the OpenAPI
 * document, so adding an operation is one line here and one method in
 * client.ts.
 *
 * Policies: "read" is retried after a network error or a 5xx (it changes
 * nothing, or changes it once whatever the repeats); "create" carries an
 * Idempotency-Key and is also retried after a 409 (a duplicate still in
 * progress); "unsafe" is never repeated but for a 429, after which the
 * server did nothing; "external_id" is "create" when the body has an
 * external_id (the server answers a repeat with the first result) and
 * "unsafe" without one (a repeat would create another).
 */
export type Policy = "read" | "create" | "unsafe" | "external_id";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export const OPERATIONS = {
  getHealth: ["GET", "/healthz", "read"],
  getReadiness: ["GET", "/readyz", "read"],
  getOpenAPIDocument: ["GET", "/openapi.yaml", "read"],
  createCharge: ["POST", "/api/v1/gateway/request-qrcode", "create"],
  createPayout: ["POST", "/api/v1/gateway/pix-payment", "create"],
  cancelPayout: ["POST", "/api/v1/gateway/pix-payment/{transaction_id}/cancel", "unsafe"],
  createPayoutBatch: ["POST", "/api/v1/gateway/pix-payments/batch", "external_id"],
  getPayoutBatch: ["GET", "/api/v1/gateway/pix-payments/batch/{batch_id}", "read"],
  createRefund: ["POST", "/api/v1/gateway/refund", "create"],
  getRefund: ["GET", "/api/v1/gateway/refunds/{refund_id}", "read"],
  listRefunds: ["GET", "/api/v1/gateway/refunds", "read"],
  cancelCharge: ["POST", "/api/v1/gateway/charges/{payment_id}/cancel", "unsafe"],
  createRecurrence: ["POST", "/api/v1/gateway/recurrences", "create"],
  listRecurrences: ["GET", "/api/v1/gateway/recurrences", "read"],
  getRecurrence: ["GET", "/api/v1/gateway/recurrences/{recurrence_id}", "read"],
  cancelRecurrence: ["POST", "/api/v1/gateway/recurrences/{recurrence_id}/cancel", "read"],
  listDisputes: ["GET", "/api/v1/gateway/disputes", "read"],
  getDispute: ["GET", "/api/v1/gateway/disputes/{dispute_id}", "read"],
  defendDispute: ["POST", "/api/v1/gateway/disputes/{dispute_id}/defense", "unsafe"],
  getBalance: ["GET", "/api/v1/wallet/balance", "read"],
  getTransaction: ["POST", "/api/v1/wallet/transaction", "read"],
  listTransactions: ["GET", "/api/v1/wallet/transactions", "read"],
  getStatement: ["GET", "/api/v1/wallet/statement", "read"],
  createTransfer: ["POST", "/api/v1/wallet/transfers", "create"],
  getAccountMe: ["GET", "/api/v1/accounts/me", "read"],
  createAccount: ["POST", "/api/v1/accounts", "external_id"],
  listAccounts: ["GET", "/api/v1/accounts", "read"],
  getAccount: ["GET", "/api/v1/accounts/{account_id}", "read"],
  rotateAccountSecret: ["POST", "/api/v1/accounts/{account_id}/rotate-secret", "unsafe"],
  sandboxPayCharge: ["POST", "/api/v1/sandbox/charges/{payment_id}/pay", "read"],
  sandboxExpireCharge: ["POST", "/api/v1/sandbox/charges/{payment_id}/expire", "read"],
  sandboxFailCharge: ["POST", "/api/v1/sandbox/charges/{payment_id}/fail", "unsafe"],
  sandboxApproveRecurrence: ["POST", "/api/v1/sandbox/recurrences/{recurrence_id}/approve", "unsafe"],
  sandboxRejectRecurrence: ["POST", "/api/v1/sandbox/recurrences/{recurrence_id}/reject", "unsafe"],
  sandboxCancelRecurrenceByPayer: ["POST", "/api/v1/sandbox/recurrences/{recurrence_id}/cancel-by-payer", "unsafe"],
  sandboxNextCycle: ["POST", "/api/v1/sandbox/recurrences/{recurrence_id}/next-cycle", "unsafe"],
  sandboxDisputeCharge: ["POST", "/api/v1/sandbox/charges/{payment_id}/dispute", "unsafe"],
  sandboxMedReturn: ["POST", "/api/v1/sandbox/charges/{payment_id}/med-return", "unsafe"],
  sandboxResolveDispute: ["POST", "/api/v1/sandbox/disputes/{dispute_id}/resolve", "unsafe"],
  sandboxRunSchedule: ["POST", "/api/v1/sandbox/payouts/{transaction_id}/run-schedule", "unsafe"],
  sandboxGetClock: ["GET", "/api/v1/sandbox/clock", "read"],
  sandboxAdvanceClock: ["POST", "/api/v1/sandbox/clock", "unsafe"],
  listDeliveries: ["GET", "/api/v1/webhooks/deliveries", "read"],
  retryDelivery: ["POST", "/api/v1/webhooks/deliveries/{event_id}/retry", "unsafe"],
  testWebhook: ["POST", "/api/v1/webhooks/test", "unsafe"],
  getPayPage: ["GET", "/pay/{payment_id}", "read"],
  getPayStatus: ["GET", "/pay/{payment_id}/status", "read"],
} as const satisfies Record<string, readonly [Method, string, Policy]>;

/** The name (OpenAPI operationId) of an operation. */
export type OperationId = keyof typeof OPERATIONS;
