<?php

declare(strict_types=1);

namespace Pixgate;

/**
 * Every operation of internal/httpapi/openapi.yaml: its method, path and
 * retry policy. sdk/check-operations compares this table with the OpenAPI
 * document, so adding an operation is one line here and one method in
 * Pixgate.
 *
 * READ is retried after a network error or a 5xx; CREATE carries an
 * Idempotency-Key and is also retried after a 409 (a duplicate in progress);
 * UNSAFE is never repeated but for a 429, after which the server did nothing;
 * BY_EXTERNAL_ID is CREATE when the body has an external_id (the server
 * answers a repeat with the first result) and UNSAFE without one (a repeat
 * would create another).
 */
final class Operations
{
    public const READ = 'read';
    public const CREATE = 'create';
    public const UNSAFE = 'unsafe';
    public const BY_EXTERNAL_ID = 'external_id';

    /** @var array<string, array{0: string, 1: string, 2: string}> */
    public const ALL = [
        'getHealth' => ['GET', '/healthz', self::READ],
        'getReadiness' => ['GET', '/readyz', self::READ],
        'getOpenAPIDocument' => ['GET', '/openapi.yaml', self::READ],
        'createCharge' => ['POST', '/api/v1/gateway/request-qrcode', self::CREATE],
        'createPayout' => ['POST', '/api/v1/gateway/pix-payment', self::CREATE],
        'cancelPayout' => ['POST', '/api/v1/gateway/pix-payment/{transaction_id}/cancel', self::UNSAFE],
        'createPayoutBatch' => ['POST', '/api/v1/gateway/pix-payments/batch', self::BY_EXTERNAL_ID],
        'getPayoutBatch' => ['GET', '/api/v1/gateway/pix-payments/batch/{batch_id}', self::READ],
        'createRefund' => ['POST', '/api/v1/gateway/refund', self::CREATE],
        'getRefund' => ['GET', '/api/v1/gateway/refunds/{refund_id}', self::READ],
        'listRefunds' => ['GET', '/api/v1/gateway/refunds', self::READ],
        'cancelCharge' => ['POST', '/api/v1/gateway/charges/{payment_id}/cancel', self::UNSAFE],
        'createRecurrence' => ['POST', '/api/v1/gateway/recurrences', self::CREATE],
        'listRecurrences' => ['GET', '/api/v1/gateway/recurrences', self::READ],
        'getRecurrence' => ['GET', '/api/v1/gateway/recurrences/{recurrence_id}', self::READ],
        'cancelRecurrence' => ['POST', '/api/v1/gateway/recurrences/{recurrence_id}/cancel', self::READ],
        'listDisputes' => ['GET', '/api/v1/gateway/disputes', self::READ],
        'getDispute' => ['GET', '/api/v1/gateway/disputes/{dispute_id}', self::READ],
        'defendDispute' => ['POST', '/api/v1/gateway/disputes/{dispute_id}/defense', self::UNSAFE],
        'getBalance' => ['GET', '/api/v1/wallet/balance', self::READ],
        'getTransaction' => ['POST', '/api/v1/wallet/transaction', self::READ],
        'listTransactions' => ['GET', '/api/v1/wallet/transactions', self::READ],
        'getStatement' => ['GET', '/api/v1/wallet/statement', self::READ],
        'createTransfer' => ['POST', '/api/v1/wallet/transfers', self::CREATE],
        'getAccountMe' => ['GET', '/api/v1/accounts/me', self::READ],
        'createAccount' => ['POST', '/api/v1/accounts', self::BY_EXTERNAL_ID],
        'listAccounts' => ['GET', '/api/v1/accounts', self::READ],
        'getAccount' => ['GET', '/api/v1/accounts/{account_id}', self::READ],
        'rotateAccountSecret' => ['POST', '/api/v1/accounts/{account_id}/rotate-secret', self::UNSAFE],
        'sandboxPayCharge' => ['POST', '/api/v1/sandbox/charges/{payment_id}/pay', self::READ],
        'sandboxExpireCharge' => ['POST', '/api/v1/sandbox/charges/{payment_id}/expire', self::READ],
        'sandboxFailCharge' => ['POST', '/api/v1/sandbox/charges/{payment_id}/fail', self::UNSAFE],
        'sandboxApproveRecurrence' => ['POST', '/api/v1/sandbox/recurrences/{recurrence_id}/approve', self::UNSAFE],
        'sandboxRejectRecurrence' => ['POST', '/api/v1/sandbox/recurrences/{recurrence_id}/reject', self::UNSAFE],
        'sandboxCancelRecurrenceByPayer' => ['POST', '/api/v1/sandbox/recurrences/{recurrence_id}/cancel-by-payer', self::UNSAFE],
        'sandboxNextCycle' => ['POST', '/api/v1/sandbox/recurrences/{recurrence_id}/next-cycle', self::UNSAFE],
        'sandboxDisputeCharge' => ['POST', '/api/v1/sandbox/charges/{payment_id}/dispute', self::UNSAFE],
        'sandboxMedReturn' => ['POST', '/api/v1/sandbox/charges/{payment_id}/med-return', self::UNSAFE],
        'sandboxResolveDispute' => ['POST', '/api/v1/sandbox/disputes/{dispute_id}/resolve', self::UNSAFE],
        'sandboxRunSchedule' => ['POST', '/api/v1/sandbox/payouts/{transaction_id}/run-schedule', self::UNSAFE],
        'sandboxGetClock' => ['GET', '/api/v1/sandbox/clock', self::READ],
        'sandboxAdvanceClock' => ['POST', '/api/v1/sandbox/clock', self::UNSAFE],
        'listDeliveries' => ['GET', '/api/v1/webhooks/deliveries', self::READ],
        'retryDelivery' => ['POST', '/api/v1/webhooks/deliveries/{event_id}/retry', self::UNSAFE],
        'testWebhook' => ['POST', '/api/v1/webhooks/test', self::UNSAFE],
        'getPayPage' => ['GET', '/pay/{payment_id}', self::READ],
        'getPayStatus' => ['GET', '/pay/{payment_id}/status', self::READ],
    ];
}
