"""Tests of the SDK's own parts that need no pixgate server: exact money, the
Standard Webhooks test vector, and the transport (retries, Retry-After,
redirects) against tiny local HTTP servers that misbehave on purpose."""

from __future__ import annotations

import json
import time
import unittest
from decimal import Decimal

import pixgate
from pixgate import _json

from ._local import LocalServer

JSON = {"Content-Type": "application/json"}
CHARGE = b'{"payment_id":"p","external_id":"e","amount":10.5,"qrcode":"q","qrcode_image":"i","status":"PENDING","expires_at":"x"}'
CHARGE_REQ = {"amount": "10.50", "external_id": "e", "payer": {}, "payerQuestion": "q", "postbackUrl": "http://x", "products": []}

# The Standard Webhooks reference test vector (the same as webhooksig's).
VEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VEC_TS = 1614265330
VEC_BODY = '{"test": 2432232314}'
VEC_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
OTHER_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"


def vec_headers(sig: str = VEC_SIG) -> dict:
    return {"webhook-id": VEC_ID, "webhook-timestamp": str(VEC_TS), "webhook-signature": sig}


class MoneyTest(unittest.TestCase):
    def test_amounts_are_exact(self) -> None:
        self.assertEqual(pixgate.reais("10.50"), Decimal("10.50"))
        self.assertEqual(pixgate.reais("1.500"), Decimal("1.50"))
        self.assertEqual(pixgate.centavos(2590), Decimal("25.90"))
        self.assertEqual(pixgate.to_centavos(Decimal("25.90")), 2590)
        with self.assertRaisesRegex(ValueError, "more than two decimals"):
            pixgate.reais("1.005")
        with self.assertRaises(ValueError):
            pixgate.reais("1,50")
        with self.assertRaises(TypeError):
            pixgate.centavos(10.5)  # type: ignore[arg-type]

    def test_encode_writes_numbers_from_text_and_refuses_floats(self) -> None:
        self.assertEqual(_json.encode({"amount": "10.50", "products": [{"price": pixgate.centavos(5)}], "n": 3}),
                         '{"amount":10.5,"products":[{"price":0.05}],"n":3}')
        self.assertEqual(_json.encode({"due": {"fine": {"percent": "2"}}}), '{"due":{"fine":{"percent":2}}}')
        for bad in (10.5, 10, True):
            with self.assertRaises(TypeError):
                _json.encode({"amount": bad})
        with self.assertRaises(TypeError):
            _json.encode({"products": [{"price": 0.1}]})

    def test_decode_reads_money_from_text(self) -> None:
        v = _json.decode('{"amount": 0.1, "note": "\\"amount\\": 1.23", "tax": 1e2, "list": [{"price": 12345678.91}], "paid_amount": null}')
        self.assertEqual(v["amount"], Decimal("0.10"))
        self.assertIsInstance(v["amount"], Decimal)
        self.assertEqual(v["note"], '"amount": 1.23')
        self.assertEqual(v["tax"], Decimal("100.00"))
        self.assertEqual(v["list"][0]["price"], Decimal("12345678.91"))
        self.assertIsNone(v["paid_amount"])
        with self.assertRaisesRegex(ValueError, "more than two decimals"):
            _json.decode('{"amount": 1.001}')


