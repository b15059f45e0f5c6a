<?php

declare(strict_types=1);

namespace Pixgate\Tests;

use PHPUnit\Framework\TestCase;
use Pixgate\Amount;
use Pixgate\Event\BatchEvent;
use Pixgate\Event\DisputeEvent;
use Pixgate\Event\RecurrenceEvent;
use Pixgate\Event\SplitEvent;
use Pixgate\Event\TestEvent;
use Pixgate\Event\TransactionEvent;
use Pixgate\Event\UnknownEvent;
use Pixgate\Exception\ConnectionException;
use Pixgate\Exception\RateLimitException;
use Pixgate\Exception\RedirectException;
use Pixgate\Exception\RetryException;
use Pixgate\Exception\ServerException;
use Pixgate\Exception\WebhookVerificationException;
use Pixgate\Json;
use Pixgate\Percent;
use Pixgate\Pixgate;
use Pixgate\Webhook;

/**
 * Tests of the SDK's own parts that need no pixgate server: exact money, the
 * Standard Webhooks test vector, and the transport (retries, Retry-After,
 * redirects) against tiny `php -S` servers that misbehave on purpose.
 */
final class UnitTest extends TestCase
{
    // The Standard Webhooks reference test vector (the same as webhooksig's).
    private const VEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    private const VEC_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    private const VEC_TS = 1614265330;
    private const VEC_BODY = '{"test": 2432232314}';
    private const VEC_SIG = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
    private const OTHER_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
    private const CHARGE_REQ = ['amount' => '10.50', 'external_id' => 'e', 'payer' => [], 'payerQuestion' => 'q', 'postbackUrl' => 'http://x', 'products' => []];

    /** @var list<LocalServer> */
    private array $servers = [];

    protected function tearDown(): void
    {
        foreach ($this->servers as $s) {
            $s->stop();
        }
        $this->servers = [];
    }

    private function serve(string $scenario, array $env = []): LocalServer
    {
        return $this->servers[] = new LocalServer($scenario, $env);
    }

    private static function vecHeaders(string $sig = self::VEC_SIG): array
    {
        return ['Webhook-Id' => self::VEC_ID, 'webhook-timestamp' => (string) self::VEC_TS, 'webhook-signature' => $sig];
    }

