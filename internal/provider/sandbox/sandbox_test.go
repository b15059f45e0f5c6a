package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
)

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func TestTransferOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	accepted := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: accepted}
	p := sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: 2 * time.Second, Now: clk.Now})
	payout := func(key string) provider.Transfer {
		return provider.Transfer{ID: "0b7e5b1c-7f3e-4b53-9c55-6f2d8f7f0a11", Amount: 100, KeyType: pix.KeyEmail, Key: key, AcceptedAt: accepted}
	}
	refund := func(reason string) provider.Transfer {
		return provider.Transfer{ID: "1b7e5b1c-7f3e-4b53-9c55-6f2d8f7f0a11", Amount: 100, Description: reason, Refund: true, AcceptedAt: accepted}
	}
	cases := []struct {
		name   string
		t      provider.Transfer
		at     time.Duration // after acceptance
		status provider.Status
		readAt time.Duration // zero: none
	}{
		{"payout before its delay", payout("a@example.com"), time.Second, provider.Processing, 2 * time.Second},
		{"payout at its delay", payout("a@example.com"), 2 * time.Second, provider.Completed, 0},
		{"failing key", payout("x@FAIL.sandbox"), 2 * time.Second, provider.Failed, 0},
		{"returned key, first delay", payout("x@reverse.sandbox"), 2 * time.Second, provider.Completed, 4 * time.Second},
		{"returned key, second delay", payout("x@reverse.sandbox"), 4 * time.Second, provider.Returned, 0},
		{"refund", refund("customer asked"), 3 * time.Second, provider.Completed, 0},
		{"failing refund", refund(sandbox.FailRefundReason), 2 * time.Second, provider.Failed, 0},
		{"failing refund before its delay", refund(sandbox.FailRefundReason), 0, provider.Processing, 2 * time.Second},
	}
	for _, c := range cases {
		clk.t = accepted.Add(c.at)
		sent, err := p.Send(ctx, c.t)
		require.NoError(t, err, c.name)
		read, err := p.Status(ctx, c.t)
		require.NoError(t, err, c.name)
		require.Equal(t, sent, read, c.name+": Send and Status agree")
		require.Equal(t, c.status, read.Status, c.name)
		require.Equal(t, c.t.ID, read.ID, c.name)
		if c.readAt == 0 {
			require.True(t, read.ReadAt.IsZero(), c.name)
		} else {
			require.Equal(t, accepted.Add(c.readAt), read.ReadAt, c.name)
		}
		if read.Status == provider.Failed || read.Status == provider.Processing {
			require.Empty(t, read.EndToEndID, c.name)
		} else {
			require.True(t, provider.ValidEndToEnd(read.EndToEndID), c.name)
		}
	}
}

func TestPayIsConfirmed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife"})
	_, err := p.ConfirmPayment(ctx, "E00000000000000000000000000000AB")
	require.ErrorIs(t, err, provider.ErrNotFound)

	c := provider.Charge{TxID: "abcdefghijklmnopqrstuvwxy", Amount: 1050}
	paid, err := p.Pay(ctx, c)
	require.NoError(t, err)
	require.Equal(t, c.TxID, paid.TxID)
	require.Equal(t, c.Amount, paid.Amount)
	require.True(t, provider.ValidEndToEnd(paid.EndToEndID))

	confirmed, err := p.ConfirmPayment(ctx, paid.EndToEndID)
	require.NoError(t, err)
	require.Equal(t, paid, confirmed)
	listed, err := p.ChargePayments(ctx, c.TxID)
	require.NoError(t, err)
	require.Equal(t, []provider.Payment{paid}, listed)
	none, err := p.ChargePayments(ctx, "zzzzzzzzzzzzzzzzzzzzzzzzz")
	require.NoError(t, err)
	require.Empty(t, none)

	again, err := p.Pay(ctx, c)
	require.NoError(t, err)
	require.Equal(t, paid.EndToEndID, again.EndToEndID, "paying twice reports the same payment")
}

// TestDueChargeBRCode: a charge with a due date gets a static BR Code whose
// amount (field 54) is what it costs on the day it is created (São Paulo
// date), with its discount before the due date and its fine and interest
// after it; one created past its last day is refused.
func TestDueChargeBRCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{}
	p := sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Now: clk.Now})
	due := pix.Due{Date: pix.Date{Year: 2026, Month: 12, Day: 10}, DaysAfter: 30, Fine: pix.DueFine{PercentBP: 200}, InterestBP: 100,
		Discounts: []pix.DueDiscount{{Until: pix.Date{Year: 2026, Month: 12, Day: 1}, Amount: 5000}, {Until: pix.Date{Year: 2026, Month: 12, Day: 5}, Amount: 2000}}}
	c := provider.DueCharge{TxID: "abcdefghijklmnopqrstuvwxy", Amount: 100000, Due: due}
	for _, tc := range []struct {
		now  time.Time
		want int64
	}{
		// 02:59 UTC on Dec 2 is still Dec 1 in São Paulo: the first discount.
		{time.Date(2026, 12, 2, 2, 59, 0, 0, time.UTC), 95000},
		{time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC), 98000},
		{time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC), 100000},
		// 15 days late: a 2% fine and 15 days of 1% a month.
		{time.Date(2026, 12, 25, 12, 0, 0, 0, time.UTC), 102500},
	} {
		clk.t = tc.now
		code, err := p.CreateDueCharge(ctx, c)
		require.NoError(t, err)
		parsed, err := brcode.Parse(code)
		require.NoError(t, err)
		payload, err := parsed.Payload()
		require.NoError(t, err)
		require.Equal(t, tc.want, payload.Amount, tc.now)
		require.Equal(t, c.TxID, payload.TxID)
	}
	clk.t = time.Date(2027, 1, 10, 3, 0, 0, 0, time.UTC) // Jan 10 in São Paulo, after the last day
	_, err := p.CreateDueCharge(ctx, c)
	require.ErrorIs(t, err, provider.ErrRejected)
}
