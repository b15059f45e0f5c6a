<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 400: invalid parameters; details name the fields. */
final class BadRequestException extends ApiException
{
}
