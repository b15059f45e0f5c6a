<?php

declare(strict_types=1);

namespace Pixgate\Tests;

/** A `php -S` server running tests/fixtures/router.php in one scenario, for one test. */
final class LocalServer
{
    public readonly string $url;
    private readonly string $dir;
    /** @var resource */
    private $proc;

    public function __construct(string $scenario, array $env = [])
    {
        $this->dir = sys_get_temp_dir() . '/pixgate-php-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        touch($this->dir . '/requests.log');
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $this->url = "http://127.0.0.1:$port";
        $this->proc = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:$port", __DIR__ . '/fixtures/router.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            ['SCENARIO' => $scenario, 'STATE_DIR' => $this->dir] + $env + getenv(),
        );
        for ($i = 0; $i < 100; $i++) {
            $s = @fsockopen('127.0.0.1', $port, $errno, $errstr, 0.1);
            if ($s !== false) {
                fclose($s);
                return;
            }
            usleep(50000);
        }
        throw new \RuntimeException("php -S did not start on port $port");
    }

    /** @return list<array<string, string>> the headers of every request received */
    public function requests(): array
    {
        $lines = file($this->dir . '/requests.log', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
        return array_map(static fn (string $l) => json_decode($l, true), $lines);
    }

    public function stop(): void
    {
        proc_terminate($this->proc);
        proc_close($this->proc);
        @unlink($this->dir . '/requests.log');
        @rmdir($this->dir);
    }
}
