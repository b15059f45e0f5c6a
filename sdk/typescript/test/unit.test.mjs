// Tests of the SDK's own parts that need no pixgate server: exact money,
// the Standard Webhooks test vector, and the transport's behaviour (retries,
// Retry-After, redirects) against tiny local HTTP servers that misbehave on
// purpose.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { inspect } from "node:util";
import {
  Amount, Percent, Pixgate, decodeJSON, encodeJSON, verifyWebhook, constructEvent, parseEvent,
  ConnectionError, RedirectError, RetryError, ServerError, RateLimitError, WebhookVerificationError,
} from "../dist/esm/index.js";

test("Amount is exact: reais text and centavos, never a float", () => {
  assert.equal(Amount.reais("10.50").centavos, 1050);
  assert.equal(Amount.reais("0.1").centavos, 10);
  assert.equal(Amount.reais("1.500").centavos, 150);
  assert.equal(Amount.reais("1000000").centavos, 100000000);
  assert.equal(Amount.centavos(2590).toString(), "25.90");
  assert.equal(Amount.centavos(1050).toJSONNumber(), "10.5");
  assert.equal(Amount.centavos(1000).toJSONNumber(), "10");
  assert.equal(Amount.centavos(-5).toString(), "-0.05");
  assert.throws(() => Amount.reais("1.005"), /more than two decimals/);
  assert.throws(() => Amount.reais("1,50"), TypeError);
  assert.throws(() => Amount.reais(10.5), TypeError);
  assert.throws(() => Amount.centavos(10.5), TypeError);
  assert.equal(Percent.of("2.5").hundredths, 250);
});

test("encodeJSON writes money as JSON numbers from text and refuses floats", () => {
  assert.equal(encodeJSON({ amount: "10.50", products: [{ price: Amount.centavos(5) }], n: 3 }), '{"amount":10.5,"products":[{"price":0.05}],"n":3}');
  assert.equal(encodeJSON({ due: { fine: { percent: "2" } } }), '{"due":{"fine":{"percent":2}}}');
  assert.throws(() => encodeJSON({ amount: 10.5 }), /never|not a number/);
  assert.throws(() => encodeJSON({ products: [{ price: 0.1 }] }), TypeError);
});

test("decodeJSON reads money from the text, never through a float", () => {
  const v = decodeJSON('{"amount": 0.1, "note": "\\"amount\\": 1.23", "tax":1e2, "list":[{"price":12345678.91}], "paid_amount": null, "n": 0.5}');
  assert.ok(v.amount instanceof Amount);
  assert.equal(v.amount.centavos, 10);
  assert.equal(v.note, '"amount": 1.23');
  assert.equal(v.tax.centavos, 10000);
  assert.equal(v.list[0].price.centavos, 1234567891);
  assert.equal(v.paid_amount, null);
  assert.equal(v.n, 0.5);
  assert.throws(() => decodeJSON('{"amount": 1.001}'), /more than two decimals/);
});

// The Standard Webhooks reference test vector (the same as webhooksig's).
const vec = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  ts: 1614265330,
  body: '{"test": 2432232314}',
  sig: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const vecHeaders = (sig = vec.sig, ts = vec.ts) => ({ "webhook-id": vec.id, "webhook-timestamp": String(ts), "webhook-signature": sig });

test("verifyWebhook accepts the Standard Webhooks test vector", () => {
  verifyWebhook(vec.secret, vecHeaders(), vec.body, { nowSeconds: vec.ts });
  verifyWebhook(vec.secret, new Headers(vecHeaders("v2,abc " + vec.sig)), Buffer.from(vec.body), { nowSeconds: vec.ts + 299 });
  verifyWebhook(["whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", vec.secret], vecHeaders(), vec.body, { nowSeconds: vec.ts });
});

test("verifyWebhook refuses a changed body, another secret, a stale timestamp, missing headers", () => {
  const bad = (f) => assert.throws(f, WebhookVerificationError);
  bad(() => verifyWebhook(vec.secret, vecHeaders(), vec.body + " ", { nowSeconds: vec.ts }));
  bad(() => verifyWebhook("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", vecHeaders(), vec.body, { nowSeconds: vec.ts }));
  bad(() => verifyWebhook(vec.secret, vecHeaders(), vec.body, { nowSeconds: vec.ts + 301 }));
  bad(() => verifyWebhook(vec.secret, vecHeaders(vec.sig.replace("v1,", "v2,")), vec.body, { nowSeconds: vec.ts }));
  bad(() => verifyWebhook(vec.secret, { "webhook-id": vec.id }, vec.body, { nowSeconds: vec.ts }));
  bad(() => constructEvent(vec.secret, vecHeaders(), vec.body, { nowSeconds: vec.ts })); // signed, but not an event
});

