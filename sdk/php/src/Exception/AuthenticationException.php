<?php

declare(strict_types=1);

namespace Pixgate\Exception;

/** 401: missing or invalid credentials. */
final class AuthenticationException extends ApiException
{
}
