<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** A webhook that failed verification, or a body that is not a pixgate event. */
final class WebhookVerificationException extends PixgateException
{
}
