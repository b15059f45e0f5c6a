<?php

declare(strict_types=1);

namespace Pixgate;

use Pixgate\Event\BatchEvent;
use Pixgate\Event\DisputeEvent;
use Pixgate\Event\Event;
use Pixgate\Event\RecurrenceEvent;
use Pixgate\Event\SplitEvent;
use Pixgate\Event\TestEvent;
use Pixgate\Event\TransactionEvent;
use Pixgate\Event\UnknownEvent;
use Pixgate\Exception\WebhookVerificationException;

/**
 * Receiving pixgate webhooks: verifying their Standard Webhooks signature
 * (https://www.standardwebhooks.com) and parsing the body into a typed event.
 *
 *     $event = Webhook::constructEvent(getenv('PIXGATE_WEBHOOK_SECRET'), getallheaders(), file_get_contents('php://input'));
 */
final class Webhook
{
    /** Every event name of the API's EventName enum, with the class it is parsed into. */
    public const EVENTS = [
        'pix.cashin.paid' => TransactionEvent::class,
        'pix.cashin.cancelled' => TransactionEvent::class,
        'pix.cashout.paid' => TransactionEvent::class,
        'pix.cashout.failed' => TransactionEvent::class,
        'pix.cashout.reversed' => TransactionEvent::class,
        'pix.cashout.cancelled' => TransactionEvent::class,
        'pix.refund.completed' => TransactionEvent::class,
        'pix.refund.failed' => TransactionEvent::class,
        'pix.recurrence.approved' => RecurrenceEvent::class,
        'pix.recurrence.rejected' => RecurrenceEvent::class,
        'pix.recurrence.expired' => RecurrenceEvent::class,
        'pix.recurrence.cancelled' => RecurrenceEvent::class,
        'pix.recurrence.charge_failed' => RecurrenceEvent::class,
        'pix.recurrence.finished' => RecurrenceEvent::class,
        'pix.dispute.opened' => DisputeEvent::class,
        'pix.dispute.closed' => DisputeEvent::class,
        'pix.batch.completed' => BatchEvent::class,
        'pix.split.received' => SplitEvent::class,
        'webhook.test' => TestEvent::class,
    ];

    public const DEFAULT_TOLERANCE = 300;

    /**
     * Checks webhook-id, webhook-timestamp and webhook-signature against the raw
     * body. $secret is the whsec_… webhook secret (a list during a rotation);
     * $headers is any name => value map (getallheaders(), a PSR-7 getHeaders()).
     * Throws WebhookVerificationException unless a v1 signature matches and the
     * timestamp is within $tolerance seconds of now. Pass the body exactly as received.
     *
     * @param string|list<string> $secret
     * @param array<string, string|list<string>> $headers
     */
    public static function verify(string|array $secret, array $headers, string $body, int $tolerance = self::DEFAULT_TOLERANCE, ?int $now = null): void
    {
        $id = self::header($headers, 'webhook-id');
        $ts = self::header($headers, 'webhook-timestamp');
        $sigs = self::header($headers, 'webhook-signature');
        if ($id === '' || $ts === '' || $sigs === '') {
            throw new WebhookVerificationException('pixgate: webhook headers missing (webhook-id, webhook-timestamp, webhook-signature)');
        }
        if (!preg_match('/^\d{1,19}$/D', $ts)) {
            throw new WebhookVerificationException('pixgate: webhook-timestamp is not Unix seconds');
        }
        if (abs(($now ?? time()) - (int) $ts) > $tolerance) {
            throw new WebhookVerificationException('pixgate: webhook-timestamp outside the tolerance');
        }
        $signed = "$id.$ts.$body";
        $expected = array_map(static fn (string $s) => hash_hmac('sha256', $signed, self::key($s), true), (array) $secret);
        foreach (preg_split('/\s+/', $sigs, -1, PREG_SPLIT_NO_EMPTY) as $entry) {
            [$version, $sig] = array_pad(explode(',', $entry, 2), 2, '');
            if ($version !== 'v1' || $sig === '') {
                continue;
            }
            $got = base64_decode($sig, true);
            if ($got === false) {
                continue;
            }
            foreach ($expected as $want) {
                if (hash_equals($want, $got)) {
                    return;
                }
            }
        }
        throw new WebhookVerificationException('pixgate: no webhook signature matches');
    }

    /** Reads a (verified) body into a typed event, money as Amount. */
    public static function parse(string $body): Event
    {
        try {
            $d = Json::decode($body);
        } catch (\JsonException|\InvalidArgumentException $e) {
            throw new WebhookVerificationException('pixgate: the webhook body is not JSON', 0, $e);
        }
        if (!is_array($d) || !is_string($d['id'] ?? null) || !is_string($d['event'] ?? null)) {
            throw new WebhookVerificationException('pixgate: the webhook body is not a pixgate event');
        }
        $class = self::EVENTS[$d['event']] ?? UnknownEvent::class;
        return new $class($d, $body);
    }

    /**
     * Verifies a webhook and parses it: the one call a receiver needs.
     *
     * @param string|list<string> $secret
     * @param array<string, string|list<string>> $headers
     */
    public static function constructEvent(string|array $secret, array $headers, string $body, int $tolerance = self::DEFAULT_TOLERANCE, ?int $now = null): Event
    {
        self::verify($secret, $headers, $body, $tolerance, $now);
        return self::parse($body);
    }

    private static function key(string $secret): string
    {
        $b64 = str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret;
        $key = base64_decode($b64, true);
        if ($key === false || $key === '') {
            throw new \InvalidArgumentException('pixgate: the webhook secret is not whsec_ followed by Base64');
        }
        return $key;
    }

    private static function header(array $headers, string $name): string
    {
        foreach ($headers as $k => $v) {
            if (strtolower((string) $k) === $name) {
                return trim(is_array($v) ? (string) ($v[0] ?? '') : (string) $v);
            }
        }
        return '';
    }
}
