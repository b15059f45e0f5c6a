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

func newService(b *testing.B, db *store.DB) (*gateway.Service, store.Client) {
	b.Helper()
	gw := gateway.New(db, "sandbox", gateway.Merchant{PixKey: "pix@pixgate.dev", Name: "Loja", City: "Recife"},
		24*time.Hour, time.Hour, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	cred, err := gw.CreateClient(context.Background(), gateway.ClientParams{Name: "bench"})
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
					if _, _, err := gw.CreateCharge(context.Background(), c, req, body); err != nil {
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
			resp, _, err := gw.CreateCharge(context.Background(), c, chargeRequestAmount("fund", "1000000"), []byte(`{"fund":1}`))
			if err != nil {
				b.Fatal(err)
			}
			t, err := db.Transaction(context.Background(), c.ID, resp.PaymentID)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := gw.ReceivePayment(context.Background(), sandboxPayment(t)); err != nil {
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
					if _, _, err := gw.CreatePayout(context.Background(), c, req, "", []byte(`{"external_id":"`+ext+`"}`)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
