<?php

declare(strict_types=1);

namespace Pixgate\Event;

use Pixgate\Amount;

/** pix.cashin.*, pix.cashout.* (cancelled: a scheduled payout cancelled before its day), pix.refund.*. */
final class TransactionEvent extends Event
{
    public readonly string $statusTransaction;
    /** Without fee; refunds: the refunded amount. */
    public readonly Amount $value;
    public readonly Amount $tax;
    public readonly string $paymentId;
    public readonly ?string $externalId;
    public readonly ?string $transactionId;
    public readonly ?string $refundId;
    /** cashin, cashout or refund. */
    public readonly string $type;
    public readonly ?Amount $paidAmount;
    public readonly bool $amountMismatch;
    public readonly ?string $recurrenceId;
    /** @var list<array{account_id: string, amount: ?Amount}>|null pix.cashin.paid of a split charge only: each receiver and what it was credited. */
    public readonly ?array $splits;

    public function __construct(array $data, string $raw)
    {
        parent::__construct($data, $raw);
        $this->statusTransaction = $data['statusTransaction'] ?? '';
        $this->value = $data['value'] ?? Amount::centavos(0);
        $this->tax = $data['tax'] ?? Amount::centavos(0);
        $this->paymentId = $data['payment_id'] ?? '';
        $this->externalId = $data['external_id'] ?? null;
        $this->transactionId = $data['transaction_id'] ?? null;
        $this->refundId = $data['refund_id'] ?? null;
        $this->type = $data['type'] ?? '';
        $this->paidAmount = $data['paid_amount'] ?? null;
        $this->amountMismatch = (bool) ($data['amount_mismatch'] ?? false);
        $this->recurrenceId = $data['recurrence_id'] ?? null;
        $this->splits = is_array($data['splits'] ?? null) ? $data['splits'] : null;
    }
}
