package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/pixgate/pixgate/client"
)

// A charge, then a payout, then every payout in the history.
func Example() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("PIXGATE_CLIENT_ID"), os.Getenv("PIXGATE_CLIENT_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	charge, err := c.CreateCharge(ctx, client.ChargeRequest{
		Amount: client.Reais("10.50"), ExternalID: "order-1001", PayerQuestion: "Pedido 1001",
		PostbackURL: "https://merchant.example.com/webhooks/pix",
		Payer: client.Payer{Name: "Maria da Silva", Document: "52998224725", PhoneNumber: "11987654321",
			Email: "maria@example.com", Address: client.Address{Street: "Avenida Paulista", Number: "1000",
				Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", ZipCode: "01310100"}},
		Products: []client.Product{{Name: "Camiseta", Quantity: "1", Price: client.Reais("10.50")}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pay with:", charge.QRCode, "requests left:", charge.RateLimit.Remaining)

	payout, err := c.CreatePayout(ctx, client.PayoutRequest{
		Amount: client.Centavos(2500), Description: "Pagamento fornecedor 77",
		CreditParty: client.CreditParty{Name: "João Souza", KeyType: client.KeyEmail, Key: "joao@example.com"},
		CallbackURL: "https://merchant.example.com/webhooks/pix", ExternalID: "payout-77",
	})
	switch {
	case client.IsInsufficientBalance(err):
		fmt.Println("not enough balance:", err)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("payout", payout.TransactionID, payout.Amount, "+ tax", payout.Tax)
	}

	for tx, err := range c.History(ctx, client.HistoryQuery{Type: client.TypeCashout, Limit: 100}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tx.PaymentID, tx.Status, tx.Amount)
	}
}

// A payout that can be repeated safely: its Idempotency-Key is chosen and
// stored before the call, and sent again, never replaced, while the outcome
// is unknown.
func ExampleClient_CreatePayout() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("PIXGATE_CLIENT_ID"), os.Getenv("PIXGATE_CLIENT_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	// In a real program the key is saved with the order (in the same
	// database transaction) before the call, and read back after a restart.
	key := client.NewIdempotencyKey()
	req := client.PayoutRequest{
		Amount: client.Reais("25.00"), Description: "Pagamento fornecedor 78",
		CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "joao@example.com"},
		CallbackURL: "https://merchant.example.com/webhooks/pix", IdempotencyKey: key,
	}
	payout, err := c.CreatePayout(ctx, req)
	for client.AsRetryError(err) != nil {
		// Unknown outcome: the payout may exist. Repeat with the same key
		// (the error's Key is key): the server replays it if it does,
		// creates it once if it does not.
		fmt.Println("payout outcome unknown; sending it again with the same key")
		time.Sleep(time.Minute)
		payout, err = c.CreatePayout(ctx, req)
	}
	if err != nil {
		log.Fatal(err) // settled: nothing was created (400, 422, …)
	}
	fmt.Println("payout", payout.TransactionID, "replayed:", payout.IdempotentReplayed)
}

// A webhook receiver that dispatches events by type.
func ExampleWebhookHandler() {
	h, err := client.WebhookHandler(os.Getenv("PIXGATE_WEBHOOK_SECRET"), client.EventHandlers{
		OnCashinPaid: func(ctx context.Context, e client.Event) error {
			// Deduplicate on e.ID, then mark the order e.ExternalID paid.
			fmt.Println("paid:", e.PaymentID, e.Value)
			return nil
		},
		OnCashoutFailed: func(ctx context.Context, e client.Event) error {
			fmt.Println("payout failed:", e.TransactionID)
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("POST /webhooks/pixgate", h)
}

// A monthly subscription (Pix Automático): the payer scans QRCode once to
// authorize it; each cycle is then debited on its due date and reported by
// webhook.
func ExampleClient_CreateRecurrence() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("PIXGATE_CLIENT_ID"), os.Getenv("PIXGATE_CLIENT_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	rec, err := c.CreateRecurrence(ctx, client.RecurrenceRequest{
		ExternalID: "sub-1001",
		Payer:      client.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
		Contract:   "CTR-1001", Description: "Plano mensal",
		Frequency: client.FrequencyMonthly, StartDate: "2026-12-10", EndDate: "2027-12-10",
		Amount: client.Reais("49.90"), Retry: client.RetryThreeInSevenDays,
		PostbackURL: "https://merchant.example.com/webhooks/pix",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("show the payer:", rec.QRCode)

	h, err := client.WebhookHandler(os.Getenv("PIXGATE_WEBHOOK_SECRET"), client.EventHandlers{
		OnRecurrenceApproved: func(ctx context.Context, e client.Event) error {
			fmt.Println("authorized:", e.RecurrenceID)
			return nil
		},
		OnCashinPaid: func(ctx context.Context, e client.Event) error {
			if e.RecurrenceID != "" {
				fmt.Println("cycle paid:", e.RecurrenceID, e.PaymentID, e.Value)
			}
			return nil
		},
		OnRecurrenceChargeFailed: func(ctx context.Context, e client.Event) error {
			fmt.Println("cycle failed after", e.Attempts, "attempts:", e.PaymentID)
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("POST /webhooks/pixgate", h)
}
