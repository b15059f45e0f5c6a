<?php

declare(strict_types=1);

namespace Pixgate\Event;

/**
 * pix.batch.completed (docs/payouts.md): sent once to the batch's callbackUrl,
 * when no accepted item is PENDING or SCHEDULED any more.
 */
final class BatchEvent extends Event
{
    /** COMPLETED. */
    public readonly string $statusTransaction;
    public readonly string $batchId;
    public readonly string $externalId;
    public readonly int $total;
    public readonly int $accepted;
    public readonly int $rejected;
    /** @var array<string, int> How many items read each status: PENDING, SCHEDULED, PAID, CANCELLED, REVERSED, REJECTED. */
    public readonly array $counts;

    public function __construct(array $data, string $raw)
    {
        parent::__construct($data, $raw);
        $this->statusTransaction = $data['statusTransaction'] ?? '';
        $this->batchId = $data['batch_id'] ?? '';
        $this->externalId = $data['external_id'] ?? '';
        $this->total = (int) ($data['total'] ?? 0);
        $this->accepted = (int) ($data['accepted'] ?? 0);
        $this->rejected = (int) ($data['rejected'] ?? 0);
        $this->counts = is_array($data['counts'] ?? null) ? $data['counts'] : [];
    }
}
