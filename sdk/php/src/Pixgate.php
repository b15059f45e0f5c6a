<?php

declare(strict_types=1);

namespace Pixgate;

use Pixgate\Exception\ApiException;
use Pixgate\Exception\ConnectionException;
use Pixgate\Exception\PixgateException;
use Pixgate\Exception\RedirectException;
use Pixgate\Exception\RetryException;

/**
 * A client of one pixgate server with one client's credentials: one method
 * per operation of the API, named after its OpenAPI operationId, with exact
 * money, safe retries and typed errors.
 *
 *     $pixgate = new Pixgate('http://127.0.0.1:8080', $clientId, $clientSecret);
 *     $charge = $pixgate->createCharge(['amount' => '25.90', ...]);
 */
final class Pixgate
{
    public readonly string $baseUrl;
    private readonly string $secret;
    /** @var \Closure(float): void */
    private readonly \Closure $sleep;

    /**
     * @param string $clientSecret sent as header stps; never logged, never shown by var_dump/print_r,
     *                             never sent anywhere but $baseUrl's origin
     * @param (callable(float): void)|null $sleep how to wait between attempts, in seconds (for tests)
     */
    public function __construct(
        string $baseUrl,
        public readonly string $clientId,
        #[\SensitiveParameter] string $clientSecret,
        private readonly int $maxRetries = 3,
        private readonly float $backoffBase = 0.25,
        private readonly float $backoffMax = 5.0,
        private readonly float $timeout = 30.0,
        private readonly string $userAgent = 'pixgate-php-sdk/0.1',
        ?callable $sleep = null,
    ) {
        $u = parse_url($baseUrl);
        if ($u === false || !in_array($u['scheme'] ?? '', ['http', 'https'], true) || ($u['host'] ?? '') === '') {
            throw new \InvalidArgumentException(sprintf('pixgate: base URL "%s" is not an absolute http(s) URL', $baseUrl));
        }
        if ($clientId === '' || $clientSecret === '') {
            throw new \InvalidArgumentException('pixgate: client id and secret are required');
        }
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->secret = $clientSecret;
        $this->sleep = $sleep !== null ? \Closure::fromCallable($sleep) : static function (float $s): void {
            if ($s > 0) {
                usleep((int) round($s * 1e6));
            }
        };
    }

    /** What var_dump and print_r show: never the secret. */
    public function __debugInfo(): array
    {
        return ['baseUrl' => $this->baseUrl, 'clientId' => $this->clientId];
    }

    /** A fresh random Idempotency-Key (32 hex digits), the kind the SDK generates. */
    public static function newIdempotencyKey(): string
    {
        return bin2hex(random_bytes(16));
    }

    // ---- operations (one method per operationId) ----

    /** GET /healthz. */
    public function getHealth(): Result
    {
        return $this->call('getHealth');
    }

    /** GET /readyz: a ServerException (503) while the database is unreachable. */
    public function getReadiness(): Result
    {
        return $this->call('getReadiness');
    }

    /** GET /openapi.yaml, as text. */
    public function getOpenAPIDocument(): string
    {
        return $this->call('getOpenAPIDocument', text: true, accept: 'application/yaml')['text'];
    }

    /**
     * Creates a PIX charge. An unknown outcome is a RetryException carrying the key to repeat it with.
     * 'splits' => [['account_id' => …, 'percent' => '10'], …] (or all 'amount') shares what it brings
     * among your sub-accounts once paid; its lookup then carries 'splits' => [['account_id', 'amount']].
     */
    public function createCharge(array $request, ?string $idempotencyKey = null): Result
    {
        return $this->call('createCharge', body: $request, idempotencyKey: $idempotencyKey ?? self::newIdempotencyKey());
    }

