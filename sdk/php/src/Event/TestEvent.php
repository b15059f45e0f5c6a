<?php

declare(strict_types=1);

namespace Pixgate\Event;

/** webhook.test, sent by testWebhook. */
final class TestEvent extends Event
{
}
