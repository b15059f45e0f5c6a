// The scenarios every SDK runs against a real `pixgate serve` (sandbox,
// SQLite), started by sdk/test.sh, which passes its address and the sandbox
// client's credentials in PIXGATE_SDK_TEST_*: a charge paid through the
// sandbox with its webhook verified, a payout, a scheduled payout cancelled
// and one run now, a batch of payouts, a refund, a sub-account acting
// with its own credentials and transfers to it and back, paging, an
// idempotent replay, a 422 and a 429 read as typed errors.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { inspect } from "node:util";
import { randomBytes } from "node:crypto";
import {
  Amount, Pixgate, constructEvent, newIdempotencyKey, RateLimitError, UnprocessableEntityError, NotFoundError, AuthenticationError,
} from "../dist/esm/index.js";

const env = process.env;
const missing = ["URL", "CLIENT_ID", "CLIENT_SECRET", "WEBHOOK_SECRET", "LIMITED_URL", "LIMITED_CLIENT_ID", "LIMITED_CLIENT_SECRET"]
  .filter((k) => !env[`PIXGATE_SDK_TEST_${k}`]);
if (missing.length && env.CI === "true") throw new Error(`PIXGATE_SDK_TEST_* unset (${missing.join(", ")}): run bash sdk/test.sh`);
const skip = missing.length ? "no pixgate server: run bash sdk/test.sh" : false;

const run = randomBytes(4).toString("hex");
const payer = {
  name: "Maria Souza", document: "52998224725", phoneNumber: "11987654321", email: "maria@example.com",
  address: { street: "Rua das Flores", number: "100", neighborhood: "Centro", city: "São Paulo", state: "SP", zipCode: "01001000" },
};
let pixgate;
let receiver;
let hookUrl;
const events = []; // verified events, in arrival order
const waiters = [];

