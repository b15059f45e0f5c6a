<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** Base class of every SDK error. */
class PixgateException extends \RuntimeException
{
}