    /**
     * Sends a PIX payment. Give it an idempotency key stored before the call, so that it can be
     * repeated without paying twice. With 'scheduled_date' => 'YYYY-MM-DD' (São Paulo, tomorrow to
     * 365 days ahead) it waits, SCHEDULED and with nothing reserved, until that day.
     */
    public function createPayout(array $request, ?string $idempotencyKey = null): Result
    {
        return $this->call('createPayout', body: $request, idempotencyKey: $idempotencyKey ?? self::newIdempotencyKey());
    }

    /**
     * Cancels a payout sent with scheduled_date while its day has not begun (pix.cashout.cancelled
     * follows). Never repeated after a network error: a repeat of a cancel that worked answers 422,
     * hiding that it worked; read the payout with getTransaction instead.
     */
    public function cancelPayout(string $transactionId): Result
    {
        return $this->call('cancelPayout', params: ['transaction_id' => $transactionId]);
    }

    /**
     * Sends 1 to 1,000 payouts in one request (external_id, callbackUrl, items: payout requests
     * each with its own external_id); each item is accepted or rejected on its own. The server
     * deduplicates the batch on its external_id, so an unknown outcome is retried with the same
     * body and answers the first result ($result->response->idempotentReplayed).
     */
    public function createPayoutBatch(array $request): Result
    {
        return $this->call('createPayoutBatch', body: $request);
    }

    /** Reads a batch, each item as its payout now reads, with counts by status. */
    public function getPayoutBatch(string $batchId): Result
    {
        return $this->call('getPayoutBatch', params: ['batch_id' => $batchId]);
    }

    /** Refunds all (no amount) or part of a paid charge. */
    public function createRefund(array $request, ?string $idempotencyKey = null): Result
    {
        return $this->call('createRefund', body: $request, idempotencyKey: $idempotencyKey ?? self::newIdempotencyKey());
    }

    /** Reads one refund. */
    public function getRefund(string $refundId): Result
    {
        return $this->call('getRefund', params: ['refund_id' => $refundId]);
    }

    /** One page of refunds (payment_id, status, limit, cursor), newest first; see paginate(). */
    public function listRefunds(array $query = []): Result
    {
        return $this->call('listRefunds', query: $query);
    }

    /** Cancels a PENDING charge; not repeated after a network error (a repeat answers 422 for a cancel that worked). */
    public function cancelCharge(string $paymentId): Result
    {
        return $this->call('cancelCharge', params: ['payment_id' => $paymentId]);
    }

    /** Creates a recurrence (Pix Automático); with 'splits', as a charge's, every cycle charge is split. */
    public function createRecurrence(array $request, ?string $idempotencyKey = null): Result
    {
        return $this->call('createRecurrence', body: $request, idempotencyKey: $idempotencyKey ?? self::newIdempotencyKey());
    }

    /** One page of recurrences (status, limit, cursor). */
    public function listRecurrences(array $query = []): Result
    {
        return $this->call('listRecurrences', query: $query);
    }

    /** Reads a recurrence with its charges. */
    public function getRecurrence(string $recurrenceId): Result
    {
        return $this->call('getRecurrence', params: ['recurrence_id' => $recurrenceId]);
    }

    /** Cancels a recurrence (idempotent). */
    public function cancelRecurrence(string $recurrenceId): Result
    {
        return $this->call('cancelRecurrence', params: ['recurrence_id' => $recurrenceId]);
    }

    /** One page of MED disputes (status, payment_id, limit, cursor). */
    public function listDisputes(array $query = []): Result
    {
        return $this->call('listDisputes', query: $query);
    }

    /** Reads one dispute. */
    public function getDispute(string $disputeId): Result
    {
        return $this->call('getDispute', params: ['dispute_id' => $disputeId]);
    }

    /** Answers an OPEN dispute; never repeated after a network error (a repeat is a second defense). */
    public function defendDispute(string $disputeId, bool $accept, string $justification): Result
    {
        return $this->call('defendDispute', params: ['dispute_id' => $disputeId], body: ['accept' => $accept, 'justification' => $justification]);
    }