before(async () => {
  if (skip) return;
  pixgate = new Pixgate({ baseUrl: env.PIXGATE_SDK_TEST_URL, clientId: env.PIXGATE_SDK_TEST_CLIENT_ID, clientSecret: env.PIXGATE_SDK_TEST_CLIENT_SECRET });
  // A tiny webhook receiver: it verifies each delivery and answers 401 to a bad signature.
  receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        const e = constructEvent(env.PIXGATE_SDK_TEST_WEBHOOK_SECRET, req.headers, Buffer.concat(chunks));
        events.push(e);
        for (const w of waiters.splice(0)) w();
        res.writeHead(204).end();
      } catch {
        res.writeHead(401).end();
      }
    });
  });
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${receiver.address().port}/webhooks/pix`;
});
after(() => receiver && new Promise((r) => receiver.close(r)));

/** waitEvent waits (at most 15 s) for a verified event matching pred. */
async function waitEvent(pred) {
  const deadline = Date.now() + 15000;
  for (;;) {
    const e = events.find(pred);
    if (e) return e;
    if (Date.now() > deadline) throw new Error("no such webhook within 15 s");
    await new Promise((r) => { waiters.push(r); setTimeout(r, 200); });
  }
}

function chargeRequest(extId, amount = "25.90") {
  return { amount, external_id: extId, payer, payerQuestion: "Pedido SDK", postbackUrl: hookUrl, products: [{ name: "Camiseta", quantity: "1", price: amount }] };
}

let paid; // the charge paid by the first scenario, refunded later

test("a charge paid through the sandbox, its webhook verified", { skip }, async () => {
  const c = await pixgate.createCharge(chargeRequest(`ts-${run}-paid`));
  assert.equal(c.status, "PENDING");
  assert.equal(c.amount.centavos, 2590);
  assert.equal(c.lastResponse.status, 201);
  const pay = await pixgate.sandboxPayCharge(c.payment_id);
  assert.equal(pay.data.status, "PAID");
  const e = await waitEvent((x) => x.event === "pix.cashin.paid" && x.payment_id === c.payment_id);
  assert.equal(e.kind, "transaction");
  assert.ok(e.value instanceof Amount);
  assert.equal(e.value.toString(), "25.90");
  assert.equal(e.statusTransaction, "PAID");
  const tx = await pixgate.getTransaction({ payment_id: c.payment_id });
  assert.equal(tx.data.status, "PAID");
  assert.equal(tx.data.amount.centavos, 2590);
  paid = c;
});

test("a payout, settled, its webhook verified", { skip }, async () => {
  assert.ok(paid, "needs the paid charge");
  const key = newIdempotencyKey();
  const p = await pixgate.createPayout({
    amount: "3.10", description: "Saque SDK", creditParty: { keyType: "EMAIL", key: "merchant@example.com" }, callbackUrl: hookUrl, external_id: `ts-${run}-payout`,
  }, { idempotencyKey: key });
  assert.equal(p.amount.centavos, 310);
  assert.equal(p.lastResponse.idempotencyKey, key);
  const e = await waitEvent((x) => x.event === "pix.cashout.paid" && x.transaction_id === p.transaction_id);
  assert.equal(e.value.centavos, 310);
  const tx = await pixgate.getTransaction({ external_id: `ts-${run}-payout` });
  assert.equal(tx.data.type, "cashout");
  assert.equal(tx.data.status, "PAID");
});

/** tomorrowSP is the São Paulo date (UTC−3 all year) after today on the sandbox client's clock. */
async function tomorrowSP() {
  const now = Date.parse((await pixgate.sandboxGetClock()).data.now);
  return new Date(now - 3 * 3600e3 + 24 * 3600e3).toISOString().slice(0, 10);
}

test("a scheduled payout for tomorrow, cancelled, its pix.cashout.cancelled verified", { skip }, async () => {
  const date = await tomorrowSP();
  const p = await pixgate.createPayout({
    amount: "1.25", description: "Agendado SDK", creditParty: { keyType: "EMAIL", key: "merchant@example.com" },
    callbackUrl: hookUrl, external_id: `ts-${run}-sched-cancel`, scheduled_date: date,
  });
  assert.equal(p.status, "SCHEDULED");
  assert.equal(p.scheduled_date, date);
  const waiting = await pixgate.getTransaction({ payment_id: p.transaction_id });
  assert.equal(waiting.data.status, "PENDING");
  assert.equal(waiting.data.scheduled_date, date);
  const c = await pixgate.cancelPayout(p.transaction_id);
  assert.equal(c.data.status, "CANCELLED");
  assert.equal(c.data.amount.centavos, 125);
  const e = await waitEvent((x) => x.event === "pix.cashout.cancelled" && x.transaction_id === p.transaction_id);
  assert.equal(e.kind, "transaction");
  assert.equal(e.statusTransaction, "CANCELLED");
  assert.equal(e.value.centavos, 125);
  const again = await pixgate.cancelPayout(p.transaction_id).catch((x) => x);
  assert.ok(again instanceof UnprocessableEntityError, String(again));
  assert.equal(again.response.attempts, 1, "a cancel is never repeated");
});

test("a scheduled payout run now with the sandbox's run-schedule, then paid", { skip }, async () => {
  assert.ok(paid, "needs the paid charge's balance");
  const p = await pixgate.createPayout({
    amount: "1.40", description: "Agendado SDK", creditParty: { keyType: "EMAIL", key: "merchant@example.com" },
    callbackUrl: hookUrl, external_id: `ts-${run}-sched-run`, scheduled_date: await tomorrowSP(),
  });
  assert.equal(p.status, "SCHEDULED");
  const r = await pixgate.sandboxRunSchedule(p.transaction_id);
  assert.equal(r.data.status, "PENDING");
  const e = await waitEvent((x) => x.event === "pix.cashout.paid" && x.transaction_id === p.transaction_id);
  assert.equal(e.value.centavos, 140);
  assert.equal((await pixgate.getTransaction({ payment_id: p.transaction_id })).data.status, "PAID");
  const twice = await pixgate.sandboxRunSchedule(p.transaction_id).catch((x) => x);
  assert.ok(twice instanceof UnprocessableEntityError, String(twice));
});

test("a batch of three payouts, one rejected, replayed by its external_id and read back", { skip }, async () => {
  assert.ok(paid, "needs the paid charge's balance");
  const item = (n, key) => ({ amount: "1.05", description: `Lote SDK ${n}`, creditParty: { keyType: "EMAIL", key }, external_id: `ts-${run}-batch-${n}` });
  const req = { external_id: `ts-${run}-batch`, callbackUrl: hookUrl, items: [item(1, "a@example.com"), item(2, "not an e-mail"), item(3, "c@example.com")] };
  const b = await pixgate.createPayoutBatch(req);
  assert.equal(b.lastResponse.status, 202);
  assert.deepEqual([b.data.total, b.data.accepted, b.data.rejected], [3, 2, 1]);
  assert.deepEqual(b.data.items.map((x) => x.status), ["PENDING", "REJECTED", "PENDING"]);
  assert.equal(b.data.items[1].transaction_id, null);
  assert.equal(b.data.items[1].error.statusCode, 400);
  const replay = await pixgate.createPayoutBatch(req);
  assert.equal(replay.lastResponse.idempotentReplayed, true);
  assert.equal(replay.data.batch_id, b.data.batch_id);
  const done = await waitEvent((x) => x.event === "pix.batch.completed" && x.batch_id === b.data.batch_id);
  assert.equal(done.kind, "batch");
  assert.equal(done.statusTransaction, "COMPLETED");
  assert.deepEqual(done.counts, { PENDING: 0, SCHEDULED: 0, PAID: 2, CANCELLED: 0, REVERSED: 0, REJECTED: 1 });
  const got = await pixgate.getPayoutBatch(b.data.batch_id);
  assert.equal(got.data.external_id, req.external_id);
  assert.deepEqual(got.data.items.map((x) => [x.external_id, x.status]), [
    [`ts-${run}-batch-1`, "PAID"], [`ts-${run}-batch-2`, "REJECTED"], [`ts-${run}-batch-3`, "PAID"],
  ]);
  assert.equal(got.data.counts.PAID, 2);
  assert.equal(got.data.counts.REJECTED, 1);
  const tx = await pixgate.getTransaction({ payment_id: got.data.items[0].transaction_id });
  assert.equal(tx.data.amount.centavos, 105);
});

test("a refund of part of the paid charge", { skip }, async () => {
  assert.ok(paid, "needs the paid charge");
  const r = await pixgate.createRefund({ payment_id: paid.payment_id, amount: Amount.centavos(500), reason: "SDK test" });
  assert.equal(r.status, "PENDING");
  assert.equal(r.amount.toString(), "5.00");
  const e = await waitEvent((x) => x.event === "pix.refund.completed" && x.refund_id === r.refund_id);
  assert.equal(e.value.centavos, 500);
  const got = await pixgate.getRefund(r.refund_id);
  assert.equal(got.data.status, "COMPLETED");
  const list = await pixgate.listRefunds({ payment_id: paid.payment_id });
  assert.deepEqual(list.data.map((x) => x.refund_id), [r.refund_id]);
  const tx = await pixgate.getTransaction({ payment_id: paid.payment_id });
  assert.equal(tx.data.refunded_amount.centavos, 500);
});

test("a sub-account: created, acting with its own credentials, transfers to it and back, listed", { skip }, async () => {
  assert.ok(paid, "needs the paid charge's balance");
  const me = (await pixgate.getAccountMe()).data;
  assert.equal(me.parent_id, null);
  const req = { name: "Loja do João", document: "52998224725", external_id: `ts-${run}-seller` };
  const created = await pixgate.createAccount(req);
  assert.equal(created.lastResponse.status, 201);
  const acct = created.data;
  assert.equal(acct.parent_id, me.account_id);
  assert.match(acct.client_secret, /^sk_test_/);
  assert.match(acct.webhook_secret, /^whsec_/);
  assert.ok(!inspect(created, { depth: 5 }).includes(acct.client_secret), "console.log of the answer hides the client secret");
  assert.ok(!inspect(acct).includes(acct.webhook_secret), "and the webhook secret");
  const again = await pixgate.createAccount(req);
  assert.equal(again.lastResponse.idempotentReplayed, true);
  assert.equal(again.data.account_id, acct.account_id);
  assert.equal(again.data.client_secret, null);

  // The seller acts with its own credentials.
  let seller = new Pixgate({ baseUrl: env.PIXGATE_SDK_TEST_URL, clientId: acct.client_id, clientSecret: acct.client_secret });
  assert.deepEqual((await seller.getAccountMe()).data, { account_id: acct.account_id, parent_id: me.account_id, name: "Loja do João", document: "52998224725" });
  assert.equal((await seller.getBalance()).data.available_cents, 0);

  const key = newIdempotencyKey();
  const treq = { to_account_id: acct.account_id, amount: "2.00", description: "Repasse SDK" };
  const t = await pixgate.createTransfer(treq, { idempotencyKey: key });
  assert.equal(t.data.status, "COMPLETED");
  assert.equal(t.data.amount.centavos, 200);
  assert.equal(t.data.from_account_id, me.account_id);
  assert.equal(t.lastResponse.idempotencyKey, key);
  const replay = await pixgate.createTransfer(treq, { idempotencyKey: key });
  assert.equal(replay.lastResponse.idempotentReplayed, true);
  assert.equal(replay.data.transfer_id, t.data.transfer_id);
  assert.equal((await seller.getBalance()).data.available_cents, 200, "the replay moved nothing");
  const back = await seller.createTransfer({ to_account_id: me.account_id, amount: Amount.centavos(75), external_id: `ts-${run}-back` });
  assert.equal(back.data.to_account_id, me.account_id);
  assert.equal((await seller.getBalance()).data.available_cents, 125);
  assert.equal((await pixgate.getAccount(acct.account_id)).data.available_cents, 125);
  const rows = (await seller.listTransactions({ type: "transfer" })).data;
  assert.deepEqual(rows.map((x) => [x.direction, x.amount.centavos, x.counterparty_account_id]), [["out", 75, me.account_id], ["in", 200, me.account_id]]);
  const tooMuch = await seller.createTransfer({ to_account_id: me.account_id, amount: "1000.00" }).catch((x) => x);
  assert.ok(tooMuch instanceof UnprocessableEntityError && tooMuch.isInsufficientBalance, String(tooMuch));
  const nested = await seller.createAccount({ name: "Neta", document: "52998224725" }).catch((x) => x);
  assert.ok(nested instanceof UnprocessableEntityError, String(nested));

  // The parent lists its sub-accounts page by page, newest first.
  const second = (await pixgate.createAccount({ name: "Loja da Ana", document: "11222333000181", external_id: `ts-${run}-seller-2` })).data;
  let pages = 0;
  const counting = (q, o) => { pages++; return pixgate.listAccounts(q, o); };
  const listed = [];
  for await (const a of pixgate.paginate(counting, { limit: 1 })) listed.push(a.account_id);
  assert.ok(pages >= 2, `read ${pages} pages`);
  assert.deepEqual(listed.slice(0, 2), [second.account_id, acct.account_id]);
  const other = await seller.getAccount(second.account_id).catch((x) => x);
  assert.ok(other instanceof NotFoundError, "a sibling is not found");

  // A new secret: the old one stops at once.
  const rotated = await pixgate.rotateAccountSecret(acct.account_id);
  assert.notEqual(rotated.data.client_secret, acct.client_secret);
  assert.ok(!inspect(rotated, { depth: 5 }).includes(rotated.data.client_secret), "console.log hides the new secret");
  const old = await seller.getBalance().catch((x) => x);
  assert.ok(old instanceof AuthenticationError, String(old));
  seller = new Pixgate({ baseUrl: env.PIXGATE_SDK_TEST_URL, clientId: acct.client_id, clientSecret: rotated.data.client_secret });
  assert.equal((await seller.getBalance()).data.available_cents, 125);
});

test("paging: the iterator follows next_cursor over every page", { skip }, async () => {
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await pixgate.createCharge(chargeRequest(`ts-${run}-page-${i}`, `1.0${i + 1}`))).payment_id);
  const first = await pixgate.listTransactions({ type: "cashin", limit: 2 });
  assert.equal(first.data.length, 2);
  assert.ok(first.next_cursor, "a first page of 2 has a next page");
  const seen = [];
  let pages = 0;
  const counting = (q, o) => { pages++; return pixgate.listTransactions(q, o); };
  for await (const tx of pixgate.paginate(counting, { type: "cashin", limit: 2 })) seen.push(tx.payment_id);
  assert.ok(pages >= 3, `read ${pages} pages`);
  assert.equal(new Set(seen).size, seen.length, "no row twice");
  for (const id of ids) assert.ok(seen.includes(id), `charge ${id} listed`);
  assert.deepEqual(seen.slice(0, 5), [...ids].reverse(), "newest first");
});

test("an idempotent replay: same key and body, same charge", { skip }, async () => {
  const key = newIdempotencyKey();
  const req = chargeRequest(`ts-${run}-replay`, "7.77");
  const a = await pixgate.createCharge(req, { idempotencyKey: key });
  const b = await pixgate.createCharge(req, { idempotencyKey: key });
  assert.equal(a.lastResponse.idempotentReplayed, false);
  assert.equal(b.lastResponse.idempotentReplayed, true);
  assert.equal(b.payment_id, a.payment_id);
  assert.equal(b.amount.centavos, 777);
});

test("a 422 read as a typed error: a key reused with another body, and too little balance", { skip }, async () => {
  const key = newIdempotencyKey();
  await pixgate.createCharge(chargeRequest(`ts-${run}-mismatch`, "2.00"), { idempotencyKey: key });
  const e = await pixgate.createCharge(chargeRequest(`ts-${run}-mismatch`, "2.01"), { idempotencyKey: key }).catch((x) => x);
  assert.ok(e instanceof UnprocessableEntityError, String(e));
  assert.equal(e.status, 422);
  assert.ok(e.isIdempotencyMismatch, e.apiMessage);
  assert.equal(e.error, "Unprocessable Entity");
  const e2 = await pixgate.createPayout({
    amount: "999999", description: "too much", creditParty: { keyType: "EMAIL", key: "x@example.com" }, callbackUrl: hookUrl,
  }).catch((x) => x);
  assert.ok(e2 instanceof UnprocessableEntityError, String(e2));
  assert.ok(e2.isInsufficientBalance, e2.apiMessage);
  const e3 = await pixgate.getRefund("00000000-0000-4000-8000-000000000000").catch((x) => x);
  assert.ok(e3 instanceof NotFoundError, String(e3));
});

test("a 429 read as a typed error, with Retry-After", { skip }, async () => {
  const limited = new Pixgate({
    baseUrl: env.PIXGATE_SDK_TEST_LIMITED_URL, clientId: env.PIXGATE_SDK_TEST_LIMITED_CLIENT_ID,
    clientSecret: env.PIXGATE_SDK_TEST_LIMITED_CLIENT_SECRET, maxRetries: 0,
  });
  let err;
  for (let i = 0; i < 50 && !err; i++) err = await limited.getBalance().then(() => undefined, (e) => e);
  assert.ok(err instanceof RateLimitError, String(err));
  assert.equal(err.status, 429);
  assert.equal(err.apiMessage, "Rate limit exceeded");
  assert.ok(err.retryAfterSeconds > 0, `retry after ${err.retryAfterSeconds}`);
  assert.equal(err.response.rateLimit.remaining, 0);
});
