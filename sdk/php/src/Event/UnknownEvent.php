<?php

declare(strict_types=1);

namespace Pixgate\Event;

/** An event name this version does not know (a newer server's): read $data. */
final class UnknownEvent extends Event
{
}