    /** The wallet balance, in integer centavos. */
    public function getBalance(): Result
    {
        return $this->call('getBalance');
    }

    /** Looks one transaction up by payment_id, external_id or both. */
    public function getTransaction(?string $paymentId = null, ?string $externalId = null): Result
    {
        if (($paymentId ?? '') === '' && ($externalId ?? '') === '') {
            throw new \InvalidArgumentException('pixgate: getTransaction needs a payment id, an external id or both');
        }
        return $this->call('getTransaction', body: ['payment_id' => $paymentId, 'external_id' => $externalId]);
    }

    /** One page of the history (limit, cursor, status, type, from, to), newest first; see paginate(). */
    public function listTransactions(array $query = []): Result
    {
        return $this->call('listTransactions', query: $query);
    }

    /** The statement of [from, to) as JSON. */
    public function getStatement(\DateTimeInterface|string $from, \DateTimeInterface|string $to): Result
    {
        return $this->call('getStatement', query: ['from' => $from, 'to' => $to]);
    }

    /** The statement of [from, to) as CSV text (the same operation, format=csv). */
    public function getStatementCsv(\DateTimeInterface|string $from, \DateTimeInterface|string $to): string
    {
        return $this->call('getStatement', query: ['from' => $from, 'to' => $to, 'format' => 'csv'], text: true, accept: 'text/csv')['text'];
    }

    /**
     * Moves money to one of your sub-accounts or to your parent (to_account_id, amount,
     * description, external_id), at once and in the ledger only. Keyed like a payout: give it
     * an idempotency key (or an external_id) stored before the call, so that a RetryException
     * can be repeated without moving the money twice.
     */
    public function createTransfer(array $request, ?string $idempotencyKey = null): Result
    {
        return $this->call('createTransfer', body: $request, idempotencyKey: $idempotencyKey ?? self::newIdempotencyKey());
    }

    /** Your own account: its account_id (what transfers name) and, for a sub-account, its parent's. */
    public function getAccountMe(): Result
    {
        return $this->call('getAccountMe');
    }

    /**
     * Creates a sub-account (name, document, external_id, postbackUrl); its secrets are in this
     * answer only (null in a replay), and var_dump/print_r of the Result hide them. Retried after
     * an unknown outcome only with an external_id, on which the server deduplicates; without one
     * a repeat would create a second account.
     */
    public function createAccount(array $request): Result
    {
        return $this->call('createAccount', body: $request);
    }

    /** One page of your sub-accounts (limit, cursor), newest first; see paginate(). Never a secret. */
    public function listAccounts(array $query = []): Result
    {
        return $this->call('listAccounts', query: $query);
    }

    /** One of your sub-accounts, with available_cents; another family's, a sibling's or an unknown one is a NotFoundException. */
    public function getAccount(string $accountId): Result
    {
        return $this->call('getAccount', params: ['account_id' => $accountId]);
    }

    /** Gives a sub-account a new client secret (the old one stops at once); never repeated after a network error, since a repeat rotates again. */
    public function rotateAccountSecret(string $accountId): Result
    {
        return $this->call('rotateAccountSecret', params: ['account_id' => $accountId]);
    }

    /** Sandbox: pays a pending charge (optionally on a São Paulo date, YYYY-MM-DD). Idempotent. */
    public function sandboxPayCharge(string $paymentId, ?string $date = null): Result
    {
        return $this->call('sandboxPayCharge', params: ['payment_id' => $paymentId], body: $date !== null ? ['date' => $date] : null);
    }

    /** Sandbox: expires a pending charge. Idempotent. */
    public function sandboxExpireCharge(string $paymentId): Result
    {
        return $this->call('sandboxExpireCharge', params: ['payment_id' => $paymentId]);
    }

    /** Sandbox: fails one debit of a pending cycle charge. */
    public function sandboxFailCharge(string $paymentId): Result
    {
        return $this->call('sandboxFailCharge', params: ['payment_id' => $paymentId]);
    }

