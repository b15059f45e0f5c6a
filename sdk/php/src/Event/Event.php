<?php

declare(strict_types=1);

namespace Pixgate\Event;

/** Fields every event has. $id equals webhook-id: deduplicate on it (delivery is at least once). */
abstract class Event
{
    public readonly string $id;
    public readonly string $event;
    public readonly ?string $occurredAt;

    /**
     * @param array<string, mixed> $data the whole body, parsed (money as Amount), for fields this version does not know
     * @param string $raw the verified body as text
     */
    public function __construct(public readonly array $data, public readonly string $raw)
    {
        $this->id = $data['id'];
        $this->event = $data['event'];
        $this->occurredAt = $data['occurred_at'] ?? null;
    }
}
