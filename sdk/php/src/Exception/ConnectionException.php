<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** No answer arrived (connection refused, reset, timeout) or the answer was cut. */
final class ConnectionException extends PixgateException
{
}