test("parseEvent types every event family", () => {
  assert.equal(parseEvent('{"id":"e","event":"pix.cashin.paid","value":25.9,"tax":0.5,"occurred_at":"x"}').kind, "transaction");
  const r = parseEvent('{"id":"e","event":"pix.recurrence.charge_failed","attempts":4}');
  assert.equal(r.kind, "recurrence");
  const d = parseEvent('{"id":"e","event":"pix.dispute.closed","amount":3.3,"returned_amount":0}');
  assert.equal(d.kind, "dispute");
  assert.equal(d.amount.centavos, 330);
  assert.equal(parseEvent('{"id":"e","event":"pix.cashout.cancelled","value":1.25,"tax":0}').kind, "transaction");
  const b = parseEvent('{"id":"e","event":"pix.batch.completed","batch_id":"b","total":3,"accepted":2,"rejected":1,"counts":{"PAID":2,"REJECTED":1}}');
  assert.equal(b.kind, "batch");
  assert.equal(b.counts.PAID, 2);
  const s = parseEvent('{"id":"e","event":"pix.split.received","type":"split","payment_id":"p","source_payment_id":"c","value":9.8}');
  assert.equal(s.kind, "split");
  assert.equal(s.value.centavos, 980);
  const paidSplit = parseEvent('{"id":"e","event":"pix.cashin.paid","value":20,"splits":[{"account_id":"a","amount":9.8},{"account_id":"b","amount":null}]}');
  assert.deepEqual(paidSplit.splits.map((x) => x.amount?.centavos ?? null), [980, null]);
  assert.equal(parseEvent('{"id":"e","event":"webhook.test"}').kind, "test");
  assert.equal(parseEvent('{"id":"e","event":"pix.split.new"}').kind, "unknown");
});

/** listen starts a local HTTP server for one test and returns its origin. */
async function listen(t, handler) {
  const srv = createServer(handler);
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => srv.close(r)));
  return `http://127.0.0.1:${srv.address().port}`;
}

const charge = '{"payment_id":"p","external_id":"e","amount":10.5,"qrcode":"q","qrcode_image":"i","status":"PENDING","expires_at":"x"}';
const chargeReq = { amount: "10.50", external_id: "e", payer: {}, payerQuestion: "q", postbackUrl: "http://x", products: [] };

test("a creation keeps its Idempotency-Key across the SDK's retries", async (t) => {
  const keys = [];
  const base = await listen(t, (req, res) => {
    keys.push(req.headers["idempotency-key"]);
    req.resume();
    if (keys.length === 1) return res.writeHead(503, { "content-type": "application/json" }).end('{"statusCode":503,"message":"Service temporarily unavailable","error":"Service Unavailable"}');
    if (keys.length === 2) return req.socket.destroy(); // no answer at all
    res.writeHead(201, { "content-type": "application/json" }).end(charge);
  });
  const p = new Pixgate({ baseUrl: base, clientId: "id", clientSecret: "sk", backoffBaseMs: 1 });
  const c = await p.createCharge(chargeReq);
  assert.equal(keys.length, 3);
  assert.match(keys[0], /^[0-9a-f]{32}$/);
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  assert.equal(c.lastResponse.attempts, 3);
  assert.equal(c.lastResponse.idempotencyKey, keys[0]);
  assert.equal(c.amount.centavos, 1050);
});