    /** Sandbox: the payer authorizes a recurrence. */
    public function sandboxApproveRecurrence(string $recurrenceId): Result
    {
        return $this->call('sandboxApproveRecurrence', params: ['recurrence_id' => $recurrenceId]);
    }

    /** Sandbox: the payer refuses a recurrence. */
    public function sandboxRejectRecurrence(string $recurrenceId): Result
    {
        return $this->call('sandboxRejectRecurrence', params: ['recurrence_id' => $recurrenceId]);
    }

    /** Sandbox: the payer cancels a recurrence. */
    public function sandboxCancelRecurrenceByPayer(string $recurrenceId): Result
    {
        return $this->call('sandboxCancelRecurrenceByPayer', params: ['recurrence_id' => $recurrenceId]);
    }

    /** Sandbox: creates the next cycle's charge of an approved recurrence now. */
    public function sandboxNextCycle(string $recurrenceId): Result
    {
        return $this->call('sandboxNextCycle', params: ['recurrence_id' => $recurrenceId]);
    }

    /** Sandbox: the payer's bank contests a paid charge (amount null: what is left; reason null: FRAUD). */
    public function sandboxDisputeCharge(string $paymentId, Amount|string|null $amount = null, ?string $reason = null): Result
    {
        return $this->call('sandboxDisputeCharge', params: ['payment_id' => $paymentId], body: self::object(['amount' => $amount, 'reason' => $reason]));
    }

    /** Sandbox: the PSP returns a paid charge under MED with no dispute before it. */
    public function sandboxMedReturn(string $paymentId, Amount|string|null $amount = null, ?string $natureza = null): Result
    {
        return $this->call('sandboxMedReturn', params: ['payment_id' => $paymentId], body: self::object(['amount' => $amount, 'natureza' => $natureza]));
    }

    /** Sandbox: decides an OPEN dispute as the PSP would ("released" or "returned"). */
    public function sandboxResolveDispute(string $disputeId, string $outcome, Amount|string|null $amount = null): Result
    {
        return $this->call('sandboxResolveDispute', params: ['dispute_id' => $disputeId], body: ['outcome' => $outcome, 'amount' => $amount]);
    }

    /** Sandbox: starts a scheduled payout now, as if its day had begun (reserved and sent, or failed for lack of balance). Not repeated after a network error. */
    public function sandboxRunSchedule(string $transactionId): Result
    {
        return $this->call('sandboxRunSchedule', params: ['transaction_id' => $transactionId]);
    }

    /** Sandbox: this client's clock. */
    public function sandboxGetClock(): Result
    {
        return $this->call('sandboxGetClock');
    }

    /** Sandbox: moves this client's clock forward by a Go duration ("36h"). Not repeated after a network error. */
    public function sandboxAdvanceClock(string $advance): Result
    {
        return $this->call('sandboxAdvanceClock', body: ['advance' => $advance]);
    }

    /** The webhook events about an id (payment_id, transaction_id, refund_id or recurrence_id). */
    public function listDeliveries(string $paymentId): Result
    {
        return $this->call('listDeliveries', query: ['payment_id' => $paymentId]);
    }

    /** Queues one more delivery of an event (same webhook-id); not repeated after a network error. */
    public function retryDelivery(string $eventId): Result
    {
        return $this->call('retryDelivery', params: ['event_id' => $eventId]);
    }

    /** Sends a signed webhook.test event to $url and answers the attempt. */
    public function testWebhook(string $url): Result
    {
        return $this->call('testWebhook', body: ['url' => $url]);
    }

    /** The payer's HTML page of a charge. */
    public function getPayPage(string $paymentId): string
    {
        return $this->call('getPayPage', params: ['payment_id' => $paymentId], text: true, accept: 'text/html')['text'];
    }

    /** The status of a charge, as the payer's page polls it. */
    public function getPayStatus(string $paymentId): Result
    {
        return $this->call('getPayStatus', params: ['payment_id' => $paymentId]);
    }

