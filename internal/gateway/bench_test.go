package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/store/sqlite"
	"github.com/pixgate/pixgate/internal/testkit"
)

func openBench(b *testing.B, kind string) *store.DB {
	b.Helper()
	ctx := context.Background()
	var db *store.DB
	var err error
	if kind == "sqlite" {
		db, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	} else {
		db, err = postgres.Open(ctx, testkit.PostgresURL(b), 32)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return db
}

func newService(b *testing.B, db *store.DB) (*gateway.Service, pix.Client) {
	b.Helper()
	gw, err := gateway.New(gateway.Config{DB: db, Env: "sandbox",
		ChargeTTL: 24 * time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: time.Hour})})
	if err != nil {
		b.Fatal(err)
	}
	cred, err := createClient(context.Background(), db, gw, clientParams{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := db.Client(context.Background(), cred.ClientID)
	if err != nil {
		b.Fatal(err)
	}
	return gw, c
}

// BenchmarkCreateCharge measures the whole charge use case — validation,
// idempotency check, BR Code, QR PNG and the database transaction — with
// 16 concurrent callers.
func BenchmarkCreateCharge(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := openBench(b, kind)
			gw, c := newService(b, db)
			var n atomic.Int64
			b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 callers
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ext := fmt.Sprint("bench-", n.Add(1))
					body := []byte(`{"external_id":"` + ext + `","amount":10.5}`)
					req := chargeRequest(ext)
					if _, _, err := gw.CreateCharge(context.Background(), c, gateway.Keyed(req, "", body)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCreatePayout measures the payout use case: validation, fee,
// idempotency and the reservation transaction (transaction row, balance
// update, two ledger entries), with 16 concurrent callers.
func BenchmarkCreatePayout(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := openBench(b, kind)
			gw, c := newService(b, db)
			// Fund the wallet generously through one paid charge.
			resp, _, err := gw.CreateCharge(context.Background(), c, gateway.Keyed(chargeRequestAmount("fund", "1000000"), "", []byte(`{"fund":1}`)))
			if err != nil {
				b.Fatal(err)
			}
			t, err := db.Transaction(context.Background(), c.ID, resp.PaymentID)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := gw.Sandbox().Pay(context.Background(), t); err != nil {
				b.Fatal(err)
			}
			var n atomic.Int64
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ext := fmt.Sprint("po-", n.Add(1))
					req := payoutRequest(ext)
					if _, _, err := gw.CreatePayout(context.Background(), c, gateway.Keyed(req, "", []byte(`{"external_id":"`+ext+`"}`))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// historyDepth is how deep BenchmarkHistoryDepth's deep page is.
const historyDepth = 1_000_000

// BenchmarkHistoryDepth compares a 100-row history page at the top of a
// client's history ("first") with the page that starts historyDepth rows
// deep ("deep"); the target is deep ≤ 2 × first. Keyset pagination
// makes both one range scan of the (client_id, created_at, id) index.
// Seeding the 10^6 rows takes tens of seconds per database.
func BenchmarkHistoryDepth(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			db := openBench(b, kind)
			gw, c := newService(b, db)
			total := historyDepth + 100
			// One statement on both databases: a recursive counter feeds
			// an INSERT … SELECT; row i is created at base+i ms.
			err := db.Write(ctx, func(tx *store.Tx) error {
				return store.RawExec(ctx, tx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
					INSERT INTO transactions (id, client_id, type, external_id, request_hash, status, amount, tax,
						refunded_amount, refund_pending, created_at, qrcode, callback_url, details)
					SELECT 'hist-' || i, $1, 'cashin', 'ext-' || i, 'h', 'PAID', 100 + i, 0, 0, 0, 1700000000000 + i, '', '', '{}'
					FROM n`, c.ID, total)
			})
			if err != nil {
				b.Fatal(err)
			}
			// The historyDepth-th newest row is number total-historyDepth+1;
			// the deep page holds the rows older than it.
			mark, err := db.TransactionByID(ctx, fmt.Sprint("hist-", total-historyDepth+1))
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range []struct {
				name, cursor, firstID string
			}{
				{"first", "", fmt.Sprint("hist-", total)},
				{"deep", store.CursorAfter(mark), fmt.Sprint("hist-", total-historyDepth)},
			} {
				b.Run(p.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						rows, _, err := gw.History(ctx, c, gateway.HistoryQuery{Limit: "100", Cursor: p.cursor})
						if err != nil {
							b.Fatal(err)
						}
						if len(rows) != 100 || rows[0].ID != p.firstID {
							b.Fatalf("page starts at %s with %d rows, want %s with 100", rows[0].ID, len(rows), p.firstID)
						}
					}
				})
			}
		})
	}
}
