<?php

declare(strict_types=1);

namespace Pixgate\Event;

use Pixgate\Amount;

/**
 * pix.split.received (docs/marketplace.md): sent to a sub-account's own
 * postbackUrl, signed with its own webhook secret, when a charge of its
 * parent that splits to it is paid and its share credited.
 */
final class SplitEvent extends Event
{
    /** PAID. */
    public readonly string $statusTransaction;
    /** split. */
    public readonly string $type;
    /** The receiver's split transaction, in its history. */
    public readonly string $paymentId;
    /** The parent's charge that was paid. */
    public readonly string $sourcePaymentId;
    /** The share credited. */
    public readonly Amount $value;

    public function __construct(array $data, string $raw)
    {
        parent::__construct($data, $raw);
        $this->statusTransaction = $data['statusTransaction'] ?? '';
        $this->type = $data['type'] ?? '';
        $this->paymentId = $data['payment_id'] ?? '';
        $this->sourcePaymentId = $data['source_payment_id'] ?? '';
        $this->value = $data['value'] ?? Amount::centavos(0);
    }
}