    /**
     * Yields every row of a list operation, following next_cursor from page to page:
     *
     *     foreach ($pixgate->paginate($pixgate->listTransactions(...), ['type' => 'cashout']) as $tx) { … }
     *
     * @param callable(array): Result $list
     * @return \Generator<int, array<string, mixed>>
     */
    public function paginate(callable $list, array $query = []): \Generator
    {
        $cursor = $query['cursor'] ?? null;
        while (true) {
            $page = $list(['cursor' => $cursor] + $query);
            yield from $page['data'];
            $cursor = $page['next_cursor'] ?? null;
            if ($cursor === null || $cursor === '') {
                return;
            }
        }
    }

    // ---- the machinery ----

    /**
     * Runs one operation with its retries. Any operation of Operations::ALL can be
     * called this way, including one this version has no method for yet.
     *
     * @param array<string, string> $params path parameters
     * @param array<string, mixed> $query
     */
    public function call(
        string $operationId,
        array $params = [],
        array $query = [],
        mixed $body = null,
        ?string $idempotencyKey = null,
        bool $text = false,
        string $accept = 'application/json',
    ): Result {
        if (!isset(Operations::ALL[$operationId])) {
            throw new \InvalidArgumentException("pixgate: unknown operation $operationId");
        }
        [$method, $template, $policy] = Operations::ALL[$operationId];
        if ($policy === Operations::BY_EXTERNAL_ID) {
            $policy = is_array($body) && ($body['external_id'] ?? '') !== '' ? Operations::CREATE : Operations::UNSAFE;
        }
        $path = preg_replace_callback('/\{([a-z_]+)\}/', static function (array $m) use ($params, $operationId): string {
            $v = $params[$m[1]] ?? '';
            if ($v === '') {
                throw new \InvalidArgumentException("pixgate: $operationId needs {$m[1]}");
            }
            return rawurlencode($v);
        }, $template);
        $q = [];
        foreach ($query as $k => $v) {
            if ($v instanceof \DateTimeInterface) {
                $v = Json::instant($v);
            }
            if ($v !== null && $v !== '') {
                $q[$k] = is_bool($v) ? ($v ? 'true' : 'false') : (string) $v;
            }
        }
        $url = $this->baseUrl . $path . ($q !== [] ? '?' . http_build_query($q, '', '&', PHP_QUERY_RFC3986) : '');
        $payload = $body === null ? null : Json::encode($body);
        $op = "$method $template";
        $failures = 0;
        for ($attempt = 1; ; $attempt++) {
            try {
                return $this->attempt($op, $method, $url, $payload, $idempotencyKey, $attempt, $text, $accept);
            } catch (ApiException|ConnectionException $e) {
                $retry = self::retryable($e, $policy);
                if (!$retry || $attempt > $this->maxRetries) {
                    if ($retry && $idempotencyKey !== null) {
                        throw new RetryException($op, $idempotencyKey, $attempt, $e);
                    }
                    throw $e;
                }
                if ($e instanceof ApiException && $e->status === 429) {
                    $wait = (float) $e->retryAfter;
                } else {
                    $d = min($this->backoffBase * 2 ** $failures, $this->backoffMax);
                    $wait = $d / 2 + (random_int(0, 1000) / 1000) * $d / 2;
                    $failures++;
                }
            }
            ($this->sleep)($wait);
        }
    }

    private static function retryable(PixgateException $e, string $policy): bool
    {
        if ($e instanceof ApiException) {
            return $e->status === 429
                || ($e->status >= 500 && $policy !== Operations::UNSAFE)
                || ($e->status === 409 && $policy === Operations::CREATE);
        }
        return $policy !== Operations::UNSAFE;
    }

    private static function object(array $fields): \stdClass|array
    {
        $fields = array_filter($fields, static fn ($v) => $v !== null);
        return $fields === [] ? new \stdClass() : $fields;
    }