    public function testAmountsAreExact(): void
    {
        self::assertSame(1050, Amount::reais('10.50')->centavos);
        self::assertSame(10, Amount::reais('0.1')->centavos);
        self::assertSame(150, Amount::reais('1.500')->centavos);
        self::assertSame('25.90', (string) Amount::centavos(2590));
        self::assertSame('10.5', Amount::centavos(1050)->toJsonNumber());
        self::assertSame('10', Amount::centavos(1000)->toJsonNumber());
        self::assertSame('-0.05', (string) Amount::centavos(-5));
        self::assertSame(250, Percent::of('2.5')->hundredths);
        foreach (['1.005', '1,50', '', 'abc'] as $bad) {
            try {
                Amount::reais($bad);
                self::fail("accepted $bad");
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testEncodeWritesNumbersFromTextAndRefusesFloats(): void
    {
        self::assertSame('{"amount":10.5,"products":[{"price":0.05}],"n":3}', Json::encode(['amount' => '10.50', 'products' => [['price' => Amount::centavos(5)]], 'n' => 3]));
        self::assertSame('{"due":{"fine":{"percent":2}}}', Json::encode(['due' => ['fine' => ['percent' => '2']]]));
        foreach ([10.5, 10, true] as $bad) {
            try {
                Json::encode(['amount' => $bad]);
                self::fail('accepted ' . var_export($bad, true));
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
        $this->expectException(\InvalidArgumentException::class);
        Json::encode(['products' => [['price' => 0.1]]]);
    }

    public function testDecodeReadsMoneyFromTheText(): void
    {
        $v = Json::decode('{"amount": 0.1, "note": "\"amount\": 1.23", "tax":1e2, "list":[{"price":12345678.91}], "paid_amount": null, "n": 0.5, "img": "' . str_repeat('QUJD', 50000) . '"}');
        self::assertInstanceOf(Amount::class, $v['amount']);
        self::assertSame(10, $v['amount']->centavos);
        self::assertSame('"amount": 1.23', $v['note']);
        self::assertSame(10000, $v['tax']->centavos);
        self::assertSame(1234567891, $v['list'][0]['price']->centavos);
        self::assertNull($v['paid_amount']);
        self::assertSame(0.5, $v['n']);
        self::assertSame(200000, strlen($v['img']));
        $this->expectExceptionMessage('more than two decimals');
        Json::decode('{"amount": 1.001}');
    }

    public function testStandardWebhooksTestVector(): void
    {
        Webhook::verify(self::VEC_SECRET, self::vecHeaders(), self::VEC_BODY, now: self::VEC_TS);
        Webhook::verify(self::VEC_SECRET, self::vecHeaders('v2,abc ' . self::VEC_SIG), self::VEC_BODY, now: self::VEC_TS + 299);
        Webhook::verify([self::OTHER_SECRET, self::VEC_SECRET], self::vecHeaders(), self::VEC_BODY, now: self::VEC_TS);
        self::addToAssertionCount(3);
    }

    public function testRefusesWhatDoesNotVerify(): void
    {
        $cases = [
            'changed body' => fn () => Webhook::verify(self::VEC_SECRET, self::vecHeaders(), self::VEC_BODY . ' ', now: self::VEC_TS),
            'other secret' => fn () => Webhook::verify(self::OTHER_SECRET, self::vecHeaders(), self::VEC_BODY, now: self::VEC_TS),
            'stale' => fn () => Webhook::verify(self::VEC_SECRET, self::vecHeaders(), self::VEC_BODY, now: self::VEC_TS + 301),
            'v2 only' => fn () => Webhook::verify(self::VEC_SECRET, self::vecHeaders(str_replace('v1,', 'v2,', self::VEC_SIG)), self::VEC_BODY, now: self::VEC_TS),
            'no headers' => fn () => Webhook::verify(self::VEC_SECRET, ['webhook-id' => self::VEC_ID], self::VEC_BODY, now: self::VEC_TS),
            'not an event' => fn () => Webhook::constructEvent(self::VEC_SECRET, self::vecHeaders(), self::VEC_BODY, now: self::VEC_TS),
        ];
        foreach ($cases as $name => $f) {
            try {
                $f();
                self::fail("$name verified");
            } catch (WebhookVerificationException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testParseTypesEveryEventFamily(): void
    {
        $e = Webhook::parse('{"id":"e","event":"pix.cashin.paid","value":25.9,"tax":0.5,"payment_id":"p"}');
        self::assertInstanceOf(TransactionEvent::class, $e);
        self::assertSame(2590, $e->value->centavos);
        self::assertInstanceOf(RecurrenceEvent::class, Webhook::parse('{"id":"e","event":"pix.recurrence.charge_failed","attempts":4}'));
        $d = Webhook::parse('{"id":"e","event":"pix.dispute.closed","amount":3.3,"returned_amount":0}');
        self::assertInstanceOf(DisputeEvent::class, $d);
        self::assertSame(330, $d->amount->centavos);
        $c = Webhook::parse('{"id":"e","event":"pix.cashout.cancelled","value":1.25,"statusTransaction":"CANCELLED"}');
        self::assertInstanceOf(TransactionEvent::class, $c);
        self::assertSame(125, $c->value->centavos);
        $b = Webhook::parse('{"id":"e","event":"pix.batch.completed","batch_id":"b","total":3,"accepted":2,"rejected":1,"counts":{"PAID":2,"REJECTED":1}}');
        self::assertInstanceOf(BatchEvent::class, $b);
        self::assertSame(['b', 3, 1, 2], [$b->batchId, $b->total, $b->rejected, $b->counts['PAID']]);
        $s = Webhook::parse('{"id":"e","event":"pix.split.received","type":"split","payment_id":"p","source_payment_id":"c","value":9.8}');
        self::assertInstanceOf(SplitEvent::class, $s);
        self::assertSame(['p', 'c', 980], [$s->paymentId, $s->sourcePaymentId, $s->value->centavos]);
        $ps = Webhook::parse('{"id":"e","event":"pix.cashin.paid","value":20,"splits":[{"account_id":"a","amount":9.8},{"account_id":"b","amount":null}]}');
        self::assertInstanceOf(TransactionEvent::class, $ps);
        self::assertSame(980, $ps->splits[0]['amount']->centavos);
        self::assertNull($ps->splits[1]['amount']);
        self::assertInstanceOf(TestEvent::class, Webhook::parse('{"id":"e","event":"webhook.test"}'));
        self::assertInstanceOf(UnknownEvent::class, Webhook::parse('{"id":"e","event":"pix.split.new"}'));
    }

    public function testCreationKeepsItsKeyAcrossRetries(): void
    {
        $s = $this->serve('flaky-create');
        $p = new Pixgate($s->url, 'id', 'sk', backoffBase: 0.001);
        $c = $p->createCharge(self::CHARGE_REQ);
        $keys = array_column($s->requests(), 'idempotency-key');
        self::assertCount(3, $keys);
        self::assertMatchesRegularExpression('/^[0-9a-f]{32}$/', $keys[0]);
        self::assertSame([$keys[0], $keys[0], $keys[0]], $keys);
        self::assertSame(3, $c->response->attempts);
        self::assertSame($keys[0], $c->response->idempotencyKey);
        self::assertSame(1050, $c['amount']->centavos);
    }

    public function testRetriesRunOutIntoARetryExceptionAndUnsafeCallsAreNotRetried(): void
    {
        $s = $this->serve('always-500');
        $p = new Pixgate($s->url, 'id', 'sk', maxRetries: 2, backoffBase: 0.001);
        try {
            $p->createPayout(['amount' => '1', 'description' => 'd', 'creditParty' => ['keyType' => 'EVP', 'key' => 'k'], 'callbackUrl' => 'http://x'], 'k-1');
            self::fail('no exception');
        } catch (RetryException $e) {
            self::assertSame('k-1', $e->idempotencyKey);
            self::assertSame(3, $e->attempts);
            self::assertInstanceOf(ServerException::class, $e->getPrevious());
        }
        self::assertCount(3, $s->requests());
        try {
            $p->retryDelivery('evt');
            self::fail('no exception');
        } catch (ServerException) {
            self::assertCount(4, $s->requests());
        }
    }

    public function testASubAccountIsRetriedOnlyWithAnExternalIdAndItsSecretsAreNotShown(): void
    {
        $s = $this->serve('flaky-account');
        $p = new Pixgate($s->url, 'id', 'sk', backoffBase: 0.001);
        $a = $p->createAccount(['name' => 'n', 'document' => '52998224725', 'external_id' => 's-1']);
        self::assertSame(2, $a->response->attempts);
        self::assertSame('sk_test_s', $a['data']['client_secret']);
        self::assertStringNotContainsString('sk_test_s', print_r($a, true));
        ob_start();
        var_dump($a);
        self::assertStringNotContainsString('whsec_w', (string) ob_get_clean());
        self::assertStringContainsString('sk_test_s', json_encode($a), 'serializing on purpose keeps the secret');
        self::assertSame([null, null], array_map(static fn (array $h) => $h['idempotency-key'] ?? null, $s->requests()));
        try {
            $p->createAccount(['name' => 'n', 'document' => '52998224725']);
            self::fail('no exception');
        } catch (ConnectionException) {
            self::assertCount(3, $s->requests(), 'without external_id a repeat would make a second account');
        }
    }

    public function testA429IsWaitedOutForRetryAfter(): void
    {
        $s = $this->serve('429-then-ok');
        $t0 = microtime(true);
        $b = (new Pixgate($s->url, 'id', 'sk'))->getBalance();
        self::assertGreaterThanOrEqual(0.95, microtime(true) - $t0);
        self::assertSame(2, $b->response->attempts);
        $s2 = $this->serve('429-then-ok');
        try {
            (new Pixgate($s2->url, 'id', 'sk', maxRetries: 0))->getBalance();
            self::fail('no exception');
        } catch (RateLimitException $e) {
            self::assertSame(1, $e->retryAfter);
            self::assertSame(429, $e->status);
        }
    }

    public function testTheSecretIsNeverSentAfterARedirectNorShown(): void
    {
        $other = $this->serve('record');
        $base = $this->serve('redirect', ['TARGET' => $other->url]);
        $p = new Pixgate($base->url, 'id', 'sk_test_SECRET');
        try {
            $p->getBalance();
            self::fail('no exception');
        } catch (RedirectException $e) {
            self::assertSame(307, $e->status);
        }
        try {
            $p->createCharge(self::CHARGE_REQ);
            self::fail('no exception');
        } catch (RedirectException $e2) {
            self::assertSame(307, $e2->status);
        }
        self::assertSame([], $other->requests());
        ob_start();
        var_dump($p);
        print_r($p);
        $dumped = ob_get_clean();
        foreach ([$dumped, (string) $e, (string) $e2, print_r($e, true)] as $shown) {
            self::assertStringNotContainsString('sk_test_SECRET', $shown);
        }
    }
}
