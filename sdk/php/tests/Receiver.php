<?php

declare(strict_types=1);

namespace Pixgate\Tests;

use Pixgate\Event\Event;
use Pixgate\Exception\WebhookVerificationException;
use Pixgate\Webhook;

/**
 * A tiny webhook receiver in the test's own process: a listening socket that
 * wait() serves, verifying each delivery (401 for a bad signature, 204
 * otherwise) and keeping the events.
 */
final class Receiver
{
    public readonly string $url;
    /** @var list<Event> */
    public array $events = [];
    /** @var resource */
    private $server;

    public function __construct(private readonly string $secret)
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($server === false) {
            throw new \RuntimeException("listen: $errstr");
        }
        $this->server = $server;
        $this->url = 'http://' . stream_socket_get_name($server, false) . '/webhooks/pix';
    }

    /** Serves deliveries until one matches $pred (at most $timeout seconds) and returns it. */
    public function wait(callable $pred, float $timeout = 15.0): Event
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            foreach ($this->events as $e) {
                if ($pred($e)) {
                    return $e;
                }
            }
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new \RuntimeException("no such webhook within $timeout s");
            }
            $conn = @stream_socket_accept($this->server, min($left, 1.0));
            if ($conn !== false) {
                $this->serveOne($conn);
            }
        }
    }

    /** @param resource $conn */
    private function serveOne($conn): void
    {
        stream_set_timeout($conn, 5);
        $head = '';
        while (!str_contains($head, "\r\n\r\n") && !feof($conn)) {
            $line = fgets($conn);
            if ($line === false) {
                break;
            }
            $head .= $line;
        }
        $headers = [];
        foreach (array_slice(explode("\r\n", trim($head)), 1) as $line) {
            [$k, $v] = array_pad(explode(':', $line, 2), 2, '');
            $headers[strtolower(trim($k))] = trim($v);
        }
        $body = '';
        $len = (int) ($headers['content-length'] ?? 0);
        while (strlen($body) < $len && !feof($conn)) {
            $chunk = fread($conn, $len - strlen($body));
            if ($chunk === false || $chunk === '') {
                break;
            }
            $body .= $chunk;
        }
        try {
            $this->events[] = Webhook::constructEvent($this->secret, $headers, $body);
            $status = '204 No Content';
        } catch (WebhookVerificationException) {
            $status = '401 Unauthorized';
        }
        fwrite($conn, "HTTP/1.1 $status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        fclose($conn);
    }

    public function close(): void
    {
        fclose($this->server);
    }
}