    private function attempt(string $op, string $method, string $url, ?string $payload, ?string $key, int $attempt, bool $text, string $accept): Result
    {
        $headers = [
            'stpi: ' . $this->clientId,
            'stps: ' . $this->secret,
            'Accept: ' . $accept,
            'User-Agent: ' . $this->userAgent,
            'Expect:', // no 100-continue round trip
        ];
        if ($payload !== null) {
            $headers[] = 'Content-Type: application/json';
        }
        if ($key !== null) {
            $headers[] = 'Idempotency-Key: ' . $key;
        }
        $got = [];
        $ch = curl_init();
        curl_setopt_array($ch, [
            CURLOPT_URL => $url,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            // Never follow a redirect: the secret travels in a header, which
            // would go wherever Location points.
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_TIMEOUT_MS => (int) round($this->timeout * 1000),
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$got): int {
                $parts = explode(':', $line, 2);
                if (count($parts) === 2) {
                    $got[strtolower(trim($parts[0]))] = trim($parts[1]);
                } elseif (str_starts_with($line, 'HTTP/')) {
                    $got = []; // a new status line: headers of an interim answer are dropped
                }
                return strlen($line);
            },
        ]);
        if ($payload !== null) {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $payload);
        }
        $raw = curl_exec($ch);
        $errno = curl_errno($ch);
        $error = curl_error($ch);
        $status = (int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        curl_close($ch);
        if ($raw === false || $errno !== 0) {
            throw new ConnectionException(sprintf('pixgate: %s: %s', $op, $error !== '' ? $error : "curl error $errno"));
        }
        $meta = new ResponseMeta(
            $status,
            $got['x-request-id'] ?? '',
            (int) ($got['x-ratelimit-limit'] ?? 0),
            (int) ($got['x-ratelimit-remaining'] ?? 0),
            (int) ($got['x-ratelimit-reset'] ?? 0),
            ($got['idempotent-replayed'] ?? '') === 'true',
            $key,
            $attempt,
            $got,
        );
        if ($status >= 300 && $status < 400) {
            throw new RedirectException($op, $status, $got['location'] ?? null);
        }
        if ($status >= 400) {
            throw self::errorOf($status, (string) $raw, $meta);
        }
        if ($text) {
            return new Result(['text' => (string) $raw], $meta);
        }
        try {
            $decoded = $raw === '' ? [] : Json::decode((string) $raw);
        } catch (\JsonException|\InvalidArgumentException $e) {
            throw new PixgateException(sprintf('pixgate: %s: the answer is not the JSON expected: %s', $op, $e->getMessage()), 0, $e);
        }
        return new Result(is_array($decoded) ? $decoded : ['value' => $decoded], $meta);
    }

    private static function errorOf(int $status, string $raw, ResponseMeta $meta): ApiException
    {
        $message = $error = '';
        $details = [];
        $retryAfter = 0;
        $b = json_decode($raw, true);
        if (is_array($b)) {
            $message = is_string($b['message'] ?? null) ? $b['message'] : '';
            $error = is_string($b['error'] ?? null) ? $b['error'] : '';
            foreach (is_array($b['details'] ?? null) ? $b['details'] : [] as $d) {
                if (is_string($d['field'] ?? null) && is_string($d['issue'] ?? null)) {
                    $details[] = ['field' => $d['field'], 'issue' => $d['issue']];
                }
            }
            if (is_int($b['retryAfter'] ?? null) && $b['retryAfter'] > 0) {
                $retryAfter = $b['retryAfter'];
            }
        }
        $ra = $meta->headers['retry-after'] ?? '';
        if ($ra !== '' && ctype_digit($ra)) {
            $retryAfter = (int) $ra;
        } elseif ($ra !== '' && ($t = strtotime($ra)) !== false) {
            $retryAfter = max($t - time(), 0);
        }
        return ApiException::of($status, $message !== '' ? $message : "HTTP $status", $error, $details, $retryAfter, $meta);
    }
}
