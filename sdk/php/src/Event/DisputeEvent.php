<?php

declare(strict_types=1);

namespace Pixgate\Event;

use Pixgate\Amount;

/** pix.dispute.opened and pix.dispute.closed (docs/med.md). */
final class DisputeEvent extends Event
{
    public readonly string $disputeId;
    public readonly string $paymentId;
    public readonly Amount $amount;
    public readonly string $reason;
    /** pix.dispute.opened only. */
    public readonly ?string $respondBy;
    /** pix.dispute.closed only: released or returned. */
    public readonly ?string $outcome;
    public readonly ?Amount $returnedAmount;

    public function __construct(array $data, string $raw)
    {
        parent::__construct($data, $raw);
        $this->disputeId = $data['dispute_id'] ?? '';
        $this->paymentId = $data['payment_id'] ?? '';
        $this->amount = $data['amount'] ?? Amount::centavos(0);
        $this->reason = $data['reason'] ?? '';
        $this->respondBy = $data['respond_by'] ?? null;
        $this->outcome = $data['outcome'] ?? null;
        $this->returnedAmount = $data['returned_amount'] ?? null;
    }
}
