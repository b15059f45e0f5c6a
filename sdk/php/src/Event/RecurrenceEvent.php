<?php

declare(strict_types=1);

namespace Pixgate\Event;

/** pix.recurrence.*. */
final class RecurrenceEvent extends Event
{
    public readonly string $recurrenceId;
    public readonly string $externalId;
    /** The recurrence's status after the event. */
    public readonly string $status;
    /** pix.recurrence.cancelled: merchant or payer. */
    public readonly ?string $cancelledBy;
    /** pix.recurrence.charge_failed: the cycle charge. */
    public readonly ?string $paymentId;
    public readonly ?int $attempts;

    public function __construct(array $data, string $raw)
    {
        parent::__construct($data, $raw);
        $this->recurrenceId = $data['recurrence_id'] ?? '';
        $this->externalId = $data['external_id'] ?? '';
        $this->status = $data['status'] ?? '';
        $this->cancelledBy = $data['cancelled_by'] ?? null;
        $this->paymentId = $data['payment_id'] ?? null;
        $this->attempts = $data['attempts'] ?? null;
    }
}
