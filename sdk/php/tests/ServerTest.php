<?php

declare(strict_types=1);

namespace Pixgate\Tests;

use PHPUnit\Framework\TestCase;
use Pixgate\Amount;
use Pixgate\Event\BatchEvent;
use Pixgate\Event\Event;
use Pixgate\Event\TransactionEvent;
use Pixgate\Exception\AuthenticationException;
use Pixgate\Exception\NotFoundException;
use Pixgate\Exception\RateLimitException;
use Pixgate\Exception\UnprocessableEntityException;
use Pixgate\Pixgate;
use Pixgate\Result;

/**
 * The scenarios every SDK runs against a real `pixgate serve` (sandbox,
 * SQLite), started by sdk/test.sh, which passes its address and the sandbox
 * client's credentials in PIXGATE_SDK_TEST_*: a charge paid through the
 * sandbox with its webhook verified, a payout, a scheduled payout cancelled
 * and one run now, a batch of payouts, a refund, a sub-account
 * acting with its own credentials and transfers to it and back, paging, an
 * idempotent replay, a 422 and a 429 read as typed errors. The tests run in
 * order; the payout, the refund and the transfers use the first test's paid
 * charge.
 */
final class ServerTest extends TestCase
{
    private const KEYS = ['URL', 'CLIENT_ID', 'CLIENT_SECRET', 'WEBHOOK_SECRET', 'LIMITED_URL', 'LIMITED_CLIENT_ID', 'LIMITED_CLIENT_SECRET'];
    private const PAYER = [
        'name' => 'Maria Souza', 'document' => '52998224725', 'phoneNumber' => '11987654321', 'email' => 'maria@example.com',
        'address' => ['street' => 'Rua das Flores', 'number' => '100', 'neighborhood' => 'Centro', 'city' => 'São Paulo', 'state' => 'SP', 'zipCode' => '01001000'],
    ];

    private static array $env = [];
    private static string $run = '';
    private static ?Pixgate $pixgate = null;
    private static ?Receiver $receiver = null;
    private static ?Result $paid = null;