class WebhookTest(unittest.TestCase):
    def test_standard_webhooks_test_vector(self) -> None:
        pixgate.verify_webhook(VEC_SECRET, vec_headers(), VEC_BODY, now=VEC_TS)
        pixgate.verify_webhook(VEC_SECRET, vec_headers("v2,abc " + VEC_SIG), VEC_BODY.encode(), now=VEC_TS + 299)
        pixgate.verify_webhook([OTHER_SECRET, VEC_SECRET], vec_headers(), VEC_BODY, now=VEC_TS)

    def test_refuses_what_does_not_verify(self) -> None:
        cases = {
            "changed body": lambda: pixgate.verify_webhook(VEC_SECRET, vec_headers(), VEC_BODY + " ", now=VEC_TS),
            "other secret": lambda: pixgate.verify_webhook(OTHER_SECRET, vec_headers(), VEC_BODY, now=VEC_TS),
            "stale": lambda: pixgate.verify_webhook(VEC_SECRET, vec_headers(), VEC_BODY, now=VEC_TS + 301),
            "v2 only": lambda: pixgate.verify_webhook(VEC_SECRET, vec_headers(VEC_SIG.replace("v1,", "v2,")), VEC_BODY, now=VEC_TS),
            "no headers": lambda: pixgate.verify_webhook(VEC_SECRET, {"webhook-id": VEC_ID}, VEC_BODY, now=VEC_TS),
            "not an event": lambda: pixgate.construct_event(VEC_SECRET, vec_headers(), VEC_BODY, now=VEC_TS),
        }
        for name, f in cases.items():
            with self.subTest(name), self.assertRaises(pixgate.WebhookVerificationError):
                f()

    def test_parse_event_types_every_family(self) -> None:
        e = pixgate.parse_event('{"id":"e","event":"pix.cashin.paid","value":25.9,"tax":0.5,"payment_id":"p"}')
        self.assertIsInstance(e, pixgate.TransactionEvent)
        self.assertEqual(e.value, Decimal("25.90"))
        self.assertIsInstance(pixgate.parse_event('{"id":"e","event":"pix.recurrence.charge_failed","attempts":4}'), pixgate.RecurrenceEvent)
        d = pixgate.parse_event('{"id":"e","event":"pix.dispute.closed","amount":3.3,"returned_amount":0}')
        self.assertIsInstance(d, pixgate.DisputeEvent)
        self.assertEqual(d.amount, Decimal("3.30"))
        c = pixgate.parse_event('{"id":"e","event":"pix.cashout.cancelled","value":1.25,"statusTransaction":"CANCELLED"}')
        assert isinstance(c, pixgate.TransactionEvent), c
        self.assertEqual(c.value, Decimal("1.25"))
        b = pixgate.parse_event('{"id":"e","event":"pix.batch.completed","batch_id":"b","total":3,"accepted":2,'
                                '"rejected":1,"counts":{"PAID":2,"REJECTED":1}}')
        assert isinstance(b, pixgate.BatchEvent), b
        self.assertEqual((b.batch_id, b.total, b.rejected, b.counts["PAID"]), ("b", 3, 1, 2))
        s = pixgate.parse_event('{"id":"e","event":"pix.split.received","type":"split","payment_id":"p",'
                                '"source_payment_id":"c","value":9.8}')
        assert isinstance(s, pixgate.SplitEvent), s
        self.assertEqual((s.payment_id, s.source_payment_id, s.value), ("p", "c", Decimal("9.80")))
        ps = pixgate.parse_event('{"id":"e","event":"pix.cashin.paid","value":20,'
                                 '"splits":[{"account_id":"a","amount":9.8},{"account_id":"b","amount":null}]}')
        assert isinstance(ps, pixgate.TransactionEvent) and ps.splits is not None, ps
        self.assertEqual([x["amount"] for x in ps.splits], [Decimal("9.80"), None])
        self.assertIsInstance(pixgate.parse_event('{"id":"e","event":"webhook.test"}'), pixgate.TestEvent)
        self.assertIsInstance(pixgate.parse_event('{"id":"e","event":"pix.split.new"}'), pixgate.UnknownEvent)


