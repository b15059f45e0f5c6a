<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 404: no such resource (or another client's). */
final class NotFoundException extends ApiException
{
}