    public static function setUpBeforeClass(): void
    {
        $missing = [];
        foreach (self::KEYS as $k) {
            self::$env[$k] = (string) getenv("PIXGATE_SDK_TEST_$k");
            if (self::$env[$k] === '') {
                $missing[] = $k;
            }
        }
        if ($missing !== []) {
            if (getenv('CI') === 'true') {
                throw new \RuntimeException('PIXGATE_SDK_TEST_* unset (' . implode(', ', $missing) . '): run bash sdk/test.sh');
            }
            return;
        }
        self::$run = bin2hex(random_bytes(4));
        self::$pixgate = new Pixgate(self::$env['URL'], self::$env['CLIENT_ID'], self::$env['CLIENT_SECRET']);
        self::$receiver = new Receiver(self::$env['WEBHOOK_SECRET']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$receiver?->close();
    }

    protected function setUp(): void
    {
        if (self::$pixgate === null) {
            self::markTestSkipped('no pixgate server: run bash sdk/test.sh');
        }
    }

    private static function chargeRequest(string $ext, string $amount = '25.90'): array
    {
        return [
            'amount' => $amount, 'external_id' => $ext, 'payer' => self::PAYER, 'payerQuestion' => 'Pedido SDK',
            'postbackUrl' => self::$receiver->url, 'products' => [['name' => 'Camiseta', 'quantity' => '1', 'price' => $amount]],
        ];
    }

    public function testChargePaidThroughTheSandboxWebhookVerified(): void
    {
        $p = self::$pixgate;
        $c = $p->createCharge(self::chargeRequest('php-' . self::$run . '-paid'));
        self::assertSame('PENDING', $c['status']);
        self::assertSame(2590, $c['amount']->centavos);
        self::assertSame(201, $c->response->status);
        self::assertSame('PAID', $p->sandboxPayCharge($c['payment_id'])['data']['status']);
        $e = self::$receiver->wait(fn (Event $x) => $x->event === 'pix.cashin.paid' && ($x->data['payment_id'] ?? '') === $c['payment_id']);
        self::assertInstanceOf(TransactionEvent::class, $e);
        self::assertSame('25.90', (string) $e->value);
        self::assertSame('PAID', $e->statusTransaction);
        $tx = $p->getTransaction(paymentId: $c['payment_id']);
        self::assertSame('PAID', $tx['data']['status']);
        self::assertSame(2590, $tx['data']['amount']->centavos);
        self::$paid = $c;
    }

    /** @depends testChargePaidThroughTheSandboxWebhookVerified */
    public function testPayoutSettledWebhookVerified(): void
    {
        $p = self::$pixgate;
        $key = Pixgate::newIdempotencyKey();
        $ext = 'php-' . self::$run . '-payout';
        $po = $p->createPayout([
            'amount' => '3.10', 'description' => 'Saque SDK', 'creditParty' => ['keyType' => 'EMAIL', 'key' => 'merchant@example.com'],
            'callbackUrl' => self::$receiver->url, 'external_id' => $ext,
        ], $key);
        self::assertSame(310, $po['amount']->centavos);
        self::assertSame($key, $po->response->idempotencyKey);
        $e = self::$receiver->wait(fn (Event $x) => $x->event === 'pix.cashout.paid' && ($x->data['transaction_id'] ?? '') === $po['transaction_id']);
        self::assertSame(310, $e->value->centavos);
        $tx = $p->getTransaction(externalId: $ext);
        self::assertSame(['cashout', 'PAID'], [$tx['data']['type'], $tx['data']['status']]);
    }

    /** The São Paulo date (UTC−3 all year) after today on the sandbox client's clock. */
    private static function tomorrowSP(): string
    {
        // To the second, UTC: PHP refuses more than six digits of fraction.
        $now = new \DateTimeImmutable(substr(self::$pixgate->sandboxGetClock()['data']['now'], 0, 19) . 'Z');
        return $now->setTimezone(new \DateTimeZone('-03:00'))->modify('+1 day')->format('Y-m-d');
    }

    public function testScheduledPayoutForTomorrowCancelledWebhookVerified(): void
    {
        $p = self::$pixgate;
        $date = self::tomorrowSP();
        $po = $p->createPayout([
            'amount' => '1.25', 'description' => 'Agendado SDK', 'creditParty' => ['keyType' => 'EMAIL', 'key' => 'merchant@example.com'],
            'callbackUrl' => self::$receiver->url, 'external_id' => 'php-' . self::$run . '-sched-cancel', 'scheduled_date' => $date,
        ]);
        self::assertSame(['SCHEDULED', $date], [$po['status'], $po['scheduled_date']]);
        $waiting = $p->getTransaction(paymentId: $po['transaction_id'])['data'];
        self::assertSame(['PENDING', $date], [$waiting['status'], $waiting['scheduled_date']]);
        $c = $p->cancelPayout($po['transaction_id']);
        self::assertSame('CANCELLED', $c['data']['status']);
        self::assertSame(125, $c['data']['amount']->centavos);
        $e = self::$receiver->wait(fn (Event $x) => $x->event === 'pix.cashout.cancelled' && ($x->data['transaction_id'] ?? '') === $po['transaction_id']);
        self::assertInstanceOf(TransactionEvent::class, $e);
        self::assertSame(['CANCELLED', 125], [$e->statusTransaction, $e->value->centavos]);
        try {
            $p->cancelPayout($po['transaction_id']);
            self::fail('a second cancel answered 2xx');
        } catch (UnprocessableEntityException $again) {
            self::assertSame(1, $again->response->attempts, 'a cancel is never repeated');
        }
    }

    /** @depends testChargePaidThroughTheSandboxWebhookVerified */
    public function testScheduledPayoutRunNowWithRunScheduleThenPaid(): void
    {
        $p = self::$pixgate;
        $po = $p->createPayout([
            'amount' => '1.40', 'description' => 'Agendado SDK', 'creditParty' => ['keyType' => 'EMAIL', 'key' => 'merchant@example.com'],
            'callbackUrl' => self::$receiver->url, 'external_id' => 'php-' . self::$run . '-sched-run', 'scheduled_date' => self::tomorrowSP(),
        ]);
        self::assertSame('SCHEDULED', $po['status']);
        self::assertSame('PENDING', $p->sandboxRunSchedule($po['transaction_id'])['data']['status']);
        $e = self::$receiver->wait(fn (Event $x) => $x->event === 'pix.cashout.paid' && ($x->data['transaction_id'] ?? '') === $po['transaction_id']);
        self::assertSame(140, $e->value->centavos);
        self::assertSame('PAID', $p->getTransaction(paymentId: $po['transaction_id'])['data']['status']);
        $this->expectException(UnprocessableEntityException::class);
        $p->sandboxRunSchedule($po['transaction_id']);
    }

    /** @depends testChargePaidThroughTheSandboxWebhookVerified */
    public function testBatchOfThreeOneRejectedReplayedAndReadBack(): void
    {
        $p = self::$pixgate;
        $run = self::$run;
        $item = static fn (int $n, string $key) => [
            'amount' => '1.05', 'description' => "Lote SDK $n", 'creditParty' => ['keyType' => 'EMAIL', 'key' => $key], 'external_id' => "php-$run-batch-$n",
        ];
        $req = ['external_id' => "php-$run-batch", 'callbackUrl' => self::$receiver->url, 'items' => [$item(1, 'a@example.com'), $item(2, 'not an e-mail'), $item(3, 'c@example.com')]];
        $b = $p->createPayoutBatch($req);
        self::assertSame(202, $b->response->status);
        $d = $b['data'];
        self::assertSame([3, 2, 1], [$d['total'], $d['accepted'], $d['rejected']]);
        self::assertSame(['PENDING', 'REJECTED', 'PENDING'], array_column($d['items'], 'status'));
        self::assertNull($d['items'][1]['transaction_id']);
        self::assertSame(400, $d['items'][1]['error']['statusCode']);
        $replay = $p->createPayoutBatch($req);
        self::assertTrue($replay->response->idempotentReplayed);
        self::assertSame($d['batch_id'], $replay['data']['batch_id']);
        $done = self::$receiver->wait(fn (Event $x) => $x->event === 'pix.batch.completed' && ($x->data['batch_id'] ?? '') === $d['batch_id']);
        self::assertInstanceOf(BatchEvent::class, $done);
        self::assertSame('COMPLETED', $done->statusTransaction);
        self::assertEquals(['PENDING' => 0, 'SCHEDULED' => 0, 'PAID' => 2, 'CANCELLED' => 0, 'REVERSED' => 0, 'REJECTED' => 1], $done->counts); // in any key order
        $got = $p->getPayoutBatch($d['batch_id'])['data'];
        self::assertSame($req['external_id'], $got['external_id']);
        self::assertSame(
            [["php-$run-batch-1", 'PAID'], ["php-$run-batch-2", 'REJECTED'], ["php-$run-batch-3", 'PAID']],
            array_map(static fn (array $x) => [$x['external_id'], $x['status']], $got['items']),
        );
        self::assertSame([2, 1], [$got['counts']['PAID'], $got['counts']['REJECTED']]);
        self::assertSame(105, $p->getTransaction(paymentId: $got['items'][0]['transaction_id'])['data']['amount']->centavos);
    }

    /** @depends testChargePaidThroughTheSandboxWebhookVerified */
    public function testRefundOfPartOfThePaidCharge(): void
    {
        $p = self::$pixgate;
        $pid = self::$paid['payment_id'];
        $r = $p->createRefund(['payment_id' => $pid, 'amount' => Amount::centavos(500), 'reason' => 'SDK test']);
        self::assertSame('PENDING', $r['status']);
        self::assertSame('5.00', (string) $r['amount']);
        $e = self::$receiver->wait(fn (Event $x) => $x->event === 'pix.refund.completed' && ($x->data['refund_id'] ?? '') === $r['refund_id']);
        self::assertSame(500, $e->value->centavos);
        self::assertSame('COMPLETED', $p->getRefund($r['refund_id'])['data']['status']);
        self::assertSame([$r['refund_id']], array_column($p->listRefunds(['payment_id' => $pid])['data'], 'refund_id'));
        self::assertSame(500, $p->getTransaction(paymentId: $pid)['data']['refunded_amount']->centavos);
    }

    public function testSubAccountWithItsOwnCredentialsTransfersToItAndBackListed(): void
    {
        self::assertNotNull(self::$paid, "needs the paid charge's balance");
        $p = self::$pixgate;
        $me = $p->getAccountMe()['data'];
        self::assertNull($me['parent_id']);
        $req = ['name' => 'Loja do João', 'document' => '52998224725', 'external_id' => 'php-' . self::$run . '-seller'];
        $created = $p->createAccount($req);
        self::assertSame(201, $created->response->status);
        $acct = $created['data'];
        self::assertSame($me['account_id'], $acct['parent_id']);
        self::assertStringStartsWith('sk_test_', $acct['client_secret']);
        self::assertStringStartsWith('whsec_', $acct['webhook_secret']);
        self::assertStringNotContainsString($acct['client_secret'], print_r($created, true), 'print_r of the answer hides the client secret');
        self::assertStringNotContainsString($acct['webhook_secret'], print_r($created, true), 'and the webhook secret');
        $again = $p->createAccount($req);
        self::assertTrue($again->response->idempotentReplayed);
        self::assertSame($acct['account_id'], $again['data']['account_id']);
        self::assertNull($again['data']['client_secret']);

        // The seller acts with its own credentials.
        $seller = new Pixgate(self::$env['URL'], $acct['client_id'], $acct['client_secret']);
        self::assertSame(['account_id' => $acct['account_id'], 'parent_id' => $me['account_id'], 'name' => 'Loja do João', 'document' => '52998224725'],
            $seller->getAccountMe()['data']);
        self::assertSame(0, $seller->getBalance()['data']['available_cents']);

        $key = Pixgate::newIdempotencyKey();
        $treq = ['to_account_id' => $acct['account_id'], 'amount' => '2.00', 'description' => 'Repasse SDK'];
        $t = $p->createTransfer($treq, $key);
        self::assertSame('COMPLETED', $t['data']['status']);
        self::assertSame(200, $t['data']['amount']->centavos);
        self::assertSame($me['account_id'], $t['data']['from_account_id']);
        self::assertSame($key, $t->response->idempotencyKey);
        $replay = $p->createTransfer($treq, $key);
        self::assertTrue($replay->response->idempotentReplayed);
        self::assertSame($t['data']['transfer_id'], $replay['data']['transfer_id']);
        self::assertSame(200, $seller->getBalance()['data']['available_cents'], 'the replay moved nothing');
        $back = $seller->createTransfer(['to_account_id' => $me['account_id'], 'amount' => Amount::centavos(75), 'external_id' => 'php-' . self::$run . '-back']);
        self::assertSame($me['account_id'], $back['data']['to_account_id']);
        self::assertSame(125, $seller->getBalance()['data']['available_cents']);
        self::assertSame(125, $p->getAccount($acct['account_id'])['data']['available_cents']);
        $rows = array_map(static fn (array $x) => [$x['direction'], $x['amount']->centavos, $x['counterparty_account_id']],
            $seller->listTransactions(['type' => 'transfer'])['data']);
        self::assertSame([['out', 75, $me['account_id']], ['in', 200, $me['account_id']]], $rows);
        try {
            $seller->createTransfer(['to_account_id' => $me['account_id'], 'amount' => '1000.00']);
            self::fail('no exception');
        } catch (UnprocessableEntityException $e) {
            self::assertTrue($e->isInsufficientBalance(), $e->apiMessage);
        }
        try {
            $seller->createAccount(['name' => 'Neta', 'document' => '52998224725']);
            self::fail('a sub-account made a sub-account');
        } catch (UnprocessableEntityException) {
        }

        // The parent lists its sub-accounts page by page, newest first.
        $second = $p->createAccount(['name' => 'Loja da Ana', 'document' => '11222333000181', 'external_id' => 'php-' . self::$run . '-seller-2'])['data'];
        $pages = 0;
        $counting = function (array $q) use ($p, &$pages): Result {
            $pages++;
            return $p->listAccounts($q);
        };
        $listed = [];
        foreach ($p->paginate($counting, ['limit' => 1]) as $a) {
            $listed[] = $a['account_id'];
        }
        self::assertGreaterThanOrEqual(2, $pages);
        self::assertSame([$second['account_id'], $acct['account_id']], array_slice($listed, 0, 2));
        try {
            $seller->getAccount($second['account_id']);
            self::fail('a sibling was found');
        } catch (NotFoundException) {
        }

        // A new secret: the old one stops at once.
        $rotated = $p->rotateAccountSecret($acct['account_id']);
        $newSecret = $rotated['data']['client_secret'];
        self::assertNotSame($acct['client_secret'], $newSecret);
        self::assertStringNotContainsString($newSecret, print_r($rotated, true));
        try {
            $seller->getBalance();
            self::fail('the old secret still works');
        } catch (AuthenticationException) {
        }
        $seller = new Pixgate(self::$env['URL'], $acct['client_id'], $newSecret);
        self::assertSame(125, $seller->getBalance()['data']['available_cents']);
    }

    public function testPagingFollowsNextCursorOverEveryPage(): void
    {
        $p = self::$pixgate;
        $ids = [];
        for ($i = 0; $i < 5; $i++) {
            $ids[] = $p->createCharge(self::chargeRequest('php-' . self::$run . "-page-$i", '1.0' . ($i + 1)))['payment_id'];
        }
        $first = $p->listTransactions(['type' => 'cashin', 'limit' => 2]);
        self::assertCount(2, $first['data']);
        self::assertNotEmpty($first['next_cursor']);
        $pages = 0;
        $counting = function (array $q) use ($p, &$pages): Result {
            $pages++;
            return $p->listTransactions($q);
        };
        $seen = [];
        foreach ($p->paginate($counting, ['type' => 'cashin', 'limit' => 2]) as $tx) {
            $seen[] = $tx['payment_id'];
        }
        self::assertGreaterThanOrEqual(3, $pages);
        self::assertSame(count($seen), count(array_unique($seen)), 'no row twice');
        foreach ($ids as $id) {
            self::assertContains($id, $seen);
        }
        self::assertSame(array_reverse($ids), array_slice($seen, 0, 5), "newest first");
    }

    public function testIdempotentReplay(): void
    {
        $p = self::$pixgate;
        $key = Pixgate::newIdempotencyKey();
        $req = self::chargeRequest('php-' . self::$run . '-replay', '7.77');
        $a = $p->createCharge($req, $key);
        $b = $p->createCharge($req, $key);
        self::assertFalse($a->response->idempotentReplayed);
        self::assertTrue($b->response->idempotentReplayed);
        self::assertSame($a['payment_id'], $b['payment_id']);
        self::assertSame(777, $b['amount']->centavos);
    }

    public function testA422ReadAsATypedError(): void
    {
        $p = self::$pixgate;
        $key = Pixgate::newIdempotencyKey();
        $p->createCharge(self::chargeRequest('php-' . self::$run . '-mismatch', '2.00'), $key);
        try {
            $p->createCharge(self::chargeRequest('php-' . self::$run . '-mismatch', '2.01'), $key);
            self::fail('no 422');
        } catch (UnprocessableEntityException $e) {
            self::assertSame(422, $e->status);
            self::assertTrue($e->isIdempotencyMismatch(), $e->apiMessage);
            self::assertSame('Unprocessable Entity', $e->error);
        }
        try {
            $p->createPayout(['amount' => '999999', 'description' => 'too much', 'creditParty' => ['keyType' => 'EMAIL', 'key' => 'x@example.com'], 'callbackUrl' => self::$receiver->url]);
            self::fail('no 422');
        } catch (UnprocessableEntityException $e) {
            self::assertTrue($e->isInsufficientBalance(), $e->apiMessage);
        }
        $this->expectException(NotFoundException::class);
        $p->getRefund('00000000-0000-4000-8000-000000000000');
    }

    public function testA429ReadAsATypedError(): void
    {
        $limited = new Pixgate(self::$env['LIMITED_URL'], self::$env['LIMITED_CLIENT_ID'], self::$env['LIMITED_CLIENT_SECRET'], maxRetries: 0);
        $err = null;
        for ($i = 0; $i < 50 && $err === null; $i++) {
            try {
                $limited->getBalance();
            } catch (RateLimitException $e) {
                $err = $e;
            }
        }
        self::assertNotNull($err, 'no 429 in 50 requests');
        self::assertSame(429, $err->status);
        self::assertSame('Rate limit exceeded', $err->apiMessage);
        self::assertGreaterThan(0, $err->retryAfter);
        self::assertSame(0, $err->response->rateLimitRemaining);
    }
}