class TransportTest(unittest.TestCase):
    def serve(self, handler) -> LocalServer:  # type: ignore[no-untyped-def]
        s = LocalServer(handler)
        self.addCleanup(s.close)
        return s

    def test_creation_keeps_its_key_across_retries(self) -> None:
        n = []

        def h(method, path, headers, body):  # type: ignore[no-untyped-def]
            n.append(1)
            if len(n) == 1:
                return 503, JSON, b'{"statusCode":503,"message":"Service temporarily unavailable","error":"Service Unavailable"}'
            if len(n) == 2:
                return None  # no answer at all
            return 201, JSON, CHARGE

        s = self.serve(h)
        p = pixgate.Pixgate(s.url, "id", "sk", backoff_base=0.001)
        c = p.create_charge(CHARGE_REQ)  # type: ignore[arg-type]
        keys = [r["idempotency-key"] for r in s.requests]
        self.assertEqual(len(keys), 3)
        self.assertRegex(keys[0], r"^[0-9a-f]{32}$")
        self.assertEqual(keys, [keys[0]] * 3)
        self.assertEqual(c.response.attempts, 3)
        self.assertEqual(c.response.idempotency_key, keys[0])
        self.assertEqual(c["amount"], Decimal("10.50"))

    def test_retries_run_out_into_a_retry_error_and_unsafe_calls_are_not_retried(self) -> None:
        s = self.serve(lambda *a: (500, JSON, b'{"statusCode":500,"message":"Internal server error","error":"Internal Server Error"}'))
        p = pixgate.Pixgate(s.url, "id", "sk", backoff_base=0.001, max_retries=2)
        with self.assertRaises(pixgate.RetryError) as cm:
            p.create_payout({"amount": "1", "description": "d", "creditParty": {"keyType": "EVP", "key": "k"}, "callbackUrl": "http://x"},
                            idempotency_key="k-1")
        self.assertEqual(cm.exception.idempotency_key, "k-1")
        self.assertEqual(cm.exception.attempts, 3)
        self.assertIsInstance(cm.exception.last_error, pixgate.ServerError)
        self.assertEqual(len(s.requests), 3)
        with self.assertRaises(pixgate.ServerError):
            p.retry_delivery("evt")
        self.assertEqual(len(s.requests), 4)

    def test_a_sub_account_is_retried_only_with_an_external_id_and_its_secrets_are_not_shown(self) -> None:
        account = (b'{"statusCode":201,"data":{"account_id":"a","client_id":"c","client_secret":"sk_test_s",'
                   b'"webhook_secret":"whsec_w","name":"n","document":"52998224725","external_id":"s-1","parent_id":"p"}}')
        s = self.serve(lambda *a: None if len(s.requests) % 2 == 1 else (201, JSON, account))
        p = pixgate.Pixgate(s.url, "id", "sk", backoff_base=0.001)
        a = p.create_account({"name": "n", "document": "52998224725", "external_id": "s-1"})
        self.assertEqual(a.response.attempts, 2)
        self.assertEqual(a["data"]["client_secret"], "sk_test_s")
        self.assertNotIn("sk_test_s", repr(a))
        self.assertNotIn("whsec_w", str(a["data"]))
        self.assertEqual([r.get("idempotency-key") for r in s.requests], [None, None])
        with self.assertRaises(pixgate.APIConnectionError):
            p.create_account({"name": "n", "document": "52998224725"})
        self.assertEqual(len(s.requests), 3, "without external_id a repeat would make a second account")

    def test_a_429_is_waited_out_for_retry_after(self) -> None:
        n = []

        def h(*a):  # type: ignore[no-untyped-def]
            n.append(1)
            if len(n) == 1:
                return 429, {**JSON, "Retry-After": "1"}, b'{"statusCode":429,"message":"Rate limit exceeded","error":"Too Many Requests","retryAfter":1}'
            return 200, JSON, b'{"statusCode":200,"message":"ok","data":{"available_cents":1},"timestamp":"x"}'

        s = self.serve(h)
        t0 = time.monotonic()
        b = pixgate.Pixgate(s.url, "id", "sk").get_balance()
        self.assertGreaterEqual(time.monotonic() - t0, 0.95)
        self.assertEqual(b.response.attempts, 2)
        n.clear()
        with self.assertRaises(pixgate.RateLimitError) as cm:
            pixgate.Pixgate(s.url, "id", "sk", max_retries=0).get_balance()
        self.assertEqual(cm.exception.retry_after, 1)

    def test_the_secret_is_never_sent_after_a_redirect_nor_shown(self) -> None:
        other = self.serve(lambda *a: (200, JSON, b"{}"))
        base = self.serve(lambda *a: (307, {"Location": other.url + "/api/v1/wallet/balance"}, b""))
        p = pixgate.Pixgate(base.url, "id", "sk_test_SECRET")
        with self.assertRaises(pixgate.RedirectError) as cm:
            p.get_balance()
        self.assertEqual(cm.exception.status, 307)
        with self.assertRaises(pixgate.RedirectError):
            p.create_charge(CHARGE_REQ)  # type: ignore[arg-type]
        self.assertEqual(other.requests, [])
        for shown in (repr(p), str(p), str(cm.exception), repr(cm.exception), repr(cm.exception.__dict__)):
            self.assertNotIn("sk_test_SECRET", shown)


if __name__ == "__main__":
    unittest.main()
