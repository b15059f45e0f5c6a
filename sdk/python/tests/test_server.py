"""The scenarios every SDK runs against a real `pixgate serve` (sandbox, SQLite),
started by sdk/test.sh, which passes its address and the sandbox client's
credentials in PIXGATE_SDK_TEST_*: a charge paid through the sandbox with its
webhook verified, a payout, a scheduled payout cancelled and one run now, a
batch of payouts, a refund, a sub-account acting with its own
credentials and transfers to it and back, paging, an idempotent replay, a 422
and a 429 read as typed errors."""

from __future__ import annotations

import os
import secrets
import threading
import time
import unittest
from datetime import datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, List, Optional

import pixgate
import pixgate.types

KEYS = ["URL", "CLIENT_ID", "CLIENT_SECRET", "WEBHOOK_SECRET", "LIMITED_URL", "LIMITED_CLIENT_ID", "LIMITED_CLIENT_SECRET"]
ENV = {k: os.environ.get("PIXGATE_SDK_TEST_" + k, "") for k in KEYS}
MISSING = [k for k, v in ENV.items() if not v]
if MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"PIXGATE_SDK_TEST_* unset ({', '.join(MISSING)}): run bash sdk/test.sh")

RUN = secrets.token_hex(4)
PAYER = {
    "name": "Maria Souza", "document": "52998224725", "phoneNumber": "11987654321", "email": "maria@example.com",
    "address": {"street": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo",
                "state": "SP", "zipCode": "01001000"},
}


class Receiver:
    """A tiny webhook receiver: it verifies each delivery (401 for a bad signature) and keeps the events."""

    def __init__(self, secret: str) -> None:
        self.events: List[pixgate.WebhookEvent] = []
        self._cv = threading.Condition()
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    e = pixgate.construct_event(secret, self.headers, body)
                except pixgate.WebhookVerificationError:
                    self.send_response(401)
                    self.end_headers()
                    return
                with outer._cv:
                    outer.events.append(e)
                    outer._cv.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self._srv.server_address[1]}/webhooks/pix"
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()

    def wait(self, pred: Callable[[pixgate.WebhookEvent], bool], timeout: float = 15) -> pixgate.WebhookEvent:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for e in self.events:
                    if pred(e):
                        return e
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no such webhook within {timeout} s")
                self._cv.wait(left)

    def close(self) -> None:
        self._srv.shutdown()
        self._srv.server_close()