test("retries that run out give a RetryError with the key; unsafe calls are not retried", async (t) => {
  let n = 0;
  const base = await listen(t, (req, res) => {
    n++;
    req.resume();
    res.writeHead(500, { "content-type": "application/json" }).end('{"statusCode":500,"message":"Internal server error","error":"Internal Server Error"}');
  });
  const p = new Pixgate({ baseUrl: base, clientId: "id", clientSecret: "sk", backoffBaseMs: 1, maxRetries: 2 });
  const err = await p.createPayout({ amount: "1", description: "d", creditParty: { keyType: "EVP", key: "k" }, callbackUrl: "http://x" }, { idempotencyKey: "k-1" }).catch((e) => e);
  assert.ok(err instanceof RetryError, String(err));
  assert.equal(err.idempotencyKey, "k-1");
  assert.equal(err.attempts, 3);
  assert.ok(err.lastError instanceof ServerError);
  assert.equal(n, 3);
  n = 0;
  await assert.rejects(p.retryDelivery("evt"), ServerError);
  assert.equal(n, 1);
});

test("a sub-account's creation is retried only with an external_id, and sends no Idempotency-Key", async (t) => {
  const seen = [];
  const base = await listen(t, (req, res) => {
    seen.push(req.headers["idempotency-key"]);
    req.resume();
    if (seen.length % 2 === 1) return req.socket.destroy(); // every other request: no answer at all
    res.writeHead(201, { "content-type": "application/json" }).end('{"statusCode":201,"data":{"account_id":"a","client_id":"c","client_secret":"sk_test_s","webhook_secret":"whsec_w","name":"n","document":"52998224725","external_id":"s-1","parent_id":"p"}}');
  });
  const p = new Pixgate({ baseUrl: base, clientId: "id", clientSecret: "sk", backoffBaseMs: 1 });
  const a = await p.createAccount({ name: "n", document: "52998224725", external_id: "s-1" });
  assert.equal(a.lastResponse.attempts, 2);
  assert.equal(a.data.client_secret, "sk_test_s");
  assert.ok(!inspect(a, { depth: 5 }).includes("sk_test_s") && !inspect(a.data).includes("whsec_w"), inspect(a, { depth: 5 }));
  assert.ok(JSON.stringify(a.data).includes("sk_test_s"), "serializing on purpose keeps the secret");
  assert.deepEqual(seen, [undefined, undefined]);
  seen.length = 0;
  await assert.rejects(p.createAccount({ name: "n", document: "52998224725" }), ConnectionError);
  assert.equal(seen.length, 1, "without external_id a repeat would make a second account");
});

test("a 429 is waited out for Retry-After, then retried", async (t) => {
  let n = 0;
  const base = await listen(t, (req, res) => {
    n++;
    if (n === 1) return res.writeHead(429, { "retry-after": "1", "content-type": "application/json" }).end('{"statusCode":429,"message":"Rate limit exceeded","error":"Too Many Requests","retryAfter":1}');
    res.writeHead(200, { "content-type": "application/json" }).end('{"statusCode":200,"message":"ok","data":{"available_cents":1,"pending_cents":0,"blocked_cents":0,"debt_cents":0,"currency":"BRL"},"timestamp":"x"}');
  });
  const p = new Pixgate({ baseUrl: base, clientId: "id", clientSecret: "sk" });
  const t0 = Date.now();
  const b = await p.getBalance();
  assert.ok(Date.now() - t0 >= 950, `waited only ${Date.now() - t0} ms`);
  assert.equal(b.lastResponse.attempts, 2);
  const p0 = new Pixgate({ baseUrl: base, clientId: "id", clientSecret: "sk", maxRetries: 0 });
  n = 0;
  const e = await p0.getBalance().catch((x) => x);
  assert.ok(e instanceof RateLimitError);
  assert.equal(e.retryAfterSeconds, 1);
});

test("the secret is never sent after a redirect to another origin, nor shown", async (t) => {
  const seen = [];
  const other = await listen(t, (req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  const base = await listen(t, (req, res) => {
    res.writeHead(307, { location: `${other}/api/v1/wallet/balance` }).end();
  });
  const p = new Pixgate({ baseUrl: base, clientId: "id", clientSecret: "sk_test_SECRET" });
  const e = await p.getBalance().catch((x) => x);
  assert.ok(e instanceof RedirectError, String(e));
  assert.equal(e.status, 307);
  const e2 = await p.createCharge(chargeReq).catch((x) => x);
  assert.ok(e2 instanceof RedirectError, String(e2));
  assert.equal(seen.length, 0);
  for (const shown of [inspect(p, { showHidden: true, depth: 5 }), JSON.stringify(p), String(e), inspect(e, { depth: 5 })]) {
    assert.ok(!shown.includes("sk_test_SECRET"), shown);
  }
});
