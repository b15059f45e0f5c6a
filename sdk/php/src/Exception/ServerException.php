<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 5xx: the server or its PSP failed. */
final class ServerException extends ApiException
{
}