@unittest.skipIf(MISSING, "no pixgate server: run bash sdk/test.sh")
class ServerScenarios(unittest.TestCase):
    """The scenarios run in order (test_1…, test_2…): the later ones use the first's paid charge."""

    pixgate: pixgate.Pixgate
    receiver: Receiver
    paid: Optional[dict] = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.pixgate = pixgate.Pixgate(ENV["URL"], ENV["CLIENT_ID"], ENV["CLIENT_SECRET"])
        cls.receiver = Receiver(ENV["WEBHOOK_SECRET"])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.receiver.close()

    def charge_request(self, ext: str, amount: str = "25.90") -> dict:
        return {"amount": amount, "external_id": ext, "payer": PAYER, "payerQuestion": "Pedido SDK",
                "postbackUrl": self.receiver.url, "products": [{"name": "Camiseta", "quantity": "1", "price": amount}]}

    def test_1_charge_paid_through_the_sandbox_webhook_verified(self) -> None:
        c = self.pixgate.create_charge(self.charge_request(f"py-{RUN}-paid"))  # type: ignore[arg-type]
        self.assertEqual(c["status"], "PENDING")
        self.assertEqual(c["amount"], Decimal("25.90"))
        self.assertEqual(c.response.status, 201)
        self.assertEqual(self.pixgate.sandbox_pay_charge(c["payment_id"])["data"]["status"], "PAID")
        e = self.receiver.wait(lambda x: x.event == "pix.cashin.paid" and x.data.get("payment_id") == c["payment_id"])
        self.assertIsInstance(e, pixgate.TransactionEvent)
        assert isinstance(e, pixgate.TransactionEvent)
        self.assertEqual(e.value, Decimal("25.90"))
        self.assertEqual(e.status_transaction, "PAID")
        tx = self.pixgate.get_transaction(payment_id=c["payment_id"])
        self.assertEqual(tx["data"]["status"], "PAID")
        self.assertEqual(tx["data"]["amount"], Decimal("25.90"))
        type(self).paid = c

    def test_2_payout_settled_webhook_verified(self) -> None:
        self.assertIsNotNone(self.paid, "needs the paid charge")
        key = pixgate.new_idempotency_key()
        p = self.pixgate.create_payout({
            "amount": "3.10", "description": "Saque SDK", "creditParty": {"keyType": "EMAIL", "key": "merchant@example.com"},
            "callbackUrl": self.receiver.url, "external_id": f"py-{RUN}-payout",
        }, idempotency_key=key)
        self.assertEqual(p["amount"], Decimal("3.10"))
        self.assertEqual(p.response.idempotency_key, key)
        e = self.receiver.wait(lambda x: x.event == "pix.cashout.paid" and x.data.get("transaction_id") == p["transaction_id"])
        self.assertEqual(e.data["value"], Decimal("3.10"))
        tx = self.pixgate.get_transaction(external_id=f"py-{RUN}-payout")
        self.assertEqual((tx["data"]["type"], tx["data"]["status"]), ("cashout", "PAID"))

    def tomorrow_sp(self) -> str:
        """The São Paulo date (UTC-3 all year) after today on the sandbox client's clock."""
        # The first 19 characters (to the second, UTC) parse on every Python 3.9+.
        now = datetime.strptime(self.pixgate.sandbox_get_clock()["data"]["now"][:19], "%Y-%m-%dT%H:%M:%S")
        return (now - timedelta(hours=3) + timedelta(days=1)).date().isoformat()

    def test_2b_scheduled_payout_for_tomorrow_cancelled_webhook_verified(self) -> None:
        date = self.tomorrow_sp()
        p = self.pixgate.create_payout({
            "amount": "1.25", "description": "Agendado SDK", "creditParty": {"keyType": "EMAIL", "key": "merchant@example.com"},
            "callbackUrl": self.receiver.url, "external_id": f"py-{RUN}-sched-cancel", "scheduled_date": date,
        })
        self.assertEqual((p["status"], p["scheduled_date"]), ("SCHEDULED", date))
        waiting = self.pixgate.get_transaction(payment_id=p["transaction_id"])["data"]
        self.assertEqual((waiting["status"], waiting["scheduled_date"]), ("PENDING", date))
        c = self.pixgate.cancel_payout(p["transaction_id"])
        self.assertEqual(c["data"]["status"], "CANCELLED")
        self.assertEqual(c["data"]["amount"], Decimal("1.25"))
        e = self.receiver.wait(lambda x: x.event == "pix.cashout.cancelled" and x.data.get("transaction_id") == p["transaction_id"])
        assert isinstance(e, pixgate.TransactionEvent), e
        self.assertEqual((e.status_transaction, e.value), ("CANCELLED", Decimal("1.25")))
        with self.assertRaises(pixgate.UnprocessableEntityError) as cm:
            self.pixgate.cancel_payout(p["transaction_id"])
        self.assertEqual(cm.exception.response.attempts, 1, "a cancel is never repeated")

    def test_2c_scheduled_payout_run_now_with_run_schedule_then_paid(self) -> None:
        self.assertIsNotNone(self.paid, "needs the paid charge's balance")
        p = self.pixgate.create_payout({
            "amount": "1.40", "description": "Agendado SDK", "creditParty": {"keyType": "EMAIL", "key": "merchant@example.com"},
            "callbackUrl": self.receiver.url, "external_id": f"py-{RUN}-sched-run", "scheduled_date": self.tomorrow_sp(),
        })
        self.assertEqual(p["status"], "SCHEDULED")
        self.assertEqual(self.pixgate.sandbox_run_schedule(p["transaction_id"])["data"]["status"], "PENDING")
        e = self.receiver.wait(lambda x: x.event == "pix.cashout.paid" and x.data.get("transaction_id") == p["transaction_id"])
        self.assertEqual(e.data["value"], Decimal("1.40"))
        self.assertEqual(self.pixgate.get_transaction(payment_id=p["transaction_id"])["data"]["status"], "PAID")
        with self.assertRaises(pixgate.UnprocessableEntityError):
            self.pixgate.sandbox_run_schedule(p["transaction_id"])

    def test_2d_batch_of_three_one_rejected_replayed_and_read_back(self) -> None:
        self.assertIsNotNone(self.paid, "needs the paid charge's balance")

        def item(n: int, key: str) -> pixgate.types.PayoutBatchItem:
            return {"amount": "1.05", "description": f"Lote SDK {n}", "creditParty": {"keyType": "EMAIL", "key": key},
                    "external_id": f"py-{RUN}-batch-{n}"}

        req: pixgate.types.PayoutBatchRequest = {
            "external_id": f"py-{RUN}-batch", "callbackUrl": self.receiver.url,
            "items": [item(1, "a@example.com"), item(2, "not an e-mail"), item(3, "c@example.com")],
        }
        b = self.pixgate.create_payout_batch(req)
        self.assertEqual(b.response.status, 202)
        d = b["data"]
        self.assertEqual((d["total"], d["accepted"], d["rejected"]), (3, 2, 1))
        self.assertEqual([x["status"] for x in d["items"]], ["PENDING", "REJECTED", "PENDING"])
        self.assertIsNone(d["items"][1]["transaction_id"])
        self.assertEqual(d["items"][1]["error"]["statusCode"], 400)
        replay = self.pixgate.create_payout_batch(req)
        self.assertTrue(replay.response.idempotent_replayed)
        self.assertEqual(replay["data"]["batch_id"], d["batch_id"])
        done = self.receiver.wait(lambda x: x.event == "pix.batch.completed" and x.data.get("batch_id") == d["batch_id"])
        assert isinstance(done, pixgate.BatchEvent), done
        self.assertEqual(done.status_transaction, "COMPLETED")
        self.assertEqual(done.counts, {"PENDING": 0, "SCHEDULED": 0, "PAID": 2, "CANCELLED": 0, "REVERSED": 0, "REJECTED": 1})
        got = self.pixgate.get_payout_batch(d["batch_id"])["data"]
        self.assertEqual(got["external_id"], req["external_id"])
        self.assertEqual([(x["external_id"], x["status"]) for x in got["items"]],
                         [(f"py-{RUN}-batch-1", "PAID"), (f"py-{RUN}-batch-2", "REJECTED"), (f"py-{RUN}-batch-3", "PAID")])
        self.assertEqual((got["counts"]["PAID"], got["counts"]["REJECTED"]), (2, 1))
        tx = self.pixgate.get_transaction(payment_id=got["items"][0]["transaction_id"])
        self.assertEqual(tx["data"]["amount"], Decimal("1.05"))

    def test_3_refund_of_part_of_the_paid_charge(self) -> None:
        assert self.paid is not None, "needs the paid charge"
        r = self.pixgate.create_refund({"payment_id": self.paid["payment_id"], "amount": pixgate.centavos(500), "reason": "SDK test"})
        self.assertEqual(r["status"], "PENDING")
        self.assertEqual(r["amount"], Decimal("5.00"))
        e = self.receiver.wait(lambda x: x.event == "pix.refund.completed" and x.data.get("refund_id") == r["refund_id"])
        self.assertEqual(e.data["value"], Decimal("5.00"))
        self.assertEqual(self.pixgate.get_refund(r["refund_id"])["data"]["status"], "COMPLETED")
        listed = self.pixgate.list_refunds(payment_id=self.paid["payment_id"])
        self.assertEqual([x["refund_id"] for x in listed["data"]], [r["refund_id"]])
        tx = self.pixgate.get_transaction(payment_id=self.paid["payment_id"])
        self.assertEqual(tx["data"]["refunded_amount"], Decimal("5.00"))

    def test_3b_sub_account_with_its_own_credentials_transfers_to_it_and_back_listed(self) -> None:
        self.assertIsNotNone(self.paid, "needs the paid charge's balance")
        me = self.pixgate.get_account_me()["data"]
        self.assertIsNone(me["parent_id"])
        req = {"name": "Loja do João", "document": "52998224725", "external_id": f"py-{RUN}-seller"}
        created = self.pixgate.create_account(req)  # type: ignore[arg-type]
        self.assertEqual(created.response.status, 201)
        acct = created["data"]
        self.assertEqual(acct["parent_id"], me["account_id"])
        self.assertTrue(acct["client_secret"].startswith("sk_test_"))
        self.assertTrue(acct["webhook_secret"].startswith("whsec_"))
        self.assertNotIn(acct["client_secret"], repr(created), "repr of the answer hides the client secret")
        self.assertNotIn(acct["webhook_secret"], repr(acct), "and the webhook secret")
        again = self.pixgate.create_account(req)  # type: ignore[arg-type]
        self.assertTrue(again.response.idempotent_replayed)
        self.assertEqual(again["data"]["account_id"], acct["account_id"])
        self.assertIsNone(again["data"]["client_secret"])

        # The seller acts with its own credentials.
        seller = pixgate.Pixgate(ENV["URL"], acct["client_id"], acct["client_secret"])
        self.assertEqual(dict(seller.get_account_me()["data"]), {"account_id": acct["account_id"], "parent_id": me["account_id"],
                                                                 "name": "Loja do João", "document": "52998224725"})
        self.assertEqual(seller.get_balance()["data"]["available_cents"], 0)

        key = pixgate.new_idempotency_key()
        treq = {"to_account_id": acct["account_id"], "amount": "2.00", "description": "Repasse SDK"}
        t = self.pixgate.create_transfer(treq, idempotency_key=key)  # type: ignore[arg-type]
        self.assertEqual(t["data"]["status"], "COMPLETED")
        self.assertEqual(t["data"]["amount"], Decimal("2.00"))
        self.assertEqual(t["data"]["from_account_id"], me["account_id"])
        self.assertEqual(t.response.idempotency_key, key)
        replay = self.pixgate.create_transfer(treq, idempotency_key=key)  # type: ignore[arg-type]
        self.assertTrue(replay.response.idempotent_replayed)
        self.assertEqual(replay["data"]["transfer_id"], t["data"]["transfer_id"])
        self.assertEqual(seller.get_balance()["data"]["available_cents"], 200, "the replay moved nothing")
        back = seller.create_transfer({"to_account_id": me["account_id"], "amount": pixgate.centavos(75), "external_id": f"py-{RUN}-back"})
        self.assertEqual(back["data"]["to_account_id"], me["account_id"])
        self.assertEqual(seller.get_balance()["data"]["available_cents"], 125)
        self.assertEqual(self.pixgate.get_account(acct["account_id"])["data"]["available_cents"], 125)
        rows = seller.list_transactions(type="transfer")["data"]
        self.assertEqual([(x["direction"], x["amount"], x["counterparty_account_id"]) for x in rows],
                         [("out", Decimal("0.75"), me["account_id"]), ("in", Decimal("2.00"), me["account_id"])])
        with self.assertRaises(pixgate.UnprocessableEntityError) as cm:
            seller.create_transfer({"to_account_id": me["account_id"], "amount": "1000.00"})
        self.assertTrue(cm.exception.is_insufficient_balance, cm.exception.message)
        with self.assertRaises(pixgate.UnprocessableEntityError):
            seller.create_account({"name": "Neta", "document": "52998224725"})

        # The parent lists its sub-accounts page by page, newest first.
        second = self.pixgate.create_account({"name": "Loja da Ana", "document": "11222333000181",
                                              "external_id": f"py-{RUN}-seller-2"})["data"]
        pages = []

        def counting(**q):  # type: ignore[no-untyped-def]
            pages.append(1)
            return self.pixgate.list_accounts(**q)

        listed = [a["account_id"] for a in self.pixgate.paginate(counting, limit=1)]
        self.assertGreaterEqual(len(pages), 2)
        self.assertEqual(listed[:2], [second["account_id"], acct["account_id"]])
        with self.assertRaises(pixgate.NotFoundError):
            seller.get_account(second["account_id"])  # a sibling

        # A new secret: the old one stops at once.
        rotated = self.pixgate.rotate_account_secret(acct["account_id"])
        new_secret = rotated["data"]["client_secret"]
        self.assertNotEqual(new_secret, acct["client_secret"])
        self.assertNotIn(new_secret, repr(rotated))
        with self.assertRaises(pixgate.AuthenticationError):
            seller.get_balance()
        seller = pixgate.Pixgate(ENV["URL"], acct["client_id"], new_secret)
        self.assertEqual(seller.get_balance()["data"]["available_cents"], 125)

    def test_4_paging_follows_next_cursor_over_every_page(self) -> None:
        ids = [self.pixgate.create_charge(self.charge_request(f"py-{RUN}-page-{i}", f"1.0{i + 1}"))["payment_id"]  # type: ignore[arg-type]
               for i in range(5)]
        first = self.pixgate.list_transactions(type="cashin", limit=2)
        self.assertEqual(len(first["data"]), 2)
        self.assertTrue(first["next_cursor"])
        pages = []

        def counting(**q):  # type: ignore[no-untyped-def]
            pages.append(1)
            return self.pixgate.list_transactions(**q)

        seen = [tx["payment_id"] for tx in self.pixgate.paginate(counting, type="cashin", limit=2)]
        self.assertGreaterEqual(len(pages), 3)
        self.assertEqual(len(set(seen)), len(seen), "no row twice")
        for i in ids:
            self.assertIn(i, seen)
        self.assertEqual(seen[:5], ids[::-1], "newest first")

    def test_5_idempotent_replay(self) -> None:
        key = pixgate.new_idempotency_key()
        req = self.charge_request(f"py-{RUN}-replay", "7.77")
        a = self.pixgate.create_charge(req, idempotency_key=key)  # type: ignore[arg-type]
        b = self.pixgate.create_charge(req, idempotency_key=key)  # type: ignore[arg-type]
        self.assertFalse(a.response.idempotent_replayed)
        self.assertTrue(b.response.idempotent_replayed)
        self.assertEqual(b["payment_id"], a["payment_id"])
        self.assertEqual(b["amount"], Decimal("7.77"))

    def test_6_a_422_read_as_a_typed_error(self) -> None:
        key = pixgate.new_idempotency_key()
        self.pixgate.create_charge(self.charge_request(f"py-{RUN}-mismatch", "2.00"), idempotency_key=key)  # type: ignore[arg-type]
        with self.assertRaises(pixgate.UnprocessableEntityError) as cm:
            self.pixgate.create_charge(self.charge_request(f"py-{RUN}-mismatch", "2.01"), idempotency_key=key)  # type: ignore[arg-type]
        self.assertEqual(cm.exception.status, 422)
        self.assertTrue(cm.exception.is_idempotency_mismatch, cm.exception.message)
        self.assertEqual(cm.exception.error, "Unprocessable Entity")
        with self.assertRaises(pixgate.UnprocessableEntityError) as cm2:
            self.pixgate.create_payout({"amount": "999999", "description": "too much",
                                        "creditParty": {"keyType": "EMAIL", "key": "x@example.com"}, "callbackUrl": self.receiver.url})
        self.assertTrue(cm2.exception.is_insufficient_balance, cm2.exception.message)
        with self.assertRaises(pixgate.NotFoundError):
            self.pixgate.get_refund("00000000-0000-4000-8000-000000000000")

    def test_7_a_429_read_as_a_typed_error(self) -> None:
        limited = pixgate.Pixgate(ENV["LIMITED_URL"], ENV["LIMITED_CLIENT_ID"], ENV["LIMITED_CLIENT_SECRET"], max_retries=0)
        err: Optional[pixgate.RateLimitError] = None
        for _ in range(50):
            try:
                limited.get_balance()
            except pixgate.RateLimitError as e:
                err = e
                break
        assert err is not None, "no 429 in 50 requests"
        self.assertEqual(err.status, 429)
        self.assertEqual(err.message, "Rate limit exceeded")
        self.assertGreater(err.retry_after, 0)
        self.assertEqual(err.response.rate_limit.remaining, 0)


if __name__ == "__main__":
    unittest.main()
